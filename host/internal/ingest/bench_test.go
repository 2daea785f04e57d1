package ingest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/chunk"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// benchFiles are the fixture PDFs every ingest benchmark reads.
func benchFiles(b *testing.B) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(b), "pdfs", "*.pdf"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture PDFs: %v", err)
	}
	return files
}

// pdftotextAlone runs plain `pdftotext file -`, the baseline of the ingest
// ratios, and returns how long it took.
func pdftotextAlone(b *testing.B, file string) time.Duration {
	b.Helper()
	start := time.Now()
	if err := exec.CommandContext(b.Context(), "pdftotext", "-enc", "UTF-8", file, "-").Run(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkPdftotextAlone is pdftext's baseline in this package's binary, so one
// run measures it beside the benchmarks below: plain `pdftotext file -` over
// the fixture PDFs.
func BenchmarkPdftotextAlone(b *testing.B) {
	files := benchFiles(b)
	pages := 0
	for _, f := range files {
		doc, err := pdftext.ExtractFile(b.Context(), f, nil)
		require.NoError(b, err)
		pages += len(doc.Pages)
	}
	for b.Loop() {
		for _, f := range files {
			pdftotextAlone(b, f)
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkExtractChunkEmbed is the CPU side of an ingest over every fixture PDF:
// extract, chunk and embed (the builtin lexical embedder); compare its pages/s with
// pdftext's BenchmarkPdftotextAlone. Storing is left out (PostgreSQL's COPY).
// Before each PDF, with the timer stopped, plain pdftotext reads it too:
// x-pdftotext is the ratio of the two times, side by side, so a machine whose
// load changes during the run moves both; cpu-x-pdftotext is the ratio of the
// CPU time they spent (this process's and its subprocesses').
func BenchmarkExtractChunkEmbed(b *testing.B) {
	files := benchFiles(b)
	pages, chunks := 0, 0
	var base, took, baseCPU, tookCPU time.Duration
	for b.Loop() {
		pages, chunks = 0, 0
		for _, f := range files {
			b.StopTimer()
			_, c0 := cpuTimes()
			base += pdftotextAlone(b, f)
			_, c1 := cpuTimes()
			baseCPU += c1 - c0
			b.StartTimer()
			s0, c0 := cpuTimes()
			start := time.Now()
			doc, err := pdftext.ExtractFile(b.Context(), f, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := chunk.Split(f, doc, nil)
			if err != nil {
				b.Fatal(err)
			}
			texts := make([]string, len(cs))
			for i, c := range cs {
				texts[i] = c.Text
			}
			if _, err := lexical.Embed(b.Context(), texts); err != nil {
				b.Fatal(err)
			}
			took += time.Since(start)
			s1, c1 := cpuTimes()
			tookCPU += s1 - s0 + c1 - c0
			pages += len(doc.Pages)
			chunks += len(cs)
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(base.Seconds()/took.Seconds(), "x-pdftotext")
	b.ReportMetric(baseCPU.Seconds()/tookCPU.Seconds(), "cpu-x-pdftotext")
}

// cpuTimes is the CPU time this process has used and that of its children
// that have ended (the pdftotext runs): cpu-x-pdftotext is the ratio of CPU
// spent, which a loaded machine moves less than it moves wall time.
func cpuTimes() (self, children time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return self, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServerIngest is ingest as the server runs it: each fixture PDF is
// uploaded through the upload handler, which stores it and enqueues ingest.pdf;
// River's worker extracts, chunks, stores text and passages in PostgreSQL and
// embeds them with the builtin embedder behind the LLM gateway (in process, as
// a host with the builtin embed role runs it) into the embedded vector store.
// The time is the job's own, from created_at to finalized_at in river_job, one
// PDF at a time. Before each upload, with the timer stopped, plain pdftotext
// reads the same PDF: x-pdftotext is the ratio of the two, side by side.
func BenchmarkServerIngest(b *testing.B) {
	files := benchFiles(b)
	bb := setup(b, func(w *Worker) { w.Embedder = gatewayEmbedder(b, w) })
	ctx := context.Background()
	pdfs := make([][]byte, len(files))
	for i, f := range files {
		var err error
		pdfs[i], err = os.ReadFile(f)
		require.NoError(b, err)
	}
	var base, took time.Duration
	pages := 0
	for b.Loop() {
		// A new owner each round: the same owner's second upload of a PDF is
		// answered with the paper it already has.
		var user uuid.UUID
		require.NoError(b, bb.pool.QueryRow(ctx, `INSERT INTO users (email) VALUES (gen_random_uuid()::text || '@example.org') RETURNING id`).Scan(&user))
		for i, f := range files {
			b.StopTimer()
			base += pdftotextAlone(b, f)
			b.StartTimer()
			rec, res := bb.upload(b, user, filepath.Base(f), pdfs[i])
			require.Equal(b, 202, rec.Code, rec.Body.String())
			var job struct {
				took  time.Duration
				pages int
			}
			require.Eventually(b, func() bool {
				var state string
				var secs float64
				err := bb.pool.QueryRow(ctx, `SELECT state::text, coalesce(extract(epoch FROM finalized_at - created_at), 0),
					coalesce((metadata->'output'->'result'->>'pages')::int, 0) FROM river_job WHERE id = $1`, res.Job.ID).Scan(&state, &secs, &job.pages)
				require.NoError(b, err)
				require.NotContains(b, []string{"discarded", "cancelled"}, state)
				job.took = time.Duration(secs * float64(time.Second))
				return state == "completed"
			}, time.Minute, 2*time.Millisecond)
			took += job.took
			pages += job.pages
		}
	}
	b.ReportMetric(float64(pages)/took.Seconds(), "pages/s")
	b.ReportMetric(base.Seconds()/took.Seconds(), "x-pdftotext")
}

// gatewayEmbedder is the host's embedder: the embed role behind the LLM
// gateway, which resolves to the builtin provider.
func gatewayEmbedder(b *testing.B, w *Worker) llmgw.Embedder {
	keys, err := secrets.NewKeyring("a7c1e9f3b5d2a8c4e6f0b1d9c3a5e7f2b4d6c8e0", "")
	require.NoError(b, err)
	return llmgw.Embedder{G: llmgw.New(llmgw.Config{Settings: userconfig.New(w.Pool, keys), Builtin: extractive.New(nil)})}
}
