package embedded_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
)

// TestAStoreFollowsAnotherHostsWrites: two stores on one database stand for
// two hosts (a worker writes, an API host searches). The searching store loaded
// its partition once; every later write of the other store, a new vector, a
// replaced one, a deleted one, a removed paper (vectors gone by cascade), shows
// in its very next search, with no wait.
func TestAStoreFollowsAnotherHostsWrites(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	writer := withChunks{Store: embedded.New(pool), pool: pool, t: t}
	reader := embedded.New(pool)
	p1, p2 := uuid.New(), uuid.New()
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	require.NoError(t, writer.Upsert(ctx, "m", []vectorstore.Item{{ChunkID: a, PaperID: p1, Vector: []float32{1, 0, 0}}}))

	search := func(q []float32) []uuid.UUID {
		t.Helper()
		hits, err := reader.Search(ctx, "m", q, 10, vectorstore.Filter{})
		require.NoError(t, err)
		ids := make([]uuid.UUID, len(hits))
		for i, h := range hits {
			ids[i] = h.ChunkID
		}
		return ids
	}
	require.Equal(t, []uuid.UUID{a}, search([]float32{1, 0, 0}), "the reader loads the partition")

	require.NoError(t, writer.Upsert(ctx, "m", []vectorstore.Item{
		{ChunkID: b, PaperID: p1, Vector: []float32{0, 1, 0}},
		{ChunkID: c, PaperID: p2, Vector: []float32{0, 0, 1}},
	}))
	require.Equal(t, c, search([]float32{0, 0, 1})[0], "a new vector shows at once")
	require.Len(t, search([]float32{1, 1, 1}), 3)

	// a now points where c does; b is deleted.
	require.NoError(t, writer.Upsert(ctx, "m", []vectorstore.Item{{ChunkID: a, PaperID: p1, Vector: []float32{0, 0.1, 1}}}))
	require.NoError(t, writer.Delete(ctx, "m", []uuid.UUID{b}))
	hits, err := reader.Search(ctx, "m", []float32{0, 0, 1}, 10, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "the deleted vector is gone")
	require.InDelta(t, 0.995, hits[1].Score, 0.001, "the replaced vector is searched with its new value")
	require.Equal(t, a, hits[1].ChunkID)

	// Removing a paper removes its vectors by cascade, which the log notes too.
	_, err = pool.Exec(ctx, `DELETE FROM papers WHERE id = $1`, p2)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{a}, search([]float32{0, 0, 1}))
}

// TestAStoreSeesAWriteThatCommitsAfterItsRead: a write whose transaction began
// before the reader's search and commits after it is seen by the next search.
// The reader resumes the log from the xmin of its last snapshot, not from the
// newest transaction id it saw, since ids are handed out when transactions
// begin, not when they commit.
func TestAStoreSeesAWriteThatCommitsAfterItsRead(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	writer := withChunks{Store: embedded.New(pool), pool: pool, t: t}
	reader := embedded.New(pool)
	paper, early, late := uuid.New(), uuid.New(), uuid.New()
	require.NoError(t, writer.Upsert(ctx, "m", []vectorstore.Item{{ChunkID: early, PaperID: paper, Vector: []float32{1, 0}}}))
	makeChunks := func(id uuid.UUID) {
		_, err := pool.Exec(ctx, `
			INSERT INTO paper_chunks (id, paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, 1, 'text', 1, 1, 0, 4, 1)`, id, paper)
		require.NoError(t, err)
	}
	makeChunks(late)

	// A slow writer: its transaction holds an id from before the reader's reads.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `INSERT INTO chunk_embeddings (chunk_id, model, dimension, vector) VALUES ($1, 'm', 2, '{0,1}')`, late)
	require.NoError(t, err)

	hits, err := reader.Search(ctx, "m", []float32{0, 1}, 10, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "not committed yet")
	// A faster writer commits after the slow one began: the log now holds a
	// newer transaction id than the slow writer's.
	require.NoError(t, writer.Upsert(ctx, "m", []vectorstore.Item{{ChunkID: early, PaperID: paper, Vector: []float32{1, 0.01}}}))
	hits, err = reader.Search(ctx, "m", []float32{0, 1}, 10, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1)

	require.NoError(t, tx.Commit(ctx))
	hits, err = reader.Search(ctx, "m", []float32{0, 1}, 10, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "the slow writer's vector shows once it commits")
	require.Equal(t, late, hits[0].ChunkID)
}
