package embedded

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// benchDim is the dimension of the synthetic vectors.
const benchDim = 384

// dataset draws synthetic vectors; the same generator draws the queries.
type dataset interface {
	draw(rng *rand.Rand, v []float32)
}

// isotropic draws vectors with independent standard Gaussian components: no
// neighbourhood structure at all, the hardest case for an approximate index.
type isotropic struct{}

func (isotropic) draw(rng *rand.Rand, v []float32) {
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
}

// mixture is a Gaussian mixture standing in for text embeddings, which are strongly
// clustered: a vector is a uniformly chosen random unit centre plus Gaussian noise
// of expected norm spread (each component N(0, spread²/dim)), normalised later. With
// spread 1 a vector's cosine with its centre is about 0.71, two vectors of one
// centre have a cosine of about 0.5, and vectors of different centres about 0 ± 0.05.
type mixture struct {
	centres [][]float32
	spread  float64
}

func newMixture(rng *rand.Rand, centres int, spread float64) *mixture {
	m := &mixture{spread: spread}
	for range centres {
		c := make([]float32, benchDim)
		isotropic{}.draw(rng, c)
		m.centres = append(m.centres, normalised(c))
	}
	return m
}

func (m *mixture) draw(rng *rand.Rand, v []float32) {
	c := m.centres[rng.IntN(len(m.centres))]
	sd := m.spread / math.Sqrt(float64(len(v)))
	for j := range v {
		v[j] = c[j] + float32(sd*rng.NormFloat64())
	}
}

// syntheticPartition fills a partition with n random 384-dimension vectors of
// isotropic Gaussian components.
func syntheticPartition(n int, rng *rand.Rand) *partition {
	p := datasetPartition(n, rng, isotropic{})
	p.index()
	return p
}

// datasetPartition fills a partition with n vectors of d. Its index is not built:
// call p.index(), as a load does.
func datasetPartition(n int, rng *rand.Rand, d dataset) *partition {
	p := &partition{pos: make(map[uuid.UUID]int, n)}
	p.ids = make([]uuid.UUID, 0, n)
	p.papers = make([]uuid.UUID, 0, n)
	p.vecs = make([]float32, 0, n*benchDim)
	v := make([]float32, benchDim)
	paper := uuid.New()
	for i := range n {
		d.draw(rng, v)
		if i%20 == 0 {
			paper = uuid.New()
		}
		p.put(uuid.New(), paper, v)
	}
	return p
}

func datasetQuery(rng *rand.Rand, d dataset) []float32 {
	q := make([]float32, benchDim)
	d.draw(rng, q)
	return normalised(q)
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
// vectors of two datasets, isotropic Gaussian and a clustered Gaussian mixture
// (2000 centres, spread 1): the exact scan, and the shipped search (IVF or sign
// bits, as the partition's build-time self-check chose) with its recall@10 against
// the exact scan. The "ivf-nprobe" metric is 0 when the partition kept the sign-bit
// path; "build-s" is the time the index took to build (k-means and self-check).
// VECTOR_BENCH_SIZES=100k or 1M runs one size only.
func BenchmarkVectorSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		if only := os.Getenv("VECTOR_BENCH_SIZES"); only != "" && only != size.name {
			continue
		}
		for _, data := range []string{"isotropic", "clustered"} {
			rng := rand.New(rand.NewPCG(1, 2))
			var d dataset = isotropic{}
			if data == "clustered" {
				d = newMixture(rng, 2000, 1)
			}
			p := datasetPartition(size.n, rng, d)
			start := time.Now()
			p.index()
			build := time.Since(start)
			nprobe := 0
			if p.ivf != nil {
				nprobe = p.ivf.nprobe
			}
			queries := make([][]float32, 50)
			truth := make([][]vectorstore.Hit, len(queries))
			for i := range queries {
				queries[i] = datasetQuery(rng, d)
				truth[i] = p.exact(queries[i], 10, nil, nil)
			}
			benchSearch(b, size.name+"/"+data, p, queries, truth, float64(nprobe), build)
			runtime.GC() // free this partition before the next is drawn
		}
	}
}

// benchSearch runs the exact and the shipped search of p over queries, reporting
// p50, p95 and recall@10 against truth.
func benchSearch(b *testing.B, name string, p *partition, queries [][]float32, truth [][]vectorstore.Hit, nprobe float64, build time.Duration) {
	for _, mode := range []string{"exact", "shipped"} {
		b.Run(name+"/"+mode, func(b *testing.B) {
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
			if mode == "shipped" {
				b.ReportMetric(nprobe, "ivf-nprobe")
				b.ReportMetric(build.Seconds(), "build-s")
			}
		})
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
