package ingest

import (
	"path/filepath"
	"testing"

	"github.com/lectern-research/lectern/host/internal/chunk"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// BenchmarkExtractChunkEmbed is the CPU side of an ingest over every fixture PDF:
// extract, chunk and embed (the builtin lexical embedder); compare its pages/s with
// pdftext's BenchmarkPdftotextAlone. Storing is left out (PostgreSQL's COPY).
func BenchmarkExtractChunkEmbed(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(b), "pdfs", "*.pdf"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture PDFs: %v", err)
	}
	pages, chunks := 0, 0
	for b.Loop() {
		pages, chunks = 0, 0
		for _, f := range files {
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
			pages += len(doc.Pages)
			chunks += len(cs)
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(chunks), "chunks")
}
