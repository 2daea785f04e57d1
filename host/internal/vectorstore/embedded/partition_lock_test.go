package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// storeWithVectors is a store over a fresh database holding one paper with a
// passage per vector, its partition loaded by a first search.
func storeWithVectors(t *testing.T, vectors ...[]float32) (*Store, *pgxpool.Pool, []uuid.UUID) {
	t.Helper()
	pool := dbtest.NewDB(t)
	s := NewWithOpts(pool, Opts{Dir: t.TempDir()})
	ids := addVectors(t, s, pool, vectors...)
	_, err := s.Search(t.Context(), "m", vectors[0], 1, vectorstore.Filter{})
	require.NoError(t, err)
	return s, pool, ids
}

// addVectors stores each vector as a passage of a new paper, through s.
func addVectors(t *testing.T, s *Store, pool *pgxpool.Pool, vectors ...[]float32) []uuid.UUID {
	t.Helper()
	ctx := t.Context()
	paper := uuid.New()
	_, err := pool.Exec(ctx, `INSERT INTO papers (id, title, source) VALUES ($1, 'Vector paper', 'test')`, paper)
	require.NoError(t, err)
	var items []vectorstore.Item
	for i, v := range vectors {
		id := uuid.New()
		_, err := pool.Exec(ctx, `
			INSERT INTO paper_chunks (id, paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, $3, 'text', 1, 1, 0, 4, 1)`, id, paper, i)
		require.NoError(t, err)
		items = append(items, vectorstore.Item{ChunkID: id, PaperID: paper, Vector: v})
	}
	require.NoError(t, s.Upsert(ctx, "m", items))
	out := make([]uuid.UUID, len(items))
	for i, it := range items {
		out[i] = it.ChunkID
	}
	return out
}

// partitionWithin calls s.partition and fails the test when it has not returned
// within a few seconds (it would be waiting for the lock the test holds).
func partitionWithin(t *testing.T, s *Store) *partition {
	t.Helper()
	type result struct {
		p   *partition
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := s.partition(context.WithoutCancel(t.Context()), "m")
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		require.NoError(t, r.err)
		return r.p
	case <-time.After(5 * time.Second):
		t.Fatal("a search waited for the searches under way")
		return nil
	}
}

// A search does not wait for the searches under way (which hold the partition's
// lock for reading while they score): with the partition fresh, it takes the
// lock only for reading too.
func TestSearchDoesNotWaitForSearchesUnderWay(t *testing.T) {
	t.Parallel()
	s, _, _ := storeWithVectors(t, []float32{1, 0}, []float32{0, 1})
	p := s.loaded("m")
	p.mu.RLock() // a search under way
	defer p.mu.RUnlock()
	require.Same(t, p, partitionWithin(t, s))
}

// When the check against PostgreSQL is due and another search is making it, a
// search goes on with the rows loaded rather than waiting for it.
func TestOneSearchChecksPostgresTheOthersGoOn(t *testing.T) {
	t.Parallel()
	s, _, _ := storeWithVectors(t, []float32{1, 0}, []float32{0, 1})
	p := s.loaded("m")
	p.mu.Lock()
	p.checked = time.Time{} // the check is due
	p.mu.Unlock()
	require.True(t, p.checking.CompareAndSwap(false, true)) // another search makes it
	p.mu.RLock()                                            // a search under way
	defer p.mu.RUnlock()
	require.Same(t, p, partitionWithin(t, s))
}

// The check still finds what another store (another node) wrote behind this one,
// and reloads.
func TestDueCheckReloadsWhatAnotherStoreWrote(t *testing.T) {
	t.Parallel()
	s, pool, _ := storeWithVectors(t, []float32{1, 0})
	other := NewWithOpts(pool, Opts{Dir: t.TempDir()})
	added := addVectors(t, other, pool, []float32{0, 1})

	hits, err := s.Search(t.Context(), "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "within RefreshEvery the loaded rows serve")

	p := s.loaded("m")
	p.mu.Lock()
	p.checked = time.Time{}
	p.mu.Unlock()
	hits, err = s.Search(t.Context(), "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2)
	require.Equal(t, added[0], hits[0].ChunkID)
	require.False(t, p.checking.Load(), "the check is over")
}

// A check that runs while one of the store's own writes is under way (committed in
// PostgreSQL, not yet in the partition, which it waits to lock behind the searches)
// does not reload: that would hold every search for a whole load. The next check,
// with no write under way, still finds another store's rows.
func TestCheckDuringOwnWriteDoesNotReload(t *testing.T) {
	t.Parallel()
	s, pool, _ := storeWithVectors(t, []float32{1, 0})
	other := NewWithOpts(pool, Opts{Dir: t.TempDir()})
	addVectors(t, other, pool, []float32{0, 1}) // PostgreSQL now differs from s's partition
	p := s.loaded("m")
	due := func() {
		p.mu.Lock()
		p.checked = time.Time{}
		p.mu.Unlock()
	}

	writeDone := s.write() // one of s's writes is under way
	due()
	hits, err := s.Search(t.Context(), "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 1, "no reload while a write of this store is under way")
	p.mu.RLock()
	require.False(t, p.checked.IsZero(), "the check counts as made")
	p.mu.RUnlock()

	writeDone()
	due()
	hits, err = s.Search(t.Context(), "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "with no write under way the check reloads")
}
