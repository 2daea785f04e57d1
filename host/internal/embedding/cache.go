package embedding

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache is an Embedder that remembers the vectors it made, by model and text, so
// a caller that embeds the same texts again and again asks the model only for the
// new ones. Pulse does: every recommendation and every deck embeds the user's
// library and the recent candidates, which change a little from one day to the
// next.
//
// The current model is asked before every call, so a reassigned embed role
// never gets a vector of the old model: entries of another model simply stop
// matching and age out.
type Cache struct {
	next    Embedder
	model   func(context.Context) (string, error)
	entries *lru.Cache[cacheKey, []float32]
}

type cacheKey struct {
	model string
	text  [sha256.Size]byte
}

var _ Embedder = (*Cache)(nil)

// NewCache remembers up to size vectors of next. model names the model next would
// embed with now (llmgw.Embedder.Model). Memory is size × dimension × 4 bytes:
// 16,384 vectors of 384 dimensions take 25 MB.
func NewCache(next Embedder, model func(context.Context) (string, error), size int) (*Cache, error) {
	entries, err := lru.New[cacheKey, []float32](size)
	if err != nil {
		return nil, fmt.Errorf("embedding: cache of %d vectors: %w", size, err)
	}
	return &Cache{next: next, model: model, entries: entries}, nil
}

// Embed returns the remembered vectors and embeds the rest in one call to next.
// The vectors are the caller's own copies.
func (c *Cache) Embed(ctx context.Context, texts []string) (Result, error) {
	model, err := c.model(ctx)
	if err != nil {
		return c.next.Embed(ctx, texts)
	}
	out := make([][]float32, len(texts))
	keys := make([]cacheKey, len(texts))
	var missing []int
	for i, t := range texts {
		keys[i] = cacheKey{model: model, text: sha256.Sum256([]byte(t))}
		if v, ok := c.entries.Get(keys[i]); ok {
			out[i] = slices.Clone(v)
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return Result{Model: model, Vectors: out}, nil
	}
	ask := make([]string, len(missing))
	for j, i := range missing {
		ask[j] = texts[i]
	}
	r, err := c.next.Embed(ctx, ask)
	if err != nil {
		return Result{}, err
	}
	if r.Model != model {
		// The role was reassigned between the two questions: the remembered
		// vectors are of the old model, so embed everything anew and keep nothing.
		return c.next.Embed(ctx, texts)
	}
	for j, i := range missing {
		out[i] = r.Vectors[j]
		c.entries.Add(keys[i], slices.Clone(r.Vectors[j]))
	}
	return Result{Model: model, Vectors: out}, nil
}
