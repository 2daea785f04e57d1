// Package embedding turns passages into vectors for the vector store. Embedder is what
// ingest and retrieval call; the host's one implementation is llmgw.Embedder, the
// embed role's model behind the LLM gateway (by default the builtin plugin's
// lexical embedding, plugins/llm/builtin). Provider adapts any LLM provider, for
// tools and tests that call one directly.
package embedding

import (
	"context"
	"fmt"

	"github.com/lectern-research/lectern/sdk/llm"
)

// Embedder embeds texts with one model.
type Embedder interface {
	// Model names the embedding model; vectors of different models never meet.
	Model() string
	// Embed returns one vector per text, in order, all of one dimension.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Provider is an Embedder over an LLM provider's Embed call with a fixed model.
type Provider struct {
	P llm.Provider
	// Name is the model asked for and the name its vectors are stored under.
	Name string
}

// Model returns p.Name.
func (p Provider) Model() string { return p.Name }

// Embed calls the provider.
func (p Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := p.P.Embed(ctx, &llm.EmbedRequest{Model: p.Name, Inputs: texts})
	if err != nil {
		return nil, fmt.Errorf("embedding: %s: %w", p.Name, err)
	}
	if len(resp.Vectors) != len(texts) {
		return nil, fmt.Errorf("embedding: %s: %d vectors for %d texts", p.Name, len(resp.Vectors), len(texts))
	}
	return resp.Vectors, nil
}
