// Package embedding turns passages into vectors for the vector store. Embedder is
// what ingest and retrieval call; the host's one implementation is llmgw.Embedder,
// the embed role's model behind the LLM gateway (by default the builtin plugin's
// lexical embedding, plugins/llm/builtin). Provider adapts any LLM provider, for
// tools and tests that call one directly.
//
// An embedding call names the model that made its vectors: the embed role may be
// reassigned at any moment, so a caller stores and searches under the model of the
// call it holds, never under a name asked for separately.
package embedding

import (
	"context"
	"fmt"

	"github.com/lectern-research/lectern/sdk/llm"
)

// Embedder embeds texts.
type Embedder interface {
	// Embed returns one vector per text, in order, all of one dimension, with the
	// name of the model that made them. Vectors of different models never meet:
	// store and search them under Result.Model. It returns ctx's error when ctx is
	// cancelled.
	Embed(ctx context.Context, texts []string) (Result, error)
}

// Result is what one Embed call made.
type Result struct {
	// Model names the model that made Vectors: the name they are stored and
	// searched under.
	Model string
	// Vectors holds one vector per text, in order.
	Vectors [][]float32
}

// Provider is an Embedder over an LLM provider's Embed call with a fixed model.
type Provider struct {
	P llm.Provider
	// Name is the model asked for and the name its vectors are stored under.
	Name string
}

var _ Embedder = Provider{}

// Embed calls the provider.
func (p Provider) Embed(ctx context.Context, texts []string) (Result, error) {
	resp, err := p.P.Embed(ctx, &llm.EmbedRequest{Model: p.Name, Inputs: texts})
	if err != nil {
		return Result{}, fmt.Errorf("embedding: %s: %w", p.Name, err)
	}
	if len(resp.Vectors) != len(texts) {
		return Result{}, fmt.Errorf("embedding: %s: %d vectors for %d texts", p.Name, len(resp.Vectors), len(texts))
	}
	return Result{Model: p.Name, Vectors: resp.Vectors}, nil
}
