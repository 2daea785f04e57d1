package vectorstore

import (
	"context"

	"github.com/google/uuid"
)

// Mirrored writes to Truth (the embedded store, PostgreSQL) first and then to
// Index (Qdrant), and searches Index. PostgreSQL keeps every vector, so Index can be
// dropped and rebuilt from it.
type Mirrored struct {
	Truth Store
	Index Store
}

var _ Store = Mirrored{}

// Upsert writes to Truth, then Index.
func (m Mirrored) Upsert(ctx context.Context, model string, items []Item) error {
	if err := m.Truth.Upsert(ctx, model, items); err != nil {
		return err
	}
	return m.Index.Upsert(ctx, model, items)
}

// Delete deletes from Truth, then Index.
func (m Mirrored) Delete(ctx context.Context, model string, chunkIDs []uuid.UUID) error {
	if err := m.Truth.Delete(ctx, model, chunkIDs); err != nil {
		return err
	}
	return m.Index.Delete(ctx, model, chunkIDs)
}

// DeletePaper deletes from Truth, then Index.
func (m Mirrored) DeletePaper(ctx context.Context, paperID uuid.UUID) error {
	if err := m.Truth.DeletePaper(ctx, paperID); err != nil {
		return err
	}
	return m.Index.DeletePaper(ctx, paperID)
}

// Search asks Index.
func (m Mirrored) Search(ctx context.Context, model string, query []float32, k int, f Filter) ([]Hit, error) {
	return m.Index.Search(ctx, model, query, k, f)
}
