package extractive

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// The tests read real text from the shared fixtures folder ($LECTERN_FIXTURES, or
// ../shared/fixtures next to the repository) and skip, naming the folder, when it
// is absent. Nothing from it is copied into the repository.

// qasperPaper is one paper of qa/qasper_sample_small.json.
type qasperPaper struct {
	Title    string `json:"title"`
	Abstract string `json:"abstract"`
	FullText []struct {
		SectionName string   `json:"section_name"`
		Paragraphs  []string `json:"paragraphs"`
	} `json:"full_text"`
	QAs []struct {
		Question string `json:"question"`
		Answers  []struct {
			Answer struct {
				Unanswerable bool     `json:"unanswerable"`
				Evidence     []string `json:"evidence"`
			} `json:"answer"`
		} `json:"answers"`
	} `json:"qas"`
}

func loadQasper(t testing.TB) (string, qasperPaper) {
	t.Helper()
	dir := plugintest.FixturesDir(t, "qa")
	var all map[string]qasperPaper
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, "qasper_sample_small.json"), &all))
	require.NotEmpty(t, all)
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids[0], all[ids[0]]
}

// qasperDocs makes the documents the host would send for a QASPER paper: the
// abstract, then one document per non-empty paragraph, ids S1, S2, ...
func qasperDocs(paperID string, p qasperPaper) []llm.Document {
	docs := []llm.Document{{ID: "S1", PaperID: paperID, Title: p.Title, Section: "Abstract", Text: p.Abstract}}
	for _, sec := range p.FullText {
		for _, para := range sec.Paragraphs {
			if strings.TrimSpace(para) == "" {
				continue
			}
			docs = append(docs, llm.Document{ID: "S" + strconv.Itoa(len(docs)+1), PaperID: paperID, Title: p.Title, Section: sec.SectionName, Text: para})
		}
	}
	return docs
}

// pubmedEntry is one question of qa/pubmedqa_pqal_subset_shared.json.
type pubmedEntry struct {
	PMID     string
	Question string   `json:"QUESTION"`
	Contexts []string `json:"CONTEXTS"`
	Labels   []string `json:"LABELS"`
}

func loadPubMedQA(t testing.TB) []pubmedEntry {
	t.Helper()
	dir := plugintest.FixturesDir(t, "qa")
	var all map[string]pubmedEntry
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, "pubmedqa_pqal_subset_shared.json"), &all))
	out := make([]pubmedEntry, 0, len(all))
	for id, e := range all {
		e.PMID = id
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b pubmedEntry) int {
		x, _ := strconv.Atoi(a.PMID)
		y, _ := strconv.Atoi(b.PMID)
		return x - y
	})
	return out
}

// abstract joins an entry's contexts as one abstract.
func (e pubmedEntry) abstract() string { return strings.Join(e.Contexts, "\n") }

// hindawiText is the ground-truth full text of a six-page two-column paper as
// extracted from its PDF: hard line breaks, "et al.", initials, a reference list.
func hindawiText(t testing.TB) string {
	t.Helper()
	dir := plugintest.FixturesDir(t, "pdfs")
	return string(plugintest.ReadFixture(t, dir, "hindawi_rrp_2010_157939.groundtruth_fulltext.txt"))
}

// papermageText is the text layer of a PaperMage parse of a four-page ACM paper:
// hyphenated line ends ("tech-\nnology"), curly quotes, a reference list.
func papermageText(t testing.TB) string {
	t.Helper()
	dir := plugintest.FixturesDir(t, "pdfs")
	var doc struct {
		Symbols string `json:"symbols"`
	}
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, "arxiv_2304.02623v1_beyond_summarization.papermage.json"), &doc))
	require.NotEmpty(t, doc.Symbols)
	return doc.Symbols
}

// chunks cuts text into documents as the host's chunker does: runs of maxWords
// white-space separated words, each overlapping the previous by overlapWords,
// cut at word boundaries (so mid-sentence), with ids S1, S2, ...
func chunks(text string, maxWords, overlapWords int) []llm.Document {
	var spans [][2]int
	start := -1
	for i, r := range text {
		switch {
		case unicode.IsSpace(r) && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		case !unicode.IsSpace(r) && start < 0:
			start = i
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(text)})
	}
	var docs []llm.Document
	for i := 0; i < len(spans); {
		j := min(i+maxWords, len(spans))
		docs = append(docs, llm.Document{ID: fmt.Sprintf("S%d", len(docs)+1), PaperID: "p1", Text: text[spans[i][0]:spans[j-1][1]]})
		if j == len(spans) {
			break
		}
		i = j - overlapWords
	}
	return docs
}
