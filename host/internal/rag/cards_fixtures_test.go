package rag_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/chunk"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// Issue 17 item 5: over every fixture PDF, read and chunked as the ingest job
// does and drafted into cards as the cards.generate job does (the body passages,
// the builtin drafter behind the gateway), no cloze blanks part of a word (a
// hyphenated or line-broken word, "cita- ____"), a running header, a bare number
// or a stop word.
func TestFixtureClozeCardsBlankWholeTerms(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(t), "pdfs", "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	svc, _ := cardsService(t, extractive.New(nil))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			doc, err := pdftext.ExtractFile(t.Context(), f, nil)
			require.NoError(t, err)
			chunks, err := chunk.Split(filepath.Base(f), doc, nil)
			require.NoError(t, err)
			var passages []learning.Passage
			for _, c := range chunks {
				switch strings.ToLower(c.Section) { // papers.BodyPassages leaves these out
				case "references", "bibliography", "acknowledgements", "acknowledgments":
					continue
				}
				passages = append(passages, learning.Passage{ChunkID: uuid.New(), Page: c.PageStart, Text: c.Text})
			}
			drafts, err := svc.DraftCards(context.Background(), doc.Title, passages, extractive.MaxCards)
			require.NoError(t, err)
			require.NotEmpty(t, drafts, "the paper gives cards to check")
			running := pdftexttest.PrintedRunning(t, f)
			delete(running, "#") // page numbers are numbers, never clozes anyway
			for _, d := range drafts {
				requireWholeTermCloze(t, d, running)
			}
		})
	}
}

// requireWholeTermCloze checks one draft: its answer is a term (letters, not a
// stop word, not a running header line), each blank of its front stands where
// a whole word stood (no letter, digit or word-joining hyphen against it), and
// the front with the answer put back is the sentence of the source.
func requireWholeTermCloze(t *testing.T, d learning.Draft, running map[string]bool) {
	t.Helper()
	msg := func(what string) string { return what + ": front " + d.Front + " | back " + d.Back }
	require.Contains(t, d.Front, extractive.Blank, msg("a cloze has a blank"))
	require.NotEmpty(t, d.Back, msg("a cloze has an answer"))
	require.NotContains(t, d.Back, "\n", msg("the back is the answer alone; the sentence is kept apart"))
	require.True(t, strings.ContainsFunc(d.Back, unicode.IsLetter), msg("a bare number is no cloze"))
	require.False(t, clozeStopWords[strings.ToLower(d.Back)], msg("a stop word is no cloze"))
	require.False(t, running[pdftexttest.EdgeKey(d.Back)], msg("a running header is no cloze"))
	rest := d.Front
	for {
		i := strings.Index(rest, extractive.Blank)
		if i < 0 {
			break
		}
		before, after := rest[:i], rest[i+len(extractive.Blank):]
		require.False(t, partOfWordBefore(before), msg("the blank continues the word before it"))
		require.False(t, partOfWordAfter(after), msg("the blank runs into the word after it"))
		rest = after
	}
	sentence := strings.ReplaceAll(d.Front, extractive.Blank, d.Back)
	require.Equal(t, d.Source, sentence, msg("the front is the source sentence with its term blanked"))
	for line := range running {
		if len(strings.Fields(line)) >= 3 {
			require.NotContains(t, pdftexttest.EdgeKey(sentence), line, msg("the sentence holds a running header"))
		}
	}
}

// partOfWordBefore reports whether text ending right before a blank ends inside
// a word: a letter or digit, or a hyphen after one ("cita-" or "cita- ").
func partOfWordBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return true
	}
	s = strings.TrimRight(s, " ")
	r, n := utf8.DecodeLastRuneInString(s)
	if r == '-' || r == '\u2010' || r == '\u00AD' {
		p, _ := utf8.DecodeLastRuneInString(s[:len(s)-n])
		return unicode.IsLetter(p) || unicode.IsDigit(p)
	}
	return false
}

// partOfWordAfter reports whether text right after a blank continues a word: a
// letter or digit (a plural "s" aside), or a hyphen before one ("-tion").
func partOfWordAfter(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	if r == 's' {
		next, _ := utf8.DecodeRuneInString(s[n:])
		return unicode.IsLetter(next) || unicode.IsDigit(next)
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return true
	}
	if r == '-' || r == '\u2010' || r == '\u00AD' {
		next, _ := utf8.DecodeRuneInString(s[n:])
		return unicode.IsLetter(next) || unicode.IsDigit(next)
	}
	return false
}

// clozeStopWords are English function words no card should ask for.
var clozeStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but of to in on at by for with from as is are was were be been
		this that these those it its we our they their he she his her which who whom what when where why how
		not no than then there here also such can may might will would should could do does did has have had`) {
		clozeStopWords[w] = true
	}
}
