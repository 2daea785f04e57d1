package embedded_test

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

// makeChunks creates a paper with n passages in one statement and returns their ids.
func makeChunks(t *testing.T, pool *pgxpool.Pool, paper uuid.UUID, n int) []uuid.UUID {
	t.Helper()
	ctx := t.Context()
	_, err := pool.Exec(ctx, `INSERT INTO papers (id, title, source) VALUES ($1, 'Vector paper', 'test')`, paper)
	require.NoError(t, err)
	rows, err := pool.Query(ctx, `
		INSERT INTO paper_chunks (id, paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		SELECT gen_random_uuid(), $1, i, 'text', 1, 1, 0, 4, 1 FROM generate_series(0, $2 - 1) AS i
		RETURNING id`, paper, n)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	return ids
}

// exactNearest is the brute-force top k of q (by float64 cosine) over vectors,
// restricted to the papers in only when it is not empty.
func exactNearest(vectors map[uuid.UUID]vectorstore.Item, q []float32, k int, only ...uuid.UUID) []uuid.UUID {
	type scoredID struct {
		id uuid.UUID
		s  float64
	}
	var all []scoredID
	for id, it := range vectors {
		if len(only) == 0 || slices.Contains(only, it.PaperID) {
			all = append(all, scoredID{id, cosine(it.Vector, q)})
		}
	}
	slices.SortFunc(all, func(a, b scoredID) int { return cmp.Compare(b.s, a.s) })
	out := make([]uuid.UUID, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.id)
	}
	return out
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// requireExactHits checks hits against the brute-force answer: the same passages
// in the same order, each scored with its exact cosine.
func requireExactHits(t *testing.T, vectors map[uuid.UUID]vectorstore.Item, q []float32, hits []vectorstore.Hit, want []uuid.UUID) {
	t.Helper()
	got := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		got[i] = h.ChunkID
		require.Equal(t, vectors[h.ChunkID].PaperID, h.PaperID)
		require.InDelta(t, cosine(vectors[h.ChunkID].Vector, q), float64(h.Score), 1e-5)
	}
	require.Equal(t, want, got)
}

// TestRecallOnClusteredVectorsThroughTheStore writes 4000 clustered vectors
// through the store and searches them from a fresh store (a restart: loaded from
// PostgreSQL into codes and file): recall@10 ≥ 0.95 against brute force, and every
// score the exact cosine.
func TestRecallOnClusteredVectorsThroughTheStore(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(31, 32))
	const dim, centres = 48, 40
	centre := make([][]float32, centres)
	for c := range centre {
		centre[c] = gaussian(rng, dim, 1)
	}
	draw := func() []float32 {
		v := gaussian(rng, dim, 1/math.Sqrt(dim))
		for j, x := range centre[rng.IntN(centres)] {
			v[j] += x / float32(math.Sqrt(dim))
		}
		return v
	}
	writer := embedded.NewWithOpts(pool, embedded.Opts{Dir: t.TempDir()})
	vectors := map[uuid.UUID]vectorstore.Item{}
	for range 4 {
		paper := uuid.New()
		var items []vectorstore.Item
		for _, id := range makeChunks(t, pool, paper, 1000) {
			it := vectorstore.Item{ChunkID: id, PaperID: paper, Vector: draw()}
			vectors[id] = it
			items = append(items, it)
		}
		require.NoError(t, writer.Upsert(ctx, "m", items))
	}

	reader := embedded.NewWithOpts(pool, embedded.Opts{Dir: t.TempDir()})
	var found, total int
	for range 30 {
		q := draw()
		hits, err := reader.Search(ctx, "m", q, 10, vectorstore.Filter{})
		require.NoError(t, err)
		want := exactNearest(vectors, q, 10)
		for _, h := range hits {
			require.InDelta(t, cosine(vectors[h.ChunkID].Vector, q), float64(h.Score), 1e-5)
			if slices.Contains(want, h.ChunkID) {
				found++
			}
		}
		total += 10
	}
	require.GreaterOrEqual(t, float64(found)/float64(total), 0.95)
}

// TestReloadAfterWritesIsConsistent replaces, deletes and drops a paper's vectors
// through one store, then compares its answers (memory and file changed in place,
// rows moved by deletes) with a fresh store's (loaded from PostgreSQL) and with
// brute force.
func TestReloadAfterWritesIsConsistent(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(33, 34))
	const dim = 32
	s := embedded.NewWithOpts(pool, embedded.Opts{Dir: t.TempDir()})
	vectors := map[uuid.UUID]vectorstore.Item{}
	papers := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	var ids []uuid.UUID
	for _, paper := range papers {
		var items []vectorstore.Item
		for _, id := range makeChunks(t, pool, paper, 400) {
			it := vectorstore.Item{ChunkID: id, PaperID: paper, Vector: gaussian(rng, dim, 1)}
			vectors[id] = it
			items = append(items, it)
			ids = append(ids, id)
		}
		require.NoError(t, s.Upsert(ctx, "m", items))
	}
	// Load the partition, so the writes below change it in place.
	_, err := s.Search(ctx, "m", gaussian(rng, dim, 1), 1, vectorstore.Filter{})
	require.NoError(t, err)

	var replaced []vectorstore.Item
	for _, id := range ids[:200] {
		it := vectorstore.Item{ChunkID: id, PaperID: vectors[id].PaperID, Vector: gaussian(rng, dim, 1)}
		vectors[id] = it
		replaced = append(replaced, it)
	}
	require.NoError(t, s.Upsert(ctx, "m", replaced))
	deleted := ids[150:300]
	require.NoError(t, s.Delete(ctx, "m", deleted))
	require.NoError(t, s.DeletePaper(ctx, papers[2]))
	for _, id := range deleted {
		delete(vectors, id)
	}
	for id, it := range vectors {
		if it.PaperID == papers[2] {
			delete(vectors, id)
		}
	}

	fresh := embedded.NewWithOpts(pool, embedded.Opts{Dir: t.TempDir()})
	for range 20 {
		q := gaussian(rng, dim, 1)
		for _, st := range []*embedded.Store{s, fresh} {
			hits, err := st.Search(ctx, "m", q, 15, vectorstore.Filter{})
			require.NoError(t, err)
			requireExactHits(t, vectors, q, hits, exactNearest(vectors, q, 15))

			hits, err = st.Search(ctx, "m", q, 5, vectorstore.Filter{PaperIDs: []uuid.UUID{papers[1]}})
			require.NoError(t, err)
			requireExactHits(t, vectors, q, hits, exactNearest(vectors, q, 5, papers[1]))
		}
	}
}

func gaussian(rng *rand.Rand, dim int, sd float64) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(sd * rng.NormFloat64())
	}
	return v
}
