package embedded

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// syntheticPartition fills a partition with n random 384-dimension vectors.
func syntheticPartition(n int, rng *rand.Rand) *partition {
	const dim = 384
	p := &partition{pos: make(map[uuid.UUID]int, n)}
	p.ids = make([]uuid.UUID, 0, n)
	p.papers = make([]uuid.UUID, 0, n)
	p.vecs = make([]float32, 0, n*dim)
	v := make([]float32, dim)
	paper := uuid.New()
	for i := range n {
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		if i%20 == 0 {
			paper = uuid.New()
		}
		p.put(uuid.New(), paper, v)
	}
	return p
}

func randomQuery(rng *rand.Rand, dim int) []float32 {
	q := make([]float32, dim)
	for j := range q {
		q[j] = float32(rng.NormFloat64())
	}
	return normalised(q)
}

// BenchmarkVectorSearch measures a search of the in-memory index (PostgreSQL is not
// involved once a partition is loaded) at 100k and 1M synthetic 384-dimension
// vectors: the exact scan, and the quantised search with its recall@10 against it.
func BenchmarkVectorSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		rng := rand.New(rand.NewPCG(1, 2))
		p := syntheticPartition(size.n, rng)
		queries := make([][]float32, 50)
		truth := make([][]vectorstore.Hit, len(queries))
		for i := range queries {
			queries[i] = randomQuery(rng, p.dim)
			truth[i] = p.exact(queries[i], 10, nil, nil)
		}
		for _, mode := range []string{"exact", "quantised"} {
			b.Run(size.name+"/"+mode, func(b *testing.B) {
				durations := make([]time.Duration, 0, b.N)
				var found, total int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					q := i % len(queries)
					start := time.Now()
					var hits []vectorstore.Hit
					if mode == "exact" {
						hits = p.exact(queries[q], 10, nil, nil)
					} else {
						hits = p.search(queries[q], 10, nil)
					}
					durations = append(durations, time.Since(start))
					for _, h := range hits {
						if slices.ContainsFunc(truth[q], func(t vectorstore.Hit) bool { return t.ChunkID == h.ChunkID }) {
							found++
						}
					}
					total += 10
				}
				b.StopTimer()
				slices.Sort(durations)
				b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(durations[len(durations)*95/100].Microseconds())/1000, "p95-ms")
				b.ReportMetric(float64(found)/float64(total), "recall@10")
			})
		}
	}
}

// TestQuantisedSearchRecall holds the quantised path to the recall the benchmark
// reports, on a partition large enough to take it.
func TestQuantisedSearchRecall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := syntheticPartition(3*exactBelow, rng)
	var found, total int
	for range 30 {
		q := randomQuery(rng, p.dim)
		truth := p.exact(q, 10, nil, nil)
		hits := p.search(q, 10, nil)
		require.Len(t, hits, 10)
		for _, h := range hits {
			if slices.ContainsFunc(truth, func(x vectorstore.Hit) bool { return x.ChunkID == h.ChunkID }) {
				found++
			}
		}
		total += 10
	}
	require.GreaterOrEqual(t, float64(found)/float64(total), 0.95)
}
