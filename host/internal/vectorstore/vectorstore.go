// Package vectorstore keeps chunk embeddings searchable by similarity. PostgreSQL's
// chunk_embeddings table is the source of truth for every implementation: an index
// (the embedded in-process one, or Qdrant) can always be rebuilt from it.
//
// Vectors are compared by cosine similarity; a Hit's Score is the cosine, higher is
// closer. Every call names the embedding model, so vectors of different models (and
// dimensions) never meet: Qdrant keeps a collection per model, the embedded store a
// partition per model.
package vectorstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Item is one chunk's vector with the payload searches filter on.
type Item struct {
	ChunkID uuid.UUID
	PaperID uuid.UUID
	Vector  []float32
}

// Filter narrows a search. An empty filter matches everything in the model.
type Filter struct {
	// PaperIDs, when not empty, keeps only chunks of these papers.
	PaperIDs []uuid.UUID
}

// Hit is one search result.
type Hit struct {
	ChunkID uuid.UUID
	PaperID uuid.UUID
	Score   float32
}

// Store is a vector index. Implementations are safe for concurrent use.
type Store interface {
	// Upsert adds or replaces the vectors of items under model. Every vector must
	// have the same dimension as the model's existing vectors.
	Upsert(ctx context.Context, model string, items []Item) error
	// Delete removes the vectors of these chunks under model; unknown ids are ignored.
	Delete(ctx context.Context, model string, chunkIDs []uuid.UUID) error
	// DeletePaper removes every vector of a paper under every model.
	DeletePaper(ctx context.Context, paperID uuid.UUID) error
	// Search returns at most k hits nearest to query, best first.
	Search(ctx context.Context, model string, query []float32, k int, f Filter) ([]Hit, error)
}

// ErrDimension is returned when a vector's dimension differs from the model's.
var ErrDimension = errors.New("vectorstore: vector dimension does not match the model")

// ErrInvalid is returned for an empty model name, an empty vector or k < 1.
var ErrInvalid = errors.New("vectorstore: invalid argument")

// Validate checks the arguments every implementation refuses alike.
func validate(model string, vectors ...[]float32) error {
	if model == "" || len(model) > 200 {
		return fmt.Errorf("%w: the model name must be 1 to 200 characters", ErrInvalid)
	}
	for _, v := range vectors {
		if len(v) == 0 || len(v) > 16384 {
			return fmt.Errorf("%w: a vector must have 1 to 16384 dimensions, not %d", ErrInvalid, len(v))
		}
	}
	return nil
}

// ValidateUpsert checks an Upsert's arguments: model name, non-empty vectors of one
// dimension. Implementations call it first.
func ValidateUpsert(model string, items []Item) error {
	for i, it := range items {
		if err := validate(model, it.Vector); err != nil {
			return err
		}
		if len(it.Vector) != len(items[0].Vector) {
			return fmt.Errorf("%w: item %d has %d dimensions, item 0 has %d", ErrDimension, i, len(it.Vector), len(items[0].Vector))
		}
	}
	return validate(model)
}

// ValidateSearch checks a Search's arguments.
func ValidateSearch(model string, query []float32, k int) error {
	if k < 1 {
		return fmt.Errorf("%w: k must be at least 1", ErrInvalid)
	}
	return validate(model, query)
}
