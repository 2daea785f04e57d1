package llmgw

import (
	"context"
	"fmt"

	"github.com/lectern-research/lectern/host/internal/embedding"
)

// Embedder embeds passages and questions with the embed role's model; it is the
// embedding.Embedder the ingest worker and the retriever use.
type Embedder struct{ G *Gateway }

var _ embedding.Embedder = Embedder{}

// VectorModel is the name stored with the vectors of an embed assignment: the
// builtin model's own name, or provider/model. Vectors of different names never
// meet; changing the role re-embeds the corpus (embeddings.reembed).
func VectorModel(a Assignment) string {
	if a.Provider == Builtin {
		return a.Model
	}
	return a.Provider + "/" + a.Model
}

// Embed resolves the embed role once and returns one vector per text, named by
// the model of that resolution (VectorModel): a role reassigned during the call
// cannot rename the vectors it made.
func (e Embedder) Embed(ctx context.Context, texts []string) (embedding.Result, error) {
	b, err := e.G.Resolve(ctx, RoleEmbed)
	if err != nil {
		return embedding.Result{}, err
	}
	resp, err := b.Embed(ctx, texts)
	if err != nil {
		return embedding.Result{}, fmt.Errorf("llmgw: embed with %s/%s: %w", b.Provider, b.Assigned, err)
	}
	if len(resp.Vectors) != len(texts) {
		return embedding.Result{}, fmt.Errorf("llmgw: embed with %s/%s: %d vectors for %d texts", b.Provider, b.Assigned, len(resp.Vectors), len(texts))
	}
	return embedding.Result{Model: VectorModel(Assignment{Role: b.Role, Provider: b.Provider, Model: b.Assigned}), Vectors: resp.Vectors}, nil
}

// Model is the name Embed would store its vectors under now (VectorModel of the
// embed role's assignment), for callers that remember vectors by model
// (embedding.Cache).
func (e Embedder) Model(ctx context.Context) (string, error) {
	a, err := e.G.Assignment(ctx, RoleEmbed)
	if err != nil {
		return "", err
	}
	return VectorModel(a), nil
}
