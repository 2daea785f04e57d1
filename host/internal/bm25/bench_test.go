package bm25

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkSearch measures the index alone (no PostgreSQL) over the corpus of
// retrieve's BenchmarkHybridSearch: 100k passages of 120 words drawn from a
// Zipf(1.1) vocabulary of 20k words, 20 passages a paper, all public. "common"
// asks for the three most frequent words (every one of their matches is scored),
// "common-and-rarer" for a frequent word and a rarer one, as most searches do,
// "selective" for either of two rare ones, "question" ORs eight words as SearchQuestion
// does. It logs the build time and the heap the index holds.
func BenchmarkSearch(b *testing.B) {
	const chunks, perPaper, words = 100_000, 20, 120
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.1, 1, 19_999)
	vocab := make([]string, 20_000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%c%c%c%d", 'a'+rune(i%26), 'a'+rune(i/26%26), 'a'+rune(i/676%26), i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var papers []Paper
	for i := range chunks {
		if i%perPaper == 0 {
			papers = append(papers, Paper{ID: uuid.New(), Public: true})
		}
		p := &papers[len(papers)-1]
		ws := make([]string, words)
		for w := range ws {
			ws[w] = vocab[zipf.Uint64()]
		}
		p.Passages = append(p.Passages, passage(p.ID, i%perPaper, ws...))
	}
	start, startCPU := time.Now(), cpuTime()
	ix := New()
	ix.AppendPapers(papers)
	took, tookCPU := time.Since(start), cpuTime()-startCPU
	papers = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("index of %d passages: built in %v (%v of CPU), %.1f MiB of heap", ix.Len(), took, tookCPU,
		float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))

	for _, q := range []struct{ name, text string }{
		{"selective", fmt.Sprintf("'%s' | '%s'", vocab[15_001], vocab[17_003])},
		{"common", fmt.Sprintf("'%s' & '%s' & '%s'", vocab[1], vocab[2], vocab[3])},
		{"common-and-rarer", fmt.Sprintf("'%s' & '%s'", vocab[5], vocab[2000])},
		{"question", fmt.Sprintf("'%s' | '%s' | '%s' | '%s' | '%s' | '%s' | '%s' | '%s'",
			vocab[0], vocab[4], vocab[30], vocab[200], vocab[900], vocab[3000], vocab[8000], vocab[12000])},
	} {
		query, err := ParseQuery(q.text)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for range b.N {
				if hits, err := ix.Search(query, SearchParams{Limit: 50}); err != nil || len(hits) == 0 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			}
			// The machine is shared: CPU time says what a search costs whatever
			// else runs.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
