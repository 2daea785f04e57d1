package llmgw

import (
	"context"
	"fmt"
	"time"
)

// Embedder embeds passages and questions with the embed role's model; it is the
// embedding.Embedder the ingest worker and the retriever use.
type Embedder struct{ G *Gateway }

// Model names the vectors the embed role makes now: the builtin model's own name,
// or provider/model. Vectors of different names never meet; changing the role
// re-embeds the corpus (embeddings.reembed).
func (e Embedder) Model() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := e.G.Assignment(ctx, RoleEmbed)
	if err != nil {
		e.G.cfg.Logger.Warn("embed role unreadable; naming vectors by the builtin model", "error", err)
		return BuiltinEmbedModel
	}
	return VectorModel(a)
}

// VectorModel is the name stored with the vectors of an embed assignment.
func VectorModel(a Assignment) string {
	if a.Provider == Builtin {
		return a.Model
	}
	return a.Provider + "/" + a.Model
}

// Embed returns one vector per text.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	b, err := e.G.Resolve(ctx, RoleEmbed)
	if err != nil {
		return nil, err
	}
	resp, err := b.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("llmgw: embed with %s/%s: %w", b.Provider, b.Assigned, err)
	}
	if len(resp.Vectors) != len(texts) {
		return nil, fmt.Errorf("llmgw: embed with %s/%s: %d vectors for %d texts", b.Provider, b.Assigned, len(resp.Vectors), len(texts))
	}
	return resp.Vectors, nil
}
