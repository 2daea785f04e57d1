package embedded

import (
	"bufio"
	"container/heap"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// benchDim is the dimension of the synthetic vectors (and of the builtin embedder's).
const benchDim = 384

// dataset draws vectors; the same generator draws the queries.
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

// passages draws passages of real text and embeds them with the builtin embedder
// (lectern-lexical-v2-384): a passage is 3 to 6 sentences of one fixture PDF, picked
// at random within a window of passageWindow sentences around a random place, kept
// in their order, as a passage of a paper keeps to one topic. The text is
// extracted by pdftext when the benchmark starts; no fixture text is kept in the
// repository. Passages are embedded a batch at a time and handed out one by one,
// so no more than a batch is ever held.
type passages struct {
	tb        testing.TB
	sentences []string // every document's sentences, documents one after another
	docStart  []int    // for each sentence, the index of its document's first sentence
	docEnd    []int    // for each sentence, one past its document's last sentence
	embedder  *extractive.Extractive
	batch     [][]float32
}

const (
	// passageBatch is how many passages are embedded at once.
	passageBatch = 2048
	// passageWindow is the span of sentences a passage's sentences come from.
	passageWindow = 24
)

func newPassages(tb testing.TB) *passages {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(tb), "pdfs", "*.pdf"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	split := regexp.MustCompile(`[.!?]\s+`)
	d := &passages{tb: tb, embedder: extractive.New(nil)}
	for _, f := range files {
		doc, err := pdftext.ExtractFile(tb.Context(), f, nil)
		require.NoError(tb, err, f)
		start := len(d.sentences)
		for _, s := range split.Split(strings.Join(strings.Fields(doc.Text), " "), -1) {
			if n := len(strings.Fields(s)); n >= 6 && n <= 60 {
				d.sentences = append(d.sentences, s)
			}
		}
		for range len(d.sentences) - start {
			d.docStart = append(d.docStart, start)
			d.docEnd = append(d.docEnd, len(d.sentences))
		}
	}
	require.Greater(tb, len(d.sentences), 1000, "the fixture PDFs give enough sentences")
	return d
}

func (d *passages) draw(rng *rand.Rand, v []float32) {
	if len(d.batch) == 0 {
		texts := make([]string, passageBatch)
		for i := range texts {
			at := rng.IntN(len(d.sentences))
			lo := max(d.docStart[at], at-passageWindow/2)
			hi := min(d.docEnd[at], lo+passageWindow)
			picked := rng.Perm(hi - lo)[:min(hi-lo, 3+rng.IntN(4))]
			slices.Sort(picked)
			parts := make([]string, len(picked))
			for j, k := range picked {
				parts[j] = d.sentences[lo+k]
			}
			texts[i] = strings.Join(parts, ". ") + "."
		}
		resp, err := d.embedder.Embed(d.tb.Context(), &llm.EmbedRequest{Inputs: texts, Model: extractive.EmbeddingModel})
		require.NoError(d.tb, err)
		d.batch = resp.Vectors
	}
	copy(v, d.batch[0])
	d.batch = d.batch[1:]
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
// involved once a partition is loaded) at 100k and 1M 384-dimension vectors of
// three datasets: clustered (a Gaussian mixture of 2000 centres, spread 1), text
// (passages recombined from the fixture PDFs' sentences, embedded by the builtin
// embedder) and isotropic (Gaussian, the worst case). Two searches: "scan" scores
// every row on its codes and rescores the short list exactly; "shipped" is
// partition.search (IVF or sign bits, as the build-time self-check chose). Recall@10
// is against the exact top 10 over the float vectors, computed as the rows stream
// in.
//
// The rows are streamed into the partition one at a time through put, as a load
// from PostgreSQL does, and no copy of them is kept. Reported with the shipped
// search: load-s (putting the rows: codes and file, without drawing or embedding
// them), index-s (IVF build and self-check), peak-MB (the process's VmHWM from
// before the first row to the index built), rss-MB (VmRSS after a garbage
// collection once the index is built) and ivf-nprobe (0 when the partition kept the
// sign-bit path). VECTOR_BENCH_SIZES (100k, 1M or both, comma-separated) and
// VECTOR_BENCH_DATA (clustered, text, isotropic) narrow the run;
// VECTOR_BENCH_SCAN=0 leaves out the scan (50 full scans take long at 1M).
func BenchmarkVectorSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		if !selected("VECTOR_BENCH_SIZES", size.name) {
			continue
		}
		for _, data := range []string{"clustered", "text", "isotropic"} {
			if !selected("VECTOR_BENCH_DATA", data) {
				continue
			}
			benchDataset(b, size.name+"/"+data, size.n, data)
		}
	}
}

func selected(env, name string) bool {
	only := os.Getenv(env)
	return only == "" || slices.Contains(strings.Split(only, ","), name)
}

func benchDataset(b *testing.B, name string, n int, data string) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d dataset = isotropic{}
	switch data {
	case "clustered":
		d = newMixture(rng, 2000, 1)
	case "text":
		d = newPassages(b)
	}
	queries := make([][]float32, 50)
	for i := range queries {
		queries[i] = datasetQuery(rng, d)
	}
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS(b)
	p, truth, load := streamPartition(b, n, rng, d, queries)
	start := time.Now()
	mustIndex(b, p)
	index := time.Since(start)
	peak := procStatusMB(b, "VmHWM")
	runtime.GC()
	debug.FreeOSMemory()
	rss := procStatusMB(b, "VmRSS")
	nprobe := 0
	if p.ivf != nil {
		nprobe = p.ivf.nprobe
	}
	for _, mode := range []string{"scan", "shipped"} {
		if mode == "scan" && os.Getenv("VECTOR_BENCH_SCAN") == "0" {
			continue
		}
		b.Run(name+"/"+mode, func(b *testing.B) {
			durations := make([]time.Duration, 0, b.N)
			var found, total int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := i % len(queries)
				start := time.Now()
				var hits []vectorstore.Hit
				var err error
				if mode == "scan" {
					hits, err = p.exact(newQuery(queries[q]), 10, nil, nil)
				} else {
					hits, err = p.search(queries[q], 10, nil)
				}
				durations = append(durations, time.Since(start))
				require.NoError(b, err)
				for _, h := range hits {
					if slices.Contains(truth[q], h.ChunkID) {
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
				b.ReportMetric(float64(nprobe), "ivf-nprobe")
				b.ReportMetric(load.Seconds(), "load-s")
				b.ReportMetric(index.Seconds(), "index-s")
				b.ReportMetric(peak, "peak-MB")
				b.ReportMetric(rss, "rss-MB")
			}
		})
	}
	p.clear()
	_ = p.floats.close()
}

// streamPartition puts n vectors of d into a new partition one at a time and
// returns it with the exact top 10 of each query (by the float vectors, as they
// stream in) and the time spent in put.
func streamPartition(tb testing.TB, n int, rng *rand.Rand, d dataset, queries [][]float32) (*partition, [][]uuid.UUID, time.Duration) {
	p := testPartition(tb)
	p.ids, p.papers = make([]uuid.UUID, 0, n), make([]uuid.UUID, 0, n)
	p.pos.reserve(nil, n)
	tops := make([]minHeap, len(queries))
	const batch = 4096
	rows := make([]float32, 0, batch*benchDim)
	v := make([]float32, benchDim)
	paper := uuid.New()
	var load time.Duration
	for i := 0; i < n; {
		rows = rows[:0]
		first := i
		for ; i < n && i-first < batch; i++ {
			d.draw(rng, v)
			if i%20 == 0 {
				paper = uuid.New()
			}
			start := time.Now()
			mustPut(tb, p, uuid.New(), paper, v)
			load += time.Since(start)
			rows = append(rows, normalised(v)...)
		}
		parallel(len(queries), func(q int) {
			for r := range i - first {
				pushTop(&tops[q], 10, first+r, dot(rows[r*benchDim:(r+1)*benchDim], queries[q]))
			}
		})
	}
	truth := make([][]uuid.UUID, len(queries))
	for q := range tops {
		for len(tops[q]) > 0 {
			truth[q] = append(truth[q], p.ids[heap.Pop(&tops[q]).(scored).i])
		}
	}
	return p, truth, load
}

// procStatusMB reads a memory line (VmRSS, VmHWM) of /proc/self/status, in MB.
func procStatusMB(tb testing.TB, key string) float64 {
	tb.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(tb, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == key {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
			require.NoError(tb, err)
			return float64(kb) / 1024
		}
	}
	require.NoError(tb, sc.Err())
	tb.Fatalf("/proc/self/status has no %s", key)
	return 0
}

// resetPeakRSS starts VmHWM again from the current resident size.
func resetPeakRSS(tb testing.TB) {
	tb.Helper()
	require.NoError(tb, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
}

// TestQuantisedSearchRecall holds the sign-bit path to the recall the benchmark
// reports, on a partition large enough to take it.
func TestQuantisedSearchRecall(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	p := datasetPartition(t, 3*exactBelow, rng, isotropic{})
	mustIndex(t, p)
	require.Nil(t, p.ivf, "isotropic vectors keep the sign-bit path")
	queries := make([][]float32, 30)
	for i := range queries {
		queries[i] = randomQuery(rng, p.dim)
	}
	require.GreaterOrEqual(t, recallAt10(t, p, queries), 0.95)
}

// bags draws vectors as the builtin lexical embedding makes them of passages:
// each a few dozen words hashed into buckets, so most components are zero.
type bags struct{ words int }

func (b bags) draw(rng *rand.Rand, v []float32) {
	clear(v)
	for range b.words {
		v[rng.IntN(len(v))] += float32(rng.NormFloat64())
	}
}

// wordsQuery is a search of a few words as the lexical embedding makes it: two or
// three nonzero components.
func wordsQuery(rng *rand.Rand, dim int) []float32 { return componentsQuery(rng, dim, 2+rng.IntN(2)) }

// componentsQuery is a sparse query of n nonzero components at most (n draws;
// two may fall on one component): a longer search, whose words and pairs of
// adjacent words the lexical embedding each gives a component.
func componentsQuery(rng *rand.Rand, dim, n int) []float32 {
	q := make([]float32, dim)
	for range n {
		q[rng.IntN(dim)] = float32(1 + rng.Float64())
	}
	return normalised(q)
}

// TestSparseQueriesScoreEveryRow holds a search of a few words (a sparse query)
// to the exact top 10 on a partition large enough for the sign-bit path, whose
// bits for the query's zero components say nothing: it picked its candidates
// almost at random for such queries.
func TestSparseQueriesScoreEveryRow(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	p := datasetPartition(t, 3*exactBelow, rng, bags{words: 60})
	mustIndex(t, p)
	queries := make([][]float32, 30)
	for i := range queries {
		queries[i] = wordsQuery(rng, p.dim)
		require.True(t, newQuery(queries[i]).sparse())
	}
	require.GreaterOrEqual(t, recallAt10(t, p, queries), 0.95)
	require.False(t, newQuery(randomQuery(rng, p.dim)).sparse(), "a dense query keeps the dense path")
}

// BenchmarkWordsQuery measures a search of a few words (a sparse query, as the
// builtin lexical embedding makes of a search box's words) at 100k rows of bags
// of words, asking for 200 hits as passage search does: "shipped" scores every
// row on the query's nonzero components, "signbits" is the sign-bit path such a
// query took before.
func BenchmarkWordsQuery(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := datasetPartition(b, 100_000, rng, bags{words: 60})
	mustIndex(b, p)
	queries := make([][]float32, 50)
	for i := range queries {
		queries[i] = wordsQuery(rng, p.dim)
	}
	for _, mode := range []string{"shipped", "signbits"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				var err error
				if mode == "shipped" {
					_, err = p.search(q, 200, nil)
				} else {
					_, err = p.quantised(newQuery(q), 200)
				}
				require.NoError(b, err)
			}
		})
	}
}

// TestSparseQueriesKeepTheirTopHalf asks for k hits of a few words, as the
// retriever asks for twice the passages it needs, and holds the first k/2 to the
// exact top k/2: the short list rescored for a sparse query is 2k rows, not 4k.
func TestSparseQueriesKeepTheirTopHalf(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 52))
	p := datasetPartition(t, 50_000, rng, bags{words: 60})
	rows := floatRows(t, p)
	const k = 100
	found, total := 0, 0
	for range 20 {
		q := wordsQuery(rng, p.dim)
		truth := bruteForce(p, rows, q, k/2)
		hits := mustSearch(t, p, q, k)
		require.Len(t, hits, k)
		for _, h := range hits[:k/2] {
			if slices.ContainsFunc(truth, func(x vectorstore.Hit) bool { return x.ChunkID == h.ChunkID }) {
				found++
			}
		}
		total += k / 2
	}
	require.GreaterOrEqual(t, float64(found)/float64(total), 0.99)
}
