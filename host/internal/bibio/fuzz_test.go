package bibio

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// maxFuzzInput bounds the fuzz inputs; the import route reads at most
// papers.MaxImportBytes (10 MiB), and the work bounds scale with the input.
const maxFuzzInput = 1 << 20

// addSeeds adds this package's testdata files and the recorded Crossref BibTeX.
func addSeeds(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	if b, ok := fixturetest.Lookup("crossref/works_transform_bibtex_s42256-024-00832-8.bib"); ok {
		f.Add(string(b))
	}
}

// checkEntries fails t when the entries read from src break what the import
// relies on: valid UTF-8 out of valid UTF-8 in, lines inside the input, and the
// text of all entries bounded by the input (the @string macros cannot blow it up).
func checkEntries(t *testing.T, src string, entries []Entry, errs []LineError) {
	t.Helper()
	lines := 1
	for i := range len(src) {
		if src[i] == '\n' {
			lines++
		}
	}
	total := 0
	for _, e := range entries {
		if e.Line < 1 || e.Line > lines {
			t.Fatalf("entry %q at line %d of %d", e.Key, e.Line, lines)
		}
		if e.Title == "" {
			t.Fatalf("entry %q kept without a title", e.Key)
		}
		fields := append([]string{e.Key, e.Type, e.Title, e.Venue, e.DOI, e.ArxivID, e.PubMedID, e.URL, e.PDFURL,
			e.Abstract, e.Volume, e.Issue, e.Pages, e.Publisher}, e.Authors...)
		for _, s := range fields {
			total += len(s)
			if utf8.ValidString(src) && !utf8.ValidString(s) {
				t.Fatalf("entry %q holds invalid UTF-8 %q", e.Key, s)
			}
		}
	}
	if limit := 4*len(src) + 1<<16; total > limit {
		t.Fatalf("%d entries hold %d bytes from an input of %d bytes", len(entries), total, len(src))
	}
	for _, e := range errs {
		if e.Line < 1 || e.Line > lines {
			t.Fatalf("error %q at line %d of %d", e.Message, e.Line, lines)
		}
	}
	if len(errs) > len(src)+1 {
		t.Fatalf("%d errors for %d bytes", len(errs), len(src))
	}
}

// FuzzParseBibTeX reads arbitrary text as BibTeX, seeded with the test files and
// the recorded Crossref export: no panic, no hang, bounded output.
func FuzzParseBibTeX(f *testing.F) {
	addSeeds(f)
	f.Add("@string{j = {J. Chem.}}\n@article{k, title = \"A {\\\"u}ber\" # j, author = {A and {B and C} and D}, month = jan}")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > maxFuzzInput {
			return
		}
		entries, errs := ParseBibTeX(src)
		checkEntries(t, src, entries, errs)
	})
}

// FuzzParseRIS reads arbitrary text as RIS, seeded with the test files: no panic,
// no hang, bounded output.
func FuzzParseRIS(f *testing.F) {
	addSeeds(f)
	f.Add("TY  - JOUR\nTI  - T\nAU  - A\nAB  - x\ncontinued\nPY  - 2017/06/12/\nER  - \n")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > maxFuzzInput {
			return
		}
		entries, errs := ParseRIS(src)
		checkEntries(t, src, entries, errs)
	})
}

// FuzzPlainText turns arbitrary LaTeX-flavoured values into plain text: no panic,
// valid UTF-8 out of valid UTF-8 in, and no growth past the input.
func FuzzPlainText(f *testing.F) {
	for _, s := range []string{`\"u \'{e} \c{c} {\ss} \textbackslash \unknown{x}`, `\`, `{\v{}}`, `\'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := PlainText(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("PlainText(%q) = %q, not valid UTF-8", s, out)
		}
		if len(out) > 4*len(s)+16 {
			t.Fatalf("PlainText grew %d bytes into %d", len(s), len(out))
		}
	})
}
