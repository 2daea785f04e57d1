package pdftext

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/stretchr/testify/require"
)

type manifestPaper struct {
	Title   string `json:"title"`
	DOI     string `json:"doi"`
	ArXivID string `json:"arxiv_id"`
	Pages   int    `json:"pages"`
}

// fixturePDFs returns the shared fixture PDFs with the paper metadata
// MANIFEST.json records for them.
func fixturePDFs(t *testing.T) (string, map[string]manifestPaper) {
	t.Helper()
	dir := fixturetest.Dir(t)
	var m struct {
		Files []struct {
			File  string         `json:"file"`
			Paper *manifestPaper `json:"paper"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal(fixturetest.Read(t, "MANIFEST.json"), &m))
	out := map[string]manifestPaper{}
	for _, f := range m.Files {
		if strings.HasPrefix(f.File, "pdfs/") && strings.HasSuffix(f.File, ".pdf") && f.Paper != nil {
			out[strings.TrimPrefix(f.File, "pdfs/")] = *f.Paper
		}
	}
	require.NotEmpty(t, out)
	return filepath.Join(dir, "pdfs"), out
}

var nonWord = regexp.MustCompile(`[^\p{L}\p{N}]+`)

// words folds text for comparison: normalized, lowercased, accents dropped,
// punctuation gone.
func words(s string) []string {
	s = strings.ToLower(Normalize(s))
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
	return strings.Fields(nonWord.ReplaceAllString(s, " "))
}

func TestFixturesMetadata(t *testing.T) {
	t.Parallel()
	dir, papers := fixturePDFs(t)
	// DOIs the PDFs print (the manifest also records some they do not).
	printedDOI := map[string]bool{
		"hindawi_rrp_2010_157939_with_groundtruth.pdf":     true,
		"bmc_jtmo_2010_4_1_with_groundtruth.pdf":           true,
		"arxiv_0807.3577_jcap_single_column_equations.pdf": true,
	}
	for name, want := range papers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc, err := ExtractFile(t.Context(), filepath.Join(dir, name), nil)
			require.NoError(t, err)
			requireWellFormed(t, doc)
			require.Len(t, doc.Pages, want.Pages)
			require.Equal(t, strings.Join(words(want.Title), " "), strings.Join(words(doc.Title), " "))
			if printedDOI[name] {
				require.Equal(t, strings.ToLower(want.DOI), strings.ToLower(doc.DOI))
			}
			if doc.ArXivID != "" || strings.HasPrefix(name, "arxiv_2") {
				require.Equal(t, want.ArXivID, doc.ArXivID)
			}
		})
	}
}

// TestFixturesGroundTruth compares the text with CERMINE's hand-checked full
// text of the Hindawi paper: nearly every word, in the same order.
func TestFixturesGroundTruth(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	doc, err := ExtractFile(t.Context(), filepath.Join(dir, "hindawi_rrp_2010_157939_with_groundtruth.pdf"), nil)
	require.NoError(t, err)
	want := words(string(fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt")))
	got := words(doc.Text)
	require.GreaterOrEqual(t, orderedRecall(got, want), 0.98)
	require.Len(t, doc.References, 17)
	for i, r := range doc.References {
		require.True(t, strings.HasPrefix(r.Text, "["+strconv.Itoa(i+1)+"]"), r.Text)
	}
	require.Equal(t, "Discussion", doc.Sections[len(doc.Sections)-3].Title)
}

// orderedRecall is the share of want's words that appear in got in the same
// order (longest common subsequence over len(want)).
func orderedRecall(got, want []string) float64 {
	prev := make([]int, len(want)+1)
	cur := make([]int, len(want)+1)
	for i := 1; i <= len(got); i++ {
		for j := 1; j <= len(want); j++ {
			switch {
			case got[i-1] == want[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(want)]) / float64(len(want))
}

// TestFixturesTwoColumnOrder checks phrases that only read right when each
// column is read top to bottom before the next (see docs/benchmarks.md).
func TestFixturesTwoColumnOrder(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	tests := []struct {
		file          string
		before, after string
	}{
		{"s2orc_acl2020_two_column.pdf", "Yet, existing corpora are not without their limitations. Some cover a small number of papers", "In this paper, we describe the construction of S2ORC"},
		{"s2orc_acl2020_two_column.pdf", "covers a more diverse set of academic disciplines than other resources", "To construct S2ORC, we must overcome challenges in (i) paper metadata aggregation"},
		{"pldi09_tracemonkey_two_column_acm.pdf", "inner loops would become hot first, and the VM would start tracing there. When the inner loop exits", "We solve the nested loop problem by recording nested trace trees"},
		{"pldi09_tracemonkey_two_column_acm.pdf", "In Section 7 we evaluate our dynamic compiler based on", "a set of industry benchmarks. The paper ends with conclusions"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.before[:20], func(t *testing.T) {
			t.Parallel()
			doc, err := ExtractFile(t.Context(), filepath.Join(dir, tt.file), nil)
			require.NoError(t, err)
			text := " " + strings.Join(words(doc.Text), " ") + " "
			b := strings.Index(text, " "+strings.Join(words(tt.before), " ")+" ")
			a := strings.Index(text, " "+strings.Join(words(tt.after), " ")+" ")
			require.GreaterOrEqual(t, b, 0, "phrase %q not found whole", tt.before)
			require.Greater(t, a, b, "phrase %q not found after the first", tt.after)
		})
	}
}

func TestFixturesSections(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	tests := []struct {
		file     string
		headings []string // "number title" of the body headings, in order, at least these
		refs     int
		refIDs   int // references carrying a DOI or arXiv id, at least
	}{
		{"pldi09_tracemonkey_two_column_acm.pdf", []string{"1 Introduction", "2 Overview: Example Tracing Run", "3 Trace Trees", "3.1 Traces", "7 Evaluation", "8 Related Work", "9 Conclusions", "10 Future Work"}, 19, 0},
		{"s2orc_acl2020_two_column.pdf", []string{"1 Introduction", "2 Constructing the corpus", "2.1 Processing PDFs", "3 The S2ORC dataset", "4 Evaluation"}, 0, 0},
		{"arxiv_0908.0054v1_ultralight_bosonic_dm_revtex.pdf", []string{"I INTRODUCTION", "II ULTRA LIGHT BOSONS AS DARK MATTER", "III TESTING WITH THE CMB", "IV CONCLUSIONS"}, 0, 0},
		{"arxiv_2304.02623v1_beyond_summarization.pdf", []string{"1 INTRODUCTION", "4 CONCLUSION"}, 35, 12},
		{"clef2008_wang_answer_validation_word.pdf", []string{"1 Introduction and Related Work", "3.1 Preprocessing and Post-processing", "5 Conclusion and Future Work"}, 12, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			doc, err := ExtractFile(t.Context(), filepath.Join(dir, tt.file), nil)
			require.NoError(t, err)
			var got []string
			for _, s := range doc.Sections {
				if s.Number != "" {
					got = append(got, s.Number+" "+s.Title)
				}
			}
			k := 0
			for _, g := range got {
				if k < len(tt.headings) && g == tt.headings[k] {
					k++
				}
			}
			require.Equal(t, len(tt.headings), k, "headings %q not all found in order in %q", tt.headings, got)
			if tt.refs > 0 {
				require.Len(t, doc.References, tt.refs)
			}
			ids := 0
			for _, r := range doc.References {
				require.NotRegexp(t, `^\d+$`, r.Text, "a page number is no reference")
				if r.DOI != "" || r.ArXivID != "" {
					ids++
				}
			}
			require.GreaterOrEqual(t, ids, tt.refIDs)
		})
	}
}

// TestFixturesParagraphsHoldSentences checks that a sentence running over several
// printed lines stays in one paragraph (no blank line inside it) where pdftotext
// makes each line a block of its own: the double-spaced manuscript (jctc2022) has
// every line in its own block, and cutting there split every sentence a reader
// or an answer quotes. A page break or a real paragraph end still breaks.
func TestFixturesParagraphsHoldSentences(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	tests := []struct{ file, sentence string }{
		{"jctc2022_perspective_xai_molecular.pdf", "Chemists can be skeptical in using deep learning (DL) in decision making, due to the lack of interpretability in “black-box” models."},
		{"jctc2022_perspective_xai_molecular.pdf", "Deep learning (DL) is advancing the boundaries of computational chemistry because it can accurately model non-linear structure-function relationships."},
		{"jctc2022_perspective_xai_molecular.pdf", "We show that XAI methods like chemical counterfactuals and descriptor explanations can explain DL predictions while giving insight into structure-property relationships."},
		{"hindawi_rrp_2010_157939_with_groundtruth.pdf", "Structured rehabilitation programmes are effective in enabling patients to develop lifestyle skills to live with heart failure."},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.sentence[:24], func(t *testing.T) {
			t.Parallel()
			doc, err := ExtractFile(t.Context(), filepath.Join(dir, tt.file), nil)
			require.NoError(t, err)
			want := strings.Join(words(tt.sentence), " ")
			found := false
			for _, para := range strings.Split(doc.Text, "\n\n") {
				if strings.Contains(strings.Join(words(para), " "), want) {
					found = true
					break
				}
			}
			require.True(t, found, "no paragraph holds %q whole", tt.sentence)
		})
	}
}
