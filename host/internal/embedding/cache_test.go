package embedding_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// counting is the builtin model under a name that can be reassigned, counting
// the texts it is asked to embed.
type counting struct {
	name  string
	texts int
}

func (c *counting) Embed(ctx context.Context, texts []string) (embedding.Result, error) {
	c.texts += len(texts)
	r, err := embedding.Provider{P: extractive.New(nil), Name: "lectern-lexical-v2-384"}.Embed(ctx, texts)
	r.Model = c.name
	if c.name != "lectern-lexical-v2-384" {
		for _, v := range r.Vectors {
			v[0] += 1 // another model's vectors differ
		}
	}
	return r, err
}

func (c *counting) model(context.Context) (string, error) { return c.name, nil }

func TestCacheEmbedsOnlyNewTextsAndNeverServesAnotherModelsVectors(t *testing.T) {
	ctx := context.Background()
	next := &counting{name: "lectern-lexical-v2-384"}
	cache, err := embedding.NewCache(next, next.model, 100)
	require.NoError(t, err)

	first, err := cache.Embed(ctx, []string{"attention relates tokens", "spaced repetition schedules reviews"})
	require.NoError(t, err)
	require.Equal(t, 2, next.texts)

	again, err := cache.Embed(ctx, []string{"spaced repetition schedules reviews", "a new abstract on retrieval", "attention relates tokens"})
	require.NoError(t, err)
	require.Equal(t, 3, next.texts, "only the new text reaches the model")
	require.Equal(t, "lectern-lexical-v2-384", again.Model)
	require.Equal(t, first.Vectors[1], again.Vectors[0])
	require.Equal(t, first.Vectors[0], again.Vectors[2])
	direct, err := embedding.Provider{P: extractive.New(nil), Name: "lectern-lexical-v2-384"}.Embed(ctx, []string{"a new abstract on retrieval"})
	require.NoError(t, err)
	require.Equal(t, direct.Vectors[0], again.Vectors[1])

	again.Vectors[0][0] = 42 // the caller's copy: the cache keeps its own
	third, err := cache.Embed(ctx, []string{"spaced repetition schedules reviews"})
	require.NoError(t, err)
	require.Equal(t, first.Vectors[1], third.Vectors[0])

	next.name = "openai/text-embedding-3-small"
	moved, err := cache.Embed(ctx, []string{"attention relates tokens"})
	require.NoError(t, err)
	require.Equal(t, "openai/text-embedding-3-small", moved.Model)
	require.NotEqual(t, first.Vectors[0], moved.Vectors[0], "a reassigned role gets its own model's vector, not the remembered one")
	require.Equal(t, 4, next.texts)
}

func TestCacheKeepsNothingWhenTheRoleMovesDuringACall(t *testing.T) {
	ctx := context.Background()
	next := &counting{name: "openai/text-embedding-3-small"}
	stale := func(context.Context) (string, error) { return "lectern-lexical-v2-384", nil }
	cache, err := embedding.NewCache(next, stale, 100)
	require.NoError(t, err)
	r, err := cache.Embed(ctx, []string{"attention relates tokens"})
	require.NoError(t, err)
	require.Equal(t, "openai/text-embedding-3-small", r.Model, "the vectors are named by the model that made them")
	_, err = cache.Embed(ctx, []string{"attention relates tokens"})
	require.NoError(t, err)
	require.Equal(t, 4, next.texts, "nothing was remembered under the name asked for before the call")
}
