package chunk

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
)

// eachFixture extracts and chunks every shared fixture PDF and runs check on each,
// as a parallel subtest named after the file.
func eachFixture(t *testing.T, check func(t *testing.T, path string, doc *pdftext.Document, chunks []Chunk)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(t), "pdfs", "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			doc, err := pdftext.ExtractFile(t.Context(), f, nil)
			require.NoError(t, err)
			chunks, err := Split(filepath.Base(f), doc, nil)
			require.NoError(t, err)
			check(t, f, doc, chunks)
		})
	}
}

// TestFixturesPages chunks every shared fixture PDF and checks the chunk
// properties and that each chunk's first and last words are on the pages it
// names.
func TestFixturesPages(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f string, doc *pdftext.Document, chunks []Chunk) {
		require.NotEmpty(t, chunks)
		requireChunkProperties(t, doc, chunks, nil)
		for _, c := range chunks {
			first := strings.Fields(c.Text)[0]
			fields := strings.Fields(c.Text)
			last := fields[len(fields)-1]
			ps, pe := doc.Pages[c.PageStart-1], doc.Pages[c.PageEnd-1]
			require.True(t, strings.HasPrefix(doc.Text[c.Start:ps.Offset+len(ps.Text)], first), "chunk %d starts on page %d", c.Index, c.PageStart)
			require.True(t, strings.HasSuffix(doc.Text[pe.Offset:c.End], last), "chunk %d ends on page %d", c.Index, c.PageEnd)
			require.GreaterOrEqual(t, c.Start, ps.Offset)
			require.LessOrEqual(t, c.End, pe.Offset+len(pe.Text))
		}
	})
}

// TestFixturesPhrasePage finds phrases from the body of fixture papers in the
// chunks and checks the page and section each chunk reports (pages checked
// against the rendered PDFs).
func TestFixturesPhrasePage(t *testing.T) {
	t.Parallel()
	dir := fixturetest.Dir(t)
	tests := []struct {
		file, phrase, section string
		page                  int
	}{
		{"pldi09_tracemonkey_two_column_acm.pdf", "We solve the nested loop problem by recording nested trace trees.", "Introduction", 2},
		{"pldi09_tracemonkey_two_column_acm.pdf", "This section provides an overview of our system by describing how TraceMonkey executes an example program.", "Overview: Example Tracing Run", 2},
		{"s2orc_acl2020_two_column.pdf", "To construct S2ORC, we must overcome challenges in (i) paper metadata aggregation", "Constructing the corpus", 2},
		{"hindawi_rrp_2010_157939_with_groundtruth.pdf", "Focus groups were conducted with fifteen participants", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.phrase[:16], func(t *testing.T) {
			t.Parallel()
			doc, err := pdftext.ExtractFile(t.Context(), filepath.Join(dir, "pdfs", tt.file), nil)
			require.NoError(t, err)
			chunks, err := Split(tt.file, doc, nil)
			require.NoError(t, err)
			found := 0
			for _, c := range chunks {
				if strings.Contains(pdftext.Normalize(c.Text), tt.phrase) {
					found++
					require.LessOrEqual(t, c.PageStart, tt.page)
					require.GreaterOrEqual(t, c.PageEnd, tt.page)
					require.Equal(t, tt.section, c.Section)
				}
			}
			require.NotZero(t, found, "phrase %q in no chunk", tt.phrase)
		})
	}
}

// lineBreakHyphen is a word split by a hyphen at the end of a line (or page):
// a letter, a hyphen, the break, and a lowercase letter.
var lineBreakHyphen = regexp.MustCompile(`\p{L}[-\x{00AD}\x{2010}][ \t]*[\n\f]\s*\p{Ll}`)

var bareNumber = regexp.MustCompile(`^\s*\d+\s*$`)

func isLigature(r rune) bool { return r >= '\uFB00' && r <= '\uFB06' }

// fold reduces text to what a reader compares: NFKC (ligatures spelled out),
// lowercase, letters and digits only.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, pdftext.Normalize(s))
}

// rawOf is the raw text the clean bytes [start, end) came from, piece by piece.
func rawOf(doc *pdftext.Document, start, end int) string {
	var b strings.Builder
	for _, p := range doc.Map.Pieces(start, end) {
		b.WriteString(doc.Raw[p[0]:p[1]])
		b.WriteByte(' ')
	}
	return b.String()
}

// TestFixturesPassagesMapToThePrintedWords is issue 16's check of the map back
// to the original: for every passage of every fixture PDF, and every word of
// it, the raw text its clean offsets map back to normalises to the same
// letters, and the passage's raw span starts on its first page and ends on its
// last (or the next, for a word hyphenated across the page break).
func TestFixturesPassagesMapToThePrintedWords(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f string, doc *pdftext.Document, chunks []Chunk) {
		require.NotEmpty(t, doc.Raw)
		for _, c := range chunks {
			require.Equal(t, fold(c.Text), fold(rawOf(doc, c.Start, c.End)), "passage %d on page %d", c.Index, c.PageStart)
			require.Less(t, c.RawStart, c.RawEnd)
			require.Equal(t, c.PageStart, doc.RawPageAt(c.RawStart), "passage %d starts on its page in the raw text", c.Index)
			last := doc.RawPageAt(c.RawEnd - 1)
			require.True(t, last == c.PageEnd || last == c.PageEnd+1, "passage %d ends on page %d of the raw text, not %d", c.Index, last, c.PageEnd)
			for _, w := range (&words{text: doc.Text, at: c.Start, end: c.End}).all() {
				clean := doc.Text[w[0]:w[1]]
				require.Equal(t, fold(clean), fold(rawOf(doc, w[0], w[1])), "word %q of passage %d maps back to %q", clean, c.Index, rawOf(doc, w[0], w[1]))
			}
		}
	})
}

// TestFixturesCleanPassages is issue 16's check of the clean text: no passage
// of any fixture PDF holds a ligature character, a word split by a line-break hyphen, a running
// header or footer printed on most pages (once, as the title on page 1 may
// be, is not running), nor do most pages start or end with a bare number.
func TestFixturesCleanPassages(t *testing.T) {
	t.Parallel()
	eachFixture(t, func(t *testing.T, f string, doc *pdftext.Document, chunks []Chunk) {
		running := pdftexttest.PrintedRunning(t, f)
		lines := map[int]string{} // the passages' lines by offset, overlaps once
		for _, c := range chunks {
			require.NotRegexp(t, lineBreakHyphen, c.Text, "passage %d on page %d", c.Index, c.PageStart)
			require.False(t, strings.ContainsFunc(c.Text, isLigature), "passage %d on page %d holds a ligature: %q", c.Index, c.PageStart, c.Text)
			off := c.Start
			for _, l := range strings.FieldsFunc(c.Text, func(r rune) bool { return r == '\n' || r == '\f' }) {
				off = c.Start + strings.Index(c.Text[off-c.Start:], l)
				lines[off] = pdftexttest.EdgeKey(l)
				off += len(l)
			}
		}
		times := map[string]int{}
		for _, k := range lines {
			if running[k] && k != "#" {
				times[k]++
			}
		}
		for k, n := range times {
			require.LessOrEqual(t, n, 1, "running header %q is in %d passage lines", k, n)
		}
		numbered := 0 // pages whose text starts or ends with a bare number
		for _, p := range doc.Pages {
			ls := strings.Split(strings.TrimSpace(p.Text), "\n")
			if bareNumber.MatchString(ls[0]) || bareNumber.MatchString(ls[len(ls)-1]) {
				numbered++
			}
		}
		if len(doc.Pages) >= 3 {
			require.Less(t, numbered, max(2, (len(doc.Pages)+1)/2), "pages keep their numbers at their edges")
		}
	})
}

// all returns the spans of every word left.
func (w *words) all() [][2]int {
	var out [][2]int
	for {
		s, ok := w.next()
		if !ok {
			return out
		}
		out = append(out, s)
	}
}
