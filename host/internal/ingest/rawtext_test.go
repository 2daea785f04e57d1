package ingest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// foldLetters is what a reader compares: NFKC, lowercase, letters and digits.
func foldLetters(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, pdftext.Normalize(s))
}

// TestAStoredPassageMapsBackToThePrintedWords: a paper read from a PDF whose
// text has ligatures stores clean passages (no ligature) with the raw text,
// the map and each passage's raw span, and the stored map leads every
// passage back to raw text with the same letters, inside its stored span.
func TestAStoredPassageMapsBackToThePrintedWords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)

	st := papers.New(b.pool)
	raw, spans, err := st.VisibleRawText(ctx, b.ann, res.PaperID)
	require.NoError(t, err)
	require.True(t, strings.ContainsAny(raw.Content, "\uFB00\uFB03\uFB04"), "the raw text is as printed, ligatures and all")
	text, err := st.VisibleText(ctx, b.ann, res.PaperID)
	require.NoError(t, err)
	require.False(t, strings.ContainsAny(text.Content, "\uFB00\uFB01\uFB02\uFB03\uFB04"), "the clean text has none")
	require.Len(t, raw.PageStarts, len(text.PageStarts))
	m, err := pdftext.OffsetMapFromInts(raw.Map)
	require.NoError(t, err)
	require.NotEmpty(t, spans)
	for _, s := range spans {
		var printed strings.Builder
		for _, p := range m.Pieces(s.Start, s.End) {
			require.GreaterOrEqual(t, p[0], s.RawStart)
			require.LessOrEqual(t, p[1], s.RawEnd, "the stored span holds every printed piece")
			printed.WriteString(raw.Content[p[0]:p[1]])
		}
		require.Equal(t, foldLetters(text.Content[s.Start:s.End]), foldLetters(printed.String()), "passage %s", s.ChunkID)
	}

	_, _, err = st.VisibleRawText(ctx, b.bob, res.PaperID)
	require.ErrorIs(t, err, papers.ErrNotFound, "another user's private paper")
}
