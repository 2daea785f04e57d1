package chunk

import (
	"path/filepath"
	"testing"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// BenchmarkExtractAndSplit is extraction plus chunking over every fixture PDF;
// compare its pages/s with pdftext's BenchmarkPdftotextAlone.
func BenchmarkExtractAndSplit(b *testing.B) {
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
			cs, err := Split(f, doc, nil)
			if err != nil {
				b.Fatal(err)
			}
			pages += len(doc.Pages)
			chunks += len(cs)
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(chunks), "chunks")
}

// BenchmarkSplit is chunking alone, over the 41-page fixture.
func BenchmarkSplit(b *testing.B) {
	doc, err := pdftext.ExtractFile(b.Context(), filepath.Join(fixturetest.Dir(b), "pdfs", "jctc2022_perspective_xai_molecular.pdf"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc.Text)))
	for b.Loop() {
		if _, err := Split("jctc", doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}
