package chunk

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// TestFixturesPages chunks every shared fixture PDF and checks the chunk
// properties and that each chunk's first and last words are on the pages it
// names.
func TestFixturesPages(t *testing.T) {
	t.Parallel()
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
