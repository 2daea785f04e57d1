// Package storetest is the contract every vectorstore.Store passes: the embedded
// store always, the Qdrant adapter where QDRANT_URL names a real Qdrant.
package storetest

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// Run checks s against the contract. Model names are unique to the run, so a shared
// backend (one Qdrant) does not mix runs.
func Run(t *testing.T, s vectorstore.Store) {
	t.Helper()
	run := uuid.NewString()[:8]
	model := func(name string) string { return "contract-" + name + "-" + run }
	ctx := context.Background()

	t.Run("NearestFirstAndFilters", func(t *testing.T) {
		m := model("basic")
		p1, p2 := uuid.New(), uuid.New()
		a, b, c := uuid.New(), uuid.New(), uuid.New()
		require.NoError(t, s.Upsert(ctx, m, []vectorstore.Item{
			{ChunkID: a, PaperID: p1, Vector: []float32{1, 0, 0, 0}},
			{ChunkID: b, PaperID: p1, Vector: []float32{0.8, 0.6, 0, 0}},
			{ChunkID: c, PaperID: p2, Vector: []float32{0, 0, 1, 0}},
		}))
		hits, err := s.Search(ctx, m, []float32{2, 0, 0, 0}, 3, vectorstore.Filter{})
		require.NoError(t, err)
		require.Len(t, hits, 3)
		require.Equal(t, []uuid.UUID{a, b, c}, chunkIDs(hits))
		require.InDelta(t, 1.0, hits[0].Score, 1e-4, "cosine of parallel vectors")
		require.InDelta(t, 0.8, hits[1].Score, 1e-4)
		require.Equal(t, p1, hits[0].PaperID)

		hits, err = s.Search(ctx, m, []float32{1, 0, 0, 0}, 1, vectorstore.Filter{})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{a}, chunkIDs(hits), "k bounds the answer")

		hits, err = s.Search(ctx, m, []float32{1, 0, 0, 0}, 10, vectorstore.Filter{PaperIDs: []uuid.UUID{p2}})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{c}, chunkIDs(hits), "the paper filter keeps only that paper's chunks")

		hits, err = s.Search(ctx, m, []float32{1, 0, 0, 0}, 10, vectorstore.Filter{PaperIDs: []uuid.UUID{uuid.New()}})
		require.NoError(t, err)
		require.Empty(t, hits)
	})

	t.Run("UpsertReplacesAndDeleteRemoves", func(t *testing.T) {
		m := model("replace")
		p := uuid.New()
		a, b := uuid.New(), uuid.New()
		require.NoError(t, s.Upsert(ctx, m, []vectorstore.Item{
			{ChunkID: a, PaperID: p, Vector: []float32{1, 0}},
			{ChunkID: b, PaperID: p, Vector: []float32{0, 1}},
		}))
		require.NoError(t, s.Upsert(ctx, m, []vectorstore.Item{{ChunkID: a, PaperID: p, Vector: []float32{0, -1}}}))
		hits, err := s.Search(ctx, m, []float32{0, -1}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Len(t, hits, 2, "a replaced vector is not counted twice")
		require.Equal(t, a, hits[0].ChunkID)

		require.NoError(t, s.Delete(ctx, m, []uuid.UUID{a, uuid.New()}))
		hits, err = s.Search(ctx, m, []float32{0, -1}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{b}, chunkIDs(hits))
	})

	t.Run("DeletePaperRemovesEveryModel", func(t *testing.T) {
		m1, m2 := model("paper1"), model("paper2")
		gone, kept := uuid.New(), uuid.New()
		g1, g2, k1 := uuid.New(), uuid.New(), uuid.New()
		require.NoError(t, s.Upsert(ctx, m1, []vectorstore.Item{
			{ChunkID: g1, PaperID: gone, Vector: []float32{1, 0, 0}},
			{ChunkID: k1, PaperID: kept, Vector: []float32{1, 1, 0}},
		}))
		require.NoError(t, s.Upsert(ctx, m2, []vectorstore.Item{{ChunkID: g2, PaperID: gone, Vector: []float32{1, 2}}}))
		require.NoError(t, s.DeletePaper(ctx, gone))
		hits, err := s.Search(ctx, m1, []float32{1, 0, 0}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{k1}, chunkIDs(hits))
		hits, err = s.Search(ctx, m2, []float32{1, 2}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Empty(t, hits)
	})

	t.Run("ModelsAreSeparate", func(t *testing.T) {
		small, large := model("small"), model("large")
		p, a, b := uuid.New(), uuid.New(), uuid.New()
		require.NoError(t, s.Upsert(ctx, small, []vectorstore.Item{{ChunkID: a, PaperID: p, Vector: []float32{1, 0}}}))
		require.NoError(t, s.Upsert(ctx, large, []vectorstore.Item{{ChunkID: b, PaperID: p, Vector: []float32{1, 0, 0, 0, 0}}}))
		hits, err := s.Search(ctx, small, []float32{1, 0}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{a}, chunkIDs(hits))

		err = s.Upsert(ctx, small, []vectorstore.Item{{ChunkID: uuid.New(), PaperID: p, Vector: []float32{1, 0, 0}}})
		require.ErrorIs(t, err, vectorstore.ErrDimension, "a model keeps one dimension")
		_, err = s.Search(ctx, small, []float32{1, 0, 0}, 5, vectorstore.Filter{})
		require.ErrorIs(t, err, vectorstore.ErrDimension)

		hits, err = s.Search(ctx, model("never-written"), []float32{1, 0}, 5, vectorstore.Filter{})
		require.NoError(t, err, "an unknown model is an empty index")
		require.Empty(t, hits)
	})

	t.Run("RefusesBadArguments", func(t *testing.T) {
		m := model("bad")
		p := uuid.New()
		require.ErrorIs(t, s.Upsert(ctx, "", []vectorstore.Item{{ChunkID: uuid.New(), PaperID: p, Vector: []float32{1}}}), vectorstore.ErrInvalid)
		require.ErrorIs(t, s.Upsert(ctx, m, []vectorstore.Item{{ChunkID: uuid.New(), PaperID: p}}), vectorstore.ErrInvalid)
		require.ErrorIs(t, s.Upsert(ctx, m, []vectorstore.Item{
			{ChunkID: uuid.New(), PaperID: p, Vector: []float32{1, 0}},
			{ChunkID: uuid.New(), PaperID: p, Vector: []float32{1, 0, 0}},
		}), vectorstore.ErrDimension)
		_, err := s.Search(ctx, m, []float32{1}, 0, vectorstore.Filter{})
		require.ErrorIs(t, err, vectorstore.ErrInvalid)
		hits, err := s.Search(ctx, m, []float32{1, 0}, 5, vectorstore.Filter{})
		require.NoError(t, err)
		require.Empty(t, hits, "a refused upsert wrote nothing")
	})

	t.Run("MatchesExactSearch", func(t *testing.T) {
		m := model("recall")
		const n, dim, k = 600, 32, 10
		rng := rand.New(rand.NewPCG(7, 11))
		papers := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
		items := make([]vectorstore.Item, n)
		for i := range items {
			items[i] = vectorstore.Item{ChunkID: uuid.New(), PaperID: papers[i%3], Vector: randomVector(rng, dim)}
		}
		require.NoError(t, s.Upsert(ctx, m, items))
		var found, total int
		for range 20 {
			q := randomVector(rng, dim)
			want := exactTop(items, q, k)
			hits, err := s.Search(ctx, m, q, k, vectorstore.Filter{})
			require.NoError(t, err)
			require.Len(t, hits, k)
			require.True(t, slices.IsSortedFunc(hits, func(x, y vectorstore.Hit) int { return cmpScore(y.Score, x.Score) }), "best first")
			for _, h := range hits {
				if slices.Contains(want, h.ChunkID) {
					found++
				}
			}
			total += k
		}
		recall := float64(found) / float64(total)
		require.GreaterOrEqual(t, recall, 0.95, "recall@10 against exact search")
	})
}

func chunkIDs(hits []vectorstore.Hit) []uuid.UUID {
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = h.ChunkID
	}
	return out
}

func randomVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
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

func exactTop(items []vectorstore.Item, q []float32, k int) []uuid.UUID {
	type scored struct {
		id uuid.UUID
		s  float64
	}
	all := make([]scored, len(items))
	for i, it := range items {
		all[i] = scored{it.ChunkID, cosine(it.Vector, q)}
	}
	slices.SortFunc(all, func(x, y scored) int {
		switch {
		case x.s > y.s:
			return -1
		case x.s < y.s:
			return 1
		}
		return 0
	})
	out := make([]uuid.UUID, k)
	for i := range out {
		out[i] = all[i].id
	}
	return out
}

func cmpScore(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
