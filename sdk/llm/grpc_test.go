package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

type echo struct {
	protocol.ConfigureDefaults
	schema *llm.JSONSchema
}

func (e *echo) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "echo", Version: "0.0.1", Capabilities: []string{protocol.CapabilityStreaming}}, nil
}

func (e *echo) Chat(_ context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	e.schema = req.ResponseSchema
	for _, w := range strings.Fields(req.Messages[len(req.Messages)-1].Content) {
		if err := stream.Send(&llm.ChatChunk{Delta: w + " "}); err != nil {
			return err
		}
	}
	return stream.Send(&llm.ChatChunk{FinishReason: llm.FinishStop, Model: "echo-1", Usage: &llm.Usage{PromptTokens: 3, CompletionTokens: 3},
		Metadata: map[string]string{"method": "echo"}})
}

func (e *echo) Embed(_ context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	if len(req.Inputs) == 0 {
		return nil, protocol.BadRequest("no inputs")
	}
	out := &llm.EmbedResponse{Model: "echo-embed", Dimension: 2}
	for _, in := range req.Inputs {
		out.Vectors = append(out.Vectors, []float32{float32(len(in)), 1})
	}
	return out, nil
}

func (e *echo) Models(context.Context, *llm.ModelsRequest) (*llm.ModelsResponse, error) {
	return &llm.ModelsResponse{Models: []llm.Model{{ID: "echo-1", Chat: true, JSONSchema: true}, {ID: "echo-embed", Embedding: true, EmbeddingDimension: 2}}}, nil
}

func connect(t *testing.T, impl llm.Provider) llm.Provider {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"llm": &llm.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("llm")
	require.NoError(t, err)
	return raw.(llm.Provider)
}

func TestChatStreamsAndCollects(t *testing.T) {
	t.Parallel()
	e := &echo{}
	p := connect(t, e)
	var deltas []string
	err := p.Chat(t.Context(), &llm.ChatRequest{
		Messages:       []llm.Message{{Role: llm.RoleUser, Content: "one two three"}},
		ResponseSchema: &llm.JSONSchema{Name: "s", Schema: []byte(`{"type":"object"}`), Strict: true},
	}, llm.ChatStreamFunc(func(c *llm.ChatChunk) error { deltas = append(deltas, c.Delta); return nil }))
	require.NoError(t, err)
	require.Equal(t, []string{"one ", "two ", "three ", ""}, deltas)
	require.Equal(t, &llm.JSONSchema{Name: "s", Schema: []byte(`{"type":"object"}`), Strict: true}, e.schema)

	resp, err := llm.Collect(t.Context(), p, &llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "a b"}}})
	require.NoError(t, err)
	require.Equal(t, "a b ", resp.Text)
	require.Equal(t, llm.FinishStop, resp.FinishReason)
	require.Equal(t, "echo", resp.Metadata["method"])
	require.Equal(t, &llm.Usage{PromptTokens: 3, CompletionTokens: 3}, resp.Usage)
}

func TestEmbedAndModels(t *testing.T) {
	t.Parallel()
	p := connect(t, &echo{})
	emb, err := p.Embed(t.Context(), &llm.EmbedRequest{Inputs: []string{"ab", "abc"}})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{2, 1}, {3, 1}}, emb.Vectors)
	require.Equal(t, 2, emb.Dimension)

	_, err = p.Embed(t.Context(), &llm.EmbedRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)

	models, err := p.Models(t.Context(), &llm.ModelsRequest{})
	require.NoError(t, err)
	require.Len(t, models.Models, 2)
	require.True(t, models.Models[1].Embedding)
}
