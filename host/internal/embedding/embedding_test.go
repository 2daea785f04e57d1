package embedding_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// short answers one vector too few: a provider breaking the contract.
type short struct{ llm.Provider }

func (s short) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	resp, err := s.Provider.Embed(ctx, req)
	if err == nil {
		resp.Vectors = resp.Vectors[1:]
	}
	return resp, err
}

func TestProviderEmbedsInOrderAndChecksTheCount(t *testing.T) {
	p := embedding.Provider{P: extractive.New(nil), Name: "lectern-lexical-v2-384"}
	res, err := p.Embed(context.Background(), []string{"attention relates tokens", "spaced repetition schedules reviews"})
	require.NoError(t, err)
	require.Equal(t, "lectern-lexical-v2-384", res.Model)
	v := res.Vectors
	require.Len(t, v, 2)
	require.Len(t, v[0], 384)
	require.NotEqual(t, v[0], v[1])

	_, err = embedding.Provider{P: short{extractive.New(nil)}, Name: "lectern-lexical-v2-384"}.Embed(context.Background(), []string{"a b c", "d e f"})
	require.ErrorContains(t, err, "1 vectors for 2 texts")
	_, err = p.Embed(context.Background(), nil)
	require.Error(t, err, "no inputs is the provider's bad request")
}
