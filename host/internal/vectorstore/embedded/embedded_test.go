package embedded_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/host/internal/vectorstore/storetest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// withChunks creates the paper and chunk rows the contract's items name before
// they reach the store: the embedded store refuses vectors of chunks that do not
// exist, which Qdrant cannot know about.
type withChunks struct {
	*embedded.Store
	pool *pgxpool.Pool
	t    *testing.T
}

func (w withChunks) Upsert(ctx context.Context, model string, items []vectorstore.Item) error {
	for _, it := range items {
		_, err := w.pool.Exec(ctx, `
			INSERT INTO papers (id, title, source) VALUES ($1, 'Contract paper', 'test')
			ON CONFLICT DO NOTHING`, it.PaperID)
		require.NoError(w.t, err)
		_, err = w.pool.Exec(ctx, `
			INSERT INTO paper_chunks (id, paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, (SELECT count(*) FROM paper_chunks WHERE paper_id = $2), 'text', 1, 1, 0, 4, 1)
			ON CONFLICT DO NOTHING`, it.ChunkID, it.PaperID)
		require.NoError(w.t, err)
	}
	return w.Store.Upsert(ctx, model, items)
}

func TestContract(t *testing.T) {
	pool := dbtest.NewDB(t)
	storetest.Run(t, withChunks{Store: embedded.New(pool), pool: pool, t: t})
}

func TestPostgresIsTheSourceOfTruth(t *testing.T) {
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	first := withChunks{Store: embedded.New(pool), pool: pool, t: t}
	p, a, b := uuid.New(), uuid.New(), uuid.New()
	require.NoError(t, first.Upsert(ctx, "m", []vectorstore.Item{
		{ChunkID: a, PaperID: p, Vector: []float32{1, 0}},
		{ChunkID: b, PaperID: p, Vector: []float32{0, 1}},
	}))

	// A fresh store (a restart) rebuilds its index from PostgreSQL.
	second := embedded.New(pool)
	hits, err := second.Search(ctx, "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	require.Equal(t, b, hits[0].ChunkID)

	// Deleting the paper cascades to its chunks and their vectors.
	_, err = pool.Exec(ctx, `DELETE FROM papers WHERE id = $1`, p)
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM chunk_embeddings`).Scan(&n))
	require.Zero(t, n)
}

func TestRefusesVectorsOfUnknownChunks(t *testing.T) {
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	s := withChunks{Store: embedded.New(pool), pool: pool, t: t}
	p, a := uuid.New(), uuid.New()
	require.NoError(t, s.Upsert(ctx, "m", []vectorstore.Item{{ChunkID: a, PaperID: p, Vector: []float32{1, 0}}}))

	// The second item names a chunk that does not exist: nothing of the batch is written.
	err := s.Store.Upsert(ctx, "m", []vectorstore.Item{
		{ChunkID: a, PaperID: p, Vector: []float32{0, 1}},
		{ChunkID: uuid.New(), PaperID: p, Vector: []float32{0, 1}},
	})
	require.ErrorIs(t, err, vectorstore.ErrInvalid)
	hits, err := embedded.New(pool).Search(ctx, "m", []float32{1, 0}, 5, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.InDelta(t, 1.0, hits[0].Score, 1e-6, "the refused batch did not replace the vector")
}
