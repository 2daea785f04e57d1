package embedded

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestQuantiseErrorBound checks the int8 codes against their promise: every
// component read back within m/254 of the normalised component (m its row's
// largest magnitude), and a dot product on codes within the bound that follows.
func TestQuantiseErrorBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	gaussian := func(dim int) []float32 { return randomQuery(rng, dim) }
	sparse := func(dim int) []float32 {
		v := make([]float32, dim)
		for range 5 {
			v[rng.IntN(dim)] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, tt := range []struct {
		name string
		vec  func(dim int) []float32
	}{
		{"gaussian", gaussian},
		{"sparse", sparse},
		{"one-hot", func(dim int) []float32 { v := make([]float32, dim); v[rng.IntN(dim)] = 1; return v }},
		{"constant", func(dim int) []float32 {
			v := make([]float32, dim)
			for j := range v {
				v[j] = 0.3
			}
			return v
		}},
		{"tiny", func(dim int) []float32 {
			v := gaussian(dim)
			for j := range v {
				v[j] *= 1e-30
			}
			return v
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, dim := range []int{3, 64, 384} {
				c := newCodes(dim)
				rows := make([][]float32, 50)
				for i := range rows {
					rows[i] = normalised(tt.vec(dim))
					c.append(rows[i])
				}
				got := make([]float32, dim)
				for i, v := range rows {
					m := float64(c.scales[i]) * 127
					c.dequantise(i, got)
					for j := range v {
						require.LessOrEqual(t, math.Abs(float64(got[j]-v[j])), m/254*(1+1e-5)+1e-12, "row %d component %d", i, j)
					}
				}
				for range 20 {
					q := newQuery(normalised(tt.vec(dim)))
					for i, v := range rows {
						var exact, l1q, l1x float64
						for j := range v {
							exact += float64(v[j]) * float64(q.vec[j])
							l1q += math.Abs(float64(q.vec[j]))
							l1x += math.Abs(float64(v[j]))
						}
						// |q̂·x̂ − q·x| ≤ |q̂−q|·|x̂| + |q|·|x̂−x|, component by component.
						mx, mq := float64(c.scales[i])*127, float64(q.scale)*127
						bound := mq/254*(l1x+float64(dim)*mx/254) + mx/254*l1q
						require.LessOrEqual(t, math.Abs(float64(q.approx(c, i))-exact), bound*(1+1e-4)+1e-6)
					}
				}
			}
		})
	}

	t.Run("zero", func(t *testing.T) {
		c := newCodes(4)
		c.append([]float32{0, 0, 0, 0})
		require.Zero(t, c.scales[0])
		require.Equal(t, []byte{0, 0, 0, 0}, c.row(0))
		q := newQuery(normalised([]float32{1, 2, 3, 4}))
		require.Zero(t, q.approx(c, 0))
	})
}

// TestRerankReturnsExactCosines checks that a search answers the exact cosine of
// each hit and orders hits by it, although the codes misjudge the near ties among
// these vectors (many variations of a few directions).
func TestRerankReturnsExactCosines(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 24))
	const dim = 64
	d := newMixture(rng, 5, 0.3)
	p := testPartition(t)
	stored := map[uuid.UUID][]float32{}
	paper := uuid.New()
	for range 3000 {
		v := make([]float32, benchDim)
		d.draw(rng, v)
		v = v[:dim]
		id := uuid.New()
		stored[id] = v
		mustPut(t, p, id, paper, v)
	}
	mustIndex(t, p)
	misjudged := 0
	for range 20 {
		drawn := make([]float32, benchDim)
		d.draw(rng, drawn)
		q := normalised(drawn[:dim])
		hits := mustSearch(t, p, q, 10)
		require.Len(t, hits, 10)
		want := bruteForce(p, floatRows(t, p), q, 10)
		for i, h := range hits {
			require.Equal(t, want[i].ChunkID, h.ChunkID, "rank %d", i)
			require.InDelta(t, cosine64(stored[h.ChunkID], q), float64(h.Score), 1e-6)
			if math.Abs(float64(newQuery(q).approx(p.codes, rowOf(t, p, h.ChunkID))-h.Score)) > 1e-5 {
				misjudged++
			}
		}
	}
	require.Positive(t, misjudged, "the codes alone would not have given these scores")
}

func cosine64(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// TestPartitionMemory holds a partition of 100k × 384 vectors to about a byte per
// component: the process's resident memory grows by less than half of what the
// float32 vectors alone would take (153.6 MB), and the codes are outside the Go
// heap. Not parallel: it measures the whole process.
func TestPartitionMemory(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(25, 26))
	runtime.GC()
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore := procStatusMB(t, "VmRSS")

	p := datasetPartition(t, n, rng, newMixture(rng, 200, 1))
	mustIndex(t, p)

	runtime.GC()
	debug.FreeOSMemory()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := procStatusMB(t, "VmRSS") - rssBefore
	floats := float64(n*benchDim*4) / (1 << 20)
	t.Logf("resident memory grew %.1f MB for %d vectors (float32 would be %.1f MB); Go heap %+.1f MB",
		grown, n, floats, (float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20))
	require.Less(t, grown, floats/2)
	require.LessOrEqual(t, p.codes.bytes(), n*benchDim+blockBytes+n*4*2, "a byte per component, a scale per row")
	require.Less(t, float64(after.HeapAlloc)-float64(before.HeapAlloc), float64(n*benchDim)/2, "the codes are not on the Go heap")
	require.Len(t, p.ids, n)
}
