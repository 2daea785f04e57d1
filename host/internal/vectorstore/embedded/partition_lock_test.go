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

// Searches that arrive while another brings the partition up to date share the
// next catch-up rather than each reading the change log: one that arrived
// before a catch-up began needs none of its own, and one that arrives after it
// reads the log and sees what was written meanwhile.
func TestSearchesArrivingTogetherShareACatchUp(t *testing.T) {
	t.Parallel()
	s, pool, _ := storeWithVectors(t, []float32{1, 0})
	p := s.loaded("m")

	p.syncMu.Lock() // a catch-up under way
	waiting := make(chan *partition, 1)
	go func() {
		got, err := s.partition(context.WithoutCancel(t.Context()), "m")
		if err != nil {
			t.Error(err)
		}
		waiting <- got
	}()
	time.Sleep(50 * time.Millisecond) // the search has arrived and waits
	other := NewWithOpts(pool, Opts{Dir: t.TempDir()})
	added := addVectors(t, other, pool, []float32{0, 1}) // another host writes
	p.synced = time.Now()                                // a catch-up began after the search arrived, and ended
	p.syncMu.Unlock()
	require.Same(t, p, <-waiting)
	p.mu.RLock()
	_, seen := p.pos.find(p.ids, added[0])
	p.mu.RUnlock()
	require.False(t, seen, "the waiting search took the catch-up that served it, and read no log itself")

	hits, err := s.Search(t.Context(), "m", []float32{0, 1}, 2, vectorstore.Filter{})
	require.NoError(t, err)
	require.Len(t, hits, 2, "a search arriving now reads the log and sees the other host's write")
	require.Equal(t, added[0], hits[0].ChunkID)
}

// loaded is the model's partition as the store holds it.
func (s *Store) loaded(model string) *partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts[model]
}
