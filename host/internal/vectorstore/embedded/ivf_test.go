package embedded

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestIVFRecallOnClusteredVectors holds the IVF search to recall@10 ≥ 0.95 against
// exact search on 50k clustered vectors, queries drawn apart from the rows.
func TestIVFRecallOnClusteredVectors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	d := newMixture(rng, 500, 1)
	p := datasetPartition(t, 50_000, rng, d)
	mustIndex(t, p)
	require.NotNil(t, p.ivf, "the self-check keeps IVF on clustered vectors")
	queries := make([][]float32, 40)
	for i := range queries {
		queries[i] = datasetQuery(rng, d)
	}
	require.GreaterOrEqual(t, recallAt10(t, p, queries), 0.95)
	rows := p.ivf.rows(queries[0], p.ivf.nprobe)
	require.Less(t, len(rows), len(p.ids)/4, "IVF scans a small share of the rows")
}

// TestIVFFollowsWrites checks the lists against the rows after upserts, replacements
// and deletes, and that a new vector is found by its own search.
func TestIVFFollowsWrites(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	d := newMixture(rng, 200, 1)
	p := datasetPartition(t, exactBelow+5_000, rng, d)
	mustIndex(t, p)
	require.NotNil(t, p.ivf)
	built := p.indexedN

	paper := uuid.New()
	added := make([]uuid.UUID, 300)
	for i := range added {
		added[i] = uuid.New()
		mustPut(t, p, added[i], paper, datasetQuery(rng, d))
	}
	for _, id := range added[:100] {
		mustPut(t, p, id, paper, datasetQuery(rng, d)) // replace
	}
	for _, id := range append(slices.Clone(added[100:200]), p.ids[:500]...) {
		require.NoError(t, p.remove(id))
	}
	mustIndex(t, p)
	require.Equal(t, built, p.indexedN, "small changes do not rebuild")
	requireListsMatchRows(t, p)

	q := datasetQuery(rng, d)
	id := uuid.New()
	mustPut(t, p, id, paper, q)
	mustIndex(t, p)
	hits := mustSearch(t, p, q, 1)
	require.Equal(t, id, hits[0].ChunkID)
	requireListsMatchRows(t, p)

	// Growing by the rebuild factor rebuilds (here: as if built at half the size).
	p.indexedN = len(p.ids)/ivfRebuildFactor - 1
	mustIndex(t, p)
	require.Equal(t, len(p.ids), p.indexedN)
	requireListsMatchRows(t, p)
}

func requireListsMatchRows(t *testing.T, p *partition) {
	t.Helper()
	x := p.ivf
	require.Len(t, x.list, len(p.ids))
	require.Len(t, x.slot, len(p.ids))
	seen := make([]bool, len(p.ids))
	for c, l := range x.lists {
		for s, r := range l {
			require.False(t, seen[r], "row %d in two lists", r)
			seen[r] = true
			require.Equal(t, int32(c), x.list[r])
			require.Equal(t, int32(s), x.slot[r])
		}
	}
	require.NotContains(t, seen, false, "every row is in a list")
}
