package pdftext

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// fixtureFiles lists the shared fixture PDFs and their total page count.
func fixtureFiles(b *testing.B) ([]string, int) {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(b), "pdfs", "*.pdf"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixture PDFs: %v", err)
	}
	pages := 0
	for _, f := range files {
		doc, err := ExtractFile(b.Context(), f, nil)
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		pages += len(doc.Pages)
	}
	return files, pages
}

// BenchmarkExtract is the whole extraction (pdfinfo, pdftotext -bbox-layout,
// layout analysis) over every fixture PDF; pages/s is its throughput.
func BenchmarkExtract(b *testing.B) {
	files, pages := fixtureFiles(b)
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			if _, err := ExtractFile(b.Context(), f, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkPdftotextAlone is the baseline: plain `pdftotext file -` over the
// same PDFs, no layout, no analysis.
func BenchmarkPdftotextAlone(b *testing.B) {
	files, pages := fixtureFiles(b)
	b.ResetTimer()
	for b.Loop() {
		for _, f := range files {
			if err := exec.CommandContext(b.Context(), "pdftotext", "-enc", "UTF-8", f, "-").Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(pages*b.N)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkDecodeBBoxLayout decodes pdftotext's -bbox-layout output of every
// fixture PDF, held in memory, with each candidate decoder: encoding/xml's
// token decoder (what extraction used before issue 18) and the scanner of the
// format's fixed vocabulary (what it uses now). MB/s is of XHTML.
func BenchmarkDecodeBBoxLayout(b *testing.B) {
	files, _ := fixtureFiles(b)
	var outs [][]byte
	size := 0
	for _, f := range files {
		out := bboxOf(b, f)
		outs = append(outs, out)
		size += len(out)
	}
	for _, c := range []struct {
		name   string
		decode func(io.Reader) error
	}{
		{"encoding-xml", func(r io.Reader) error { _, _, err := parseBBoxLayoutXML(r, wideLimits); return err }},
		{"scanner", func(r io.Reader) error { _, err := parseBBoxStream(r, wideLimits); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, out := range outs {
					if err := c.decode(bytes.NewReader(out)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
