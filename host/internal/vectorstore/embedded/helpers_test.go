package embedded

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// testPartition is an empty partition whose file lives in the test's directory,
// released when the test ends.
func testPartition(tb testing.TB) *partition {
	tb.Helper()
	p := newPartition(tb.TempDir())
	tb.Cleanup(func() {
		p.clear()
		if p.floats != nil {
			_ = p.floats.close()
		}
	})
	return p
}

// mustPut adds or replaces one vector, failing the test on an error.
func mustPut(tb testing.TB, p *partition, chunkID, paperID uuid.UUID, v []float32) {
	tb.Helper()
	require.NoError(tb, p.put(chunkID, paperID, v))
}

// mustIndex builds the partition's index as a load does.
func mustIndex(tb testing.TB, p *partition) {
	tb.Helper()
	require.NoError(tb, p.index())
}

// mustSearch is p.search without an error.
func mustSearch(tb testing.TB, p *partition, q []float32, k int) []vectorstore.Hit {
	tb.Helper()
	hits, err := p.search(q, k, nil)
	require.NoError(tb, err)
	return hits
}

// floatRows reads every exact row of the partition back from its file.
func floatRows(tb testing.TB, p *partition) []float32 {
	tb.Helper()
	require.NoError(tb, p.floats.flush())
	out := make([]float32, len(p.ids)*p.dim)
	buf := make([]byte, p.dim*4)
	for i := range p.ids {
		require.NoError(tb, p.floats.read(i, out[i*p.dim:(i+1)*p.dim], buf))
	}
	return out
}

// bruteForce is the exact top k of the normalised query q over rows (as from
// floatRows), without codes, short lists or indexes: the truth tests compare with.
func bruteForce(p *partition, rows []float32, q []float32, k int) []vectorstore.Hit {
	top := make(minHeap, 0, k+1)
	for i := range p.ids {
		pushTop(&top, k, i, dot(rows[i*p.dim:(i+1)*p.dim], q))
	}
	out := make([]vectorstore.Hit, len(top))
	for n := len(top) - 1; n >= 0; n-- {
		sc := heap.Pop(&top).(scored)
		out[n] = vectorstore.Hit{ChunkID: p.ids[sc.i], PaperID: p.papers[sc.i], Score: sc.score}
	}
	return out
}

// recallAt10 is the share of the exact top 10 that the shipped search finds, over
// queries.
func recallAt10(tb testing.TB, p *partition, queries [][]float32) float64 {
	tb.Helper()
	rows := floatRows(tb, p)
	var found, total int
	for _, q := range queries {
		truth := bruteForce(p, rows, q, 10)
		for _, h := range mustSearch(tb, p, q, 10) {
			if slices.ContainsFunc(truth, func(x vectorstore.Hit) bool { return x.ChunkID == h.ChunkID }) {
				found++
			}
		}
		total += 10
	}
	return float64(found) / float64(total)
}

// datasetPartition fills a partition with n vectors of d, 20 to a paper. Its index
// is not built: call mustIndex, as a load does.
func datasetPartition(tb testing.TB, n int, rng *rand.Rand, d dataset) *partition {
	tb.Helper()
	p := testPartition(tb)
	p.ids = make([]uuid.UUID, 0, n)
	p.papers = make([]uuid.UUID, 0, n)
	v := make([]float32, benchDim)
	paper := uuid.New()
	for i := range n {
		d.draw(rng, v)
		if i%20 == 0 {
			paper = uuid.New()
		}
		mustPut(tb, p, uuid.New(), paper, v)
	}
	return p
}

// rowOf is the row of a chunk id the partition holds.
func rowOf(tb testing.TB, p *partition, id uuid.UUID) int {
	tb.Helper()
	i, ok := p.pos.find(p.ids, id)
	require.True(tb, ok)
	return i
}
