package embedded

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The queries of embeddings.reembed: which passages have no vector of a model yet,
// and dropping the vectors of every other model. chunk_embeddings is the record of
// the vectors whichever store serves searches (a Qdrant store mirrors into it), so
// these run on it directly.

// Unembedded is a passage without a vector of some model.
type Unembedded struct {
	ChunkID, PaperID uuid.UUID
	Text             string
}

// CountUnembedded says how many passages have no vector of model.
func CountUnembedded(ctx context.Context, pool *pgxpool.Pool, model string) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `
		SELECT count(*) FROM paper_chunks c
		 WHERE NOT EXISTS (SELECT 1 FROM chunk_embeddings e WHERE e.chunk_id = c.id AND e.model = $1)`, model).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("embedded: count passages without vectors: %w", err)
	}
	return n, nil
}

// NextUnembedded returns up to limit passages without a vector of model, in id
// order.
func NextUnembedded(ctx context.Context, pool *pgxpool.Pool, model string, limit int) ([]Unembedded, error) {
	rows, err := pool.Query(ctx, `
		SELECT c.id, c.paper_id, c.content FROM paper_chunks c
		 WHERE NOT EXISTS (SELECT 1 FROM chunk_embeddings e WHERE e.chunk_id = c.id AND e.model = $1)
		 ORDER BY c.id LIMIT $2`, model, limit)
	if err != nil {
		return nil, fmt.Errorf("embedded: passages without vectors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Unembedded, error) {
		var u Unembedded
		return u, r.Scan(&u.ChunkID, &u.PaperID, &u.Text)
	})
	if err != nil {
		return nil, fmt.Errorf("embedded: passages without vectors: %w", err)
	}
	return out, nil
}

// DropOtherModels deletes every vector not of model and says how many went.
func DropOtherModels(ctx context.Context, pool *pgxpool.Pool, model string) (int64, error) {
	tag, err := pool.Exec(ctx, `DELETE FROM chunk_embeddings WHERE model <> $1`, model)
	if err != nil {
		return 0, fmt.Errorf("embedded: drop old vectors: %w", err)
	}
	return tag.RowsAffected(), nil
}
