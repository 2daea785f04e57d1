package pdftext

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// requireWellFormed checks the invariants every Document keeps.
func requireWellFormed(t *testing.T, doc *Document) {
	t.Helper()
	require.NotEmpty(t, doc.Pages)
	for i, p := range doc.Pages {
		require.Equal(t, i+1, p.Number)
		require.Equal(t, p.Text, doc.Text[p.Offset:p.Offset+len(p.Text)])
		require.Equal(t, i+1, doc.PageAt(p.Offset))
		if i > 0 {
			require.Equal(t, "\f", doc.Text[p.Offset-1:p.Offset], "pages are joined by a form feed")
		}
	}
	require.NotEmpty(t, doc.Sections)
	require.Equal(t, 0, doc.Sections[0].Start)
	require.Equal(t, len(doc.Text), doc.Sections[len(doc.Sections)-1].End)
	for i, s := range doc.Sections {
		require.Less(t, s.Start, s.End, "section %d %q is empty", i, s.Title)
		require.Equal(t, doc.PageAt(s.Start), s.Page)
		if i > 0 {
			require.Equal(t, doc.Sections[i-1].End, s.Start, "sections tile the text")
		}
	}
	for i, r := range doc.References {
		require.NotEmpty(t, strings.TrimSpace(r.Text))
		require.LessOrEqual(t, r.Start, r.End)
		if i > 0 {
			require.LessOrEqual(t, doc.References[i-1].End, r.Start, "references are in order")
		}
	}
}

func TestExtractSyntheticPaper(t *testing.T) {
	t.Parallel()
	doc, err := ExtractFile(t.Context(), filepath.Join("testdata", "paper.pdf"), nil)
	require.NoError(t, err)
	requireWellFormed(t, doc)

	require.Len(t, doc.Pages, 2)
	require.Equal(t, "A Synthetic Study of Column Order in Scholarly Papers", doc.Title)
	require.Equal(t, "10.5555/synthetic.2024.42", doc.DOI)
	require.Equal(t, "2401.01234v2", doc.ArXivID)

	// Two columns are read column by column: the whole left column, then the right.
	text := Normalize(doc.Text)
	left := strings.Index(text, "Alpha line one opens the introduction of this synthetic paper")
	leftEnd := strings.Index(text, "Alpha line four ends the left column of the first page with a full stop.")
	right := strings.Index(text, "Beta line one continues the introduction in the right column.")
	require.GreaterOrEqual(t, left, 0)
	require.Greater(t, leftEnd, left)
	require.Greater(t, right, leftEnd)

	type sec struct {
		kind          SectionKind
		number, title string
		level, page   int
	}
	var got []sec
	for _, s := range doc.Sections {
		got = append(got, sec{s.Kind, s.Number, s.Title, s.Level, s.Page})
	}
	require.Equal(t, []sec{
		{KindFront, "", "", 0, 1},
		{KindAbstract, "", "Abstract", 1, 1},
		{KindBody, "1", "Introduction", 1, 1},
		{KindBody, "2", "Method", 1, 1},
		{KindBody, "2.1", "Data", 2, 1},
		{KindBody, "3", "Results", 1, 2},
		{KindReferences, "", "References", 1, 2},
	}, got)
	require.True(t, strings.HasPrefix(doc.Text[doc.Sections[2].Start:], "1 Introduction\n"))

	type ref struct{ prefix, doi, arxiv string }
	var refs []ref
	for _, r := range doc.References {
		require.Equal(t, r.Text, strings.ReplaceAll(doc.Text[r.Start:r.End], "\n\n", "\n"))
		refs = append(refs, ref{r.Text[:3], r.DOI, r.ArXivID})
	}
	require.Equal(t, []ref{
		{"[1]", "10.5555/synthetic.ref.001", ""},
		{"[2]", "", "2101.00001v2"},
		{"[3]", "", ""},
		{"[4]", "10.5555/synthetic.ref.004", ""},
	}, refs)
}

func TestExtractReaderAt(t *testing.T) {
	t.Parallel()
	b := readTestdata(t, "paper.pdf")
	tmp := t.TempDir()
	doc, err := Extract(t.Context(), bytes.NewReader(b), int64(len(b)), &Opts{TempDir: tmp})
	require.NoError(t, err)
	fromFile, err := ExtractFile(t.Context(), filepath.Join("testdata", "paper.pdf"), nil)
	require.NoError(t, err)
	require.Equal(t, fromFile, doc)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the temporary copy is removed")
}

func TestExtractOwnerPasswordOnly(t *testing.T) {
	t.Parallel()
	// Encrypted with an empty user password and copying forbidden: it opens,
	// so the text is extracted.
	doc, err := ExtractFile(t.Context(), filepath.Join("testdata", "nocopy.pdf"), nil)
	require.NoError(t, err)
	require.Equal(t, "A Synthetic Study of Column Order in Scholarly Papers", doc.Title)
}

func TestExtractFailures(t *testing.T) {
	t.Parallel()
	paper := readTestdata(t, "paper.pdf")
	tests := []struct {
		name  string
		input []byte
		opts  *Opts
		want  error
	}{
		{"not a PDF", []byte("<html><body>404 not found</body></html>"), nil, ErrMalformed},
		{"too short", []byte("%PDF-1.4"), nil, ErrMalformed},
		{"truncated to half", paper[:len(paper)/2], nil, ErrMalformed},
		{"truncated before the trailer", paper[:len(paper)-40], nil, ErrMalformed},
		{"garbage with header and trailer", []byte("%PDF-1.7\nthis is not a pdf body at all\n%%EOF\n"), nil, ErrMalformed},
		{"no pages", readTestdata(t, "empty.pdf"), nil, ErrEmpty},
		{"password required", readTestdata(t, "encrypted.pdf"), nil, ErrEncrypted},
		{"image only", readTestdata(t, "scanned.pdf"), nil, ErrScanned},
		{"over the page limit", readTestdata(t, "pages3.pdf"), &Opts{MaxPages: 2}, ErrTooManyPages},
		{"pdftotext missing", paper, &Opts{PdftotextPath: "/nonexistent/pdftotext"}, ErrToolMissing},
		{"pdfinfo missing", paper, &Opts{PdfinfoPath: "/nonexistent/pdfinfo"}, ErrToolMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := Opts{}
			if tt.opts != nil {
				opts = *tt.opts
			}
			opts.TempDir = t.TempDir()
			doc, err := Extract(t.Context(), bytes.NewReader(tt.input), int64(len(tt.input)), &opts)
			require.ErrorIs(t, err, tt.want)
			require.Nil(t, doc)
			require.True(t, strings.HasPrefix(err.Error(), "pdftext: "), err.Error())
			left, rerr := os.ReadDir(opts.TempDir)
			require.NoError(t, rerr)
			require.Empty(t, left, "nothing is left behind")
		})
	}
}

func TestPageLimitError(t *testing.T) {
	t.Parallel()
	_, err := ExtractFile(t.Context(), filepath.Join("testdata", "pages3.pdf"), &Opts{MaxPages: 2})
	var ple *PageLimitError
	require.ErrorAs(t, err, &ple)
	require.Equal(t, PageLimitError{Pages: 3, Limit: 2}, *ple)
	require.Contains(t, err.Error(), "3 pages, limit 2")

	doc, err := ExtractFile(t.Context(), filepath.Join("testdata", "pages3.pdf"), &Opts{MaxPages: 3, MinPageChars: 10})
	require.NoError(t, err)
	require.Len(t, doc.Pages, 3)
	require.Equal(t, 500, (*Opts)(nil).withDefaults().MaxPages)
}

func TestExtractCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ExtractFile(ctx, filepath.Join("testdata", "paper.pdf"), nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestExtractFileMissing(t *testing.T) {
	t.Parallel()
	_, err := ExtractFile(t.Context(), filepath.Join("testdata", "absent.pdf"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}
