package evals

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/rag"
)

// The built-in set has the size and the kinds issue 17 asks for, and its CI slice
// covers a few PDFs with answerable and unanswerable questions.
func TestFullTextSetShape(t *testing.T) {
	t.Parallel()
	set, err := LoadFullText("")
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, q := range set.Questions {
		kinds[q.Kind]++
	}
	require.GreaterOrEqual(t, len(set.Questions)-kinds[KindUnanswerable], 40)
	require.GreaterOrEqual(t, kinds[KindUnanswerable], 8)
	for _, k := range questionKinds {
		require.Positive(t, kinds[k], "no question of kind %s", k)
	}
	slice := set.Slice()
	require.GreaterOrEqual(t, len(slice.Questions), 10)
	require.LessOrEqual(t, len(slice.Questions), 13)
	require.GreaterOrEqual(t, len(slice.Papers), 3)
	require.LessOrEqual(t, len(slice.Papers), 4)
	require.True(t, slices.ContainsFunc(slice.Questions, func(q FullTextQuestion) bool { return !q.Answerable() }))
}

// Every gold phrase of every answerable question stands on one of its gold pages
// of the text the app extracts, and every gold page holds one: the set's labels
// match the PDFs it names.
func TestFullTextGoldEvidenceStandsOnGoldPages(t *testing.T) {
	t.Parallel()
	set, err := LoadFullText("")
	require.NoError(t, err)
	src, err := FullTextOpts{Fixtures: fixturetest.Dir(t)}.source()
	require.NoError(t, err)
	pages := map[string][]string{} // paper id -> folded text of each page
	for _, p := range set.Papers {
		pdf, err := src.readPaper(p)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), p.fileName())
		require.NoError(t, os.WriteFile(path, pdf, 0o600))
		doc, err := pdftext.ExtractFile(context.Background(), path, nil)
		require.NoError(t, err, p.ID)
		for _, pg := range doc.Pages {
			pages[p.ID] = append(pages[p.ID], fold(pg.Text))
		}
	}
	var wrong []string // every disagreement, so one run lists them all
	for _, q := range set.Questions {
		if !q.Answerable() {
			continue
		}
		text := pages[q.Paper]
		for _, phrase := range q.Evidence {
			var on []int
			for i, pg := range text {
				if strings.Contains(pg, fold(phrase)) {
					on = append(on, i+1)
				}
			}
			if len(on) == 0 || slices.ContainsFunc(on, func(p int) bool { return !slices.Contains(q.Pages, p) }) {
				wrong = append(wrong, fmt.Sprintf("%q: %q stands on pages %v of %s, gold pages %v", q.Question, phrase, on, q.Paper, q.Pages))
			}
		}
		for _, p := range q.Pages {
			if p < 1 || p > len(text) || !holdsAny(text[p-1], q.Evidence) {
				wrong = append(wrong, fmt.Sprintf("%q: gold page %d holds no gold phrase", q.Question, p))
			}
		}
	}
	require.Empty(t, wrong)
}

// A fixture that is not the file the set was written for is refused with a
// sentence that says so, and a missing fixtures folder says how to give it.
func TestFullTextRefusesOtherFixtures(t *testing.T) {
	t.Parallel()
	paper := FullTextPaper{ID: "x", Fixture: "pdfs/x.pdf", SHA256: strings.Repeat("ab", 32)}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pdfs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pdfs", "x.pdf"), []byte("%PDF-1.4 another file"), 0o600))
	_, err := fullTextSource{fixtures: dir}.readPaper(paper)
	require.ErrorContains(t, err, "is not the file the set was written for")
	_, err = fullTextSource{}.readPaper(paper)
	require.ErrorIs(t, err, ErrNoFixtures)
	_, err = fullTextSource{fixtures: t.TempDir()}.readPaper(paper)
	require.ErrorContains(t, err, "is not in the fixtures folder")
}

// judge counts a hit only for a cited statement of the right paper whose words
// and passage hold gold evidence; a page hit only for a gold page; an answer that
// cites nothing or opens by saying the papers do not hold it abstains.
func TestJudgeScoresOneAnswer(t *testing.T) {
	t.Parallel()
	gold, other := uuid.New(), uuid.New()
	q := FullTextQuestion{Question: "How many?", Kind: KindNumber, Paper: "p", Evidence: []string{"fifteen participants"}, Pages: []int{2}}
	passage := "Focus groups were conducted with fif-\nteen participants attending one of two programmes."
	answer := func(text string, cites ...rag.Citation) citedAnswer {
		ps := map[string]string{}
		for _, c := range cites {
			ps[c.Marker] = passage
		}
		return citedAnswer{answer: &rag.Answer{Text: text, Citations: cites}, passages: ps}
	}
	quote := `According to the documents:` + "\n\n" + `"Focus groups were conducted with fifteen participants attending one of two programmes." [S1]`

	j := judge(q, gold, answer(quote, rag.Citation{Marker: "S1", PaperID: gold, Page: 2}))
	require.Equal(t, judged{hit: true, pageHit: true, citations: 1, correct: 1}, j)

	j = judge(q, gold, answer(quote, rag.Citation{Marker: "S1", PaperID: gold, Page: 1}))
	require.Equal(t, judged{hit: true, citations: 1, correct: 1}, j, "page 1 is not a gold page")

	j = judge(q, gold, answer(quote, rag.Citation{Marker: "S1", PaperID: other, Page: 2}))
	require.Equal(t, judged{citations: 1}, j, "another paper's passage is no evidence")

	j = judge(q, gold, answer(`"Sessions were guided by a schedule." [S1]`, rag.Citation{Marker: "S1", PaperID: gold, Page: 2}))
	require.Equal(t, judged{pageHit: true, citations: 1, correct: 1}, j, "the quote holds no gold phrase")

	require.True(t, judge(q, gold, answer(rag.NoContext)).abstained)
	require.True(t, judge(q, gold, answer("The documents do not contain the answer to this question.")).abstained)
	require.True(t, judge(q, gold, answer("The papers do not state how many took part, but see [S1].", rag.Citation{Marker: "S1", PaperID: gold, Page: 2})).abstained)
	require.False(t, judge(q, gold, answer(quote, rag.Citation{Marker: "S1", PaperID: gold, Page: 2})).abstained)
}

// The CI slice of the full-text set with the builtin method: floors set just
// under what the method reached when the set was written (docs/benchmarks.md,
// "Answer quality on full text"), so a regression fails the build. Raise them
// as the method improves; the goals of issue 17 are hit >= 0.8, page >= 0.75,
// abstention >= 0.8.
func TestFullTextSliceFloors(t *testing.T) {
	t.Parallel()
	fixtures := fixturetest.Dir(t)
	pool := dbtest.NewDB(t)
	host, err := BuiltinStack(context.Background(), pool, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(host.Close)
	set, err := LoadFullText("")
	require.NoError(t, err)
	start := time.Now()
	s, err := RunFullText(context.Background(), pool, host.RAG, host.Ingest, set.Slice(), FullTextOpts{Fixtures: fixtures, Name: "fulltext (CI slice)"})
	require.NoError(t, err)
	t.Logf("%s\n(%s)", s, time.Since(start).Round(time.Millisecond))
	require.Equal(t, 13, s.Questions)
	// Reached on 2026-11-27 when the slice was chosen: hit 0.900 (9/10), page
	// 1.000 (10/10), abstention precision 1.000 (2/2), recall 0.667 (2/3),
	// citation precision 0.688 (11/16). After the question kinds and the
	// three-quote cap: hit 0.800 (the f-measure question is lost, the whole set
	// holds its 44/52), citation precision 0.800 (12/15). The hit floor is the
	// issue's goal (0.8); the others stay one miss under what is reached.
	require.GreaterOrEqual(t, s.EvidenceHitRate, 0.8, "evidence hit rate")
	require.GreaterOrEqual(t, s.PageAccuracy, 0.95, "page accuracy")
	require.GreaterOrEqual(t, s.AbstentionPrecision, 0.95, "abstention precision")
	require.GreaterOrEqual(t, s.AbstentionRecall, 0.65, "abstention recall")
	require.GreaterOrEqual(t, s.CitationPrecision, 0.75, "citation precision")
	require.Less(t, time.Since(start), time.Minute, "the CI slice must stay quick")
}

// With a model assigned to the answer role that cannot answer (here: its plugin
// is not running), every answer comes from the builtin method and the report
// counts and says so, so an admin never reads builtin figures as the model's.
func TestFullTextCountsFallbacksOfTheAssignedModel(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	host, err := BuiltinStack(context.Background(), pool, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(host.Close)
	v, err := json.Marshal(llmgw.Assignment{Role: llmgw.RoleAnswer, Provider: "openai", Model: "gpt-4o-mini"})
	require.NoError(t, err)
	_, err = host.Settings.PutSystem(context.Background(), "llm.roles."+llmgw.RoleAnswer, v)
	require.NoError(t, err)
	set := &FullTextSet{
		Papers: []FullTextPaper{{ID: "irrigation", Own: "fulltext/irrigation.pdf"}},
		Questions: []FullTextQuestion{
			{Question: "At what depth were the soil moisture sensors buried?", Kind: KindMethod, Paper: "irrigation",
				Evidence: []string{"buried at a depth of 20 centimetres"}, Pages: []int{1}},
			{Question: "What is the boiling point of ethanol at an altitude of 2,000 metres?", Kind: KindUnanswerable},
		},
	}
	s, err := RunFullText(context.Background(), pool, host.RAG, host.Ingest, set, FullTextOpts{})
	require.NoError(t, err)
	require.Equal(t, 2, s.Fallbacks)
	require.Equal(t, 1, s.Hits)
	require.Contains(t, s.String(), "fallbacks             2 answers came from the builtin method because the assigned model failed")
}
