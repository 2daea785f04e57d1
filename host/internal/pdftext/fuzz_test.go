package pdftext

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// fuzzLimits are the caps the fuzz target reads under: the production caps
// scaled to a fuzz input, so the caps themselves are exercised.
var fuzzLimits = limits{pages: 20, textBytes: 256 << 10, lines: 5000, outputBytes: 4 << 20, tokenBytes: 64 << 10}

// addBBoxSeeds adds what `pdftotext -bbox-layout` writes for the package's test
// PDFs and the first two pages of each fixture PDF (page 1 is where the metadata
// is), when pdftotext is installed; the fixtures are read, never copied.
func addBBoxSeeds(f *testing.F) {
	f.Add([]byte(`<html><head><title>T &amp; x</title><meta name="Author" content="A B"/></head><body><doc><page width="612" height="792"><flow><block><line xMin="72" yMin="80" xMax="300" yMax="96"><word xMin="72" yMin="80" xMax="120" yMax="96">Title</word></line></block></flow></page></doc></body></html>`))
	if _, err := exec.LookPath("pdftotext"); err != nil {
		return
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pdf"))
	if dir, ok := fixturetest.Find(); ok {
		more, _ := filepath.Glob(filepath.Join(dir, "pdfs", "*.pdf"))
		files = append(files, more...)
	}
	for _, path := range files {
		args := []string{"-bbox-layout", "-enc", "UTF-8", path, "-"}
		if !strings.HasPrefix(path, "testdata") {
			args = append([]string{"-l", "2"}, args...)
		}
		if out, err := exec.CommandContext(context.Background(), "pdftotext", args...).Output(); err == nil && len(out) > 0 {
			f.Add(out)
		}
	}
}

// FuzzAnalyseLayout reads arbitrary bytes as pdftotext's -bbox-layout output,
// seeded with real output, and analyses what it read as ingest does: no panic,
// the caps hold, and the Document keeps the invariants its doc states (pages
// and sections tile Text, references and page offsets lie inside it, the text
// and metadata are valid UTF-8).
func FuzzAnalyseLayout(f *testing.F) {
	addBBoxSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4<<20 {
			return
		}
		out, err := parseBBoxStream(strings.NewReader(string(b)), fuzzLimits)
		if err != nil || len(out.pages) == 0 {
			return
		}
		if len(out.pages) > fuzzLimits.pages {
			t.Fatalf("%d pages read under a cap of %d", len(out.pages), fuzzLimits.pages)
		}
		doc := analyse(out.pages, out.raw)
		if doc.Title == "" || len(doc.Authors) == 0 {
			applyInfo(doc, out.title, out.author)
		}
		checkDocument(t, doc)
	})
}

func checkDocument(t *testing.T, doc *Document) {
	t.Helper()
	if int64(len(doc.Text)) > 2*fuzzLimits.textBytes {
		t.Fatalf("%d bytes of text under a cap of %d", len(doc.Text), fuzzLimits.textBytes)
	}
	for i, p := range doc.Pages {
		if p.Number != i+1 || p.Offset < 0 || p.Offset+len(p.Text) > len(doc.Text) || doc.Text[p.Offset:p.Offset+len(p.Text)] != p.Text {
			t.Fatalf("page %d (number %d, offset %d, %d bytes) is not where it says in %d bytes of text", i+1, p.Number, p.Offset, len(p.Text), len(doc.Text))
		}
		if p.RawOffset < 0 || p.RawOffset+len(p.Raw) > len(doc.Raw) || doc.Raw[p.RawOffset:p.RawOffset+len(p.Raw)] != p.Raw {
			t.Fatalf("page %d's raw text is not where it says", i+1)
		}
	}
	at := 0
	for i, s := range doc.Sections {
		if s.Start != at || s.End < s.Start || s.End > len(doc.Text) {
			t.Fatalf("section %d spans [%d,%d), after %d, in %d bytes", i, s.Start, s.End, at, len(doc.Text))
		}
		at = s.End
	}
	if len(doc.Sections) > 0 && at != len(doc.Text) {
		t.Fatalf("the sections end at %d of %d bytes", at, len(doc.Text))
	}
	for i, r := range doc.References {
		if r.Start < 0 || r.End < r.Start || r.End > len(doc.Text) {
			t.Fatalf("reference %d spans [%d,%d) of %d bytes", i, r.Start, r.End, len(doc.Text))
		}
	}
	for _, s := range []string{doc.Text, doc.Title, doc.DOI, doc.ArXivID, doc.Abstract, doc.Venue} {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 in the document: %q", s)
		}
	}
	for _, a := range doc.Authors {
		if !utf8.ValidString(a.Name + a.Affiliation + a.Email) {
			t.Fatalf("invalid UTF-8 in author %q", a.Name)
		}
	}
}

// FuzzNormalize checks what Normalize promises for any text: it is idempotent,
// trimmed, with single spaces, and valid UTF-8 out of valid UTF-8 in.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"experi-\nment", "state-of-\nthe-art", "\uFB01ne \u201Cq\u201D \u2013 \u00AD", "i\u0308", "  a\t\nb  ", "\u00A0x\u3000y"} {
		f.Add(s)
	}
	if b, ok := fixturetest.Lookup("pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt"); ok {
		f.Add(string(b[:min(len(b), 64<<10)]))
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, again)
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("spacing left in %q", n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, n)
		}
	})
}
