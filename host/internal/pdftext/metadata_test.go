package pdftext

import (
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/stretchr/testify/require"
)

// TestFixturesMetadataAccuracy measures title, author-list and abstract accuracy
// over the fixture PDFs: titles and author lists from MANIFEST.json (exact after
// normalisation), abstracts from the NLM ground truth (token overlap ≥ 0.9). The
// floors are what was measured (docs/benchmarks.md), so a change cannot lower them.
//
//	go test -count=1 -run TestFixturesMetadataAccuracy -v ./host/internal/pdftext/
func TestFixturesMetadataAccuracy(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	var m struct {
		Files []struct {
			File  string `json:"file"`
			Paper *struct {
				Title   string   `json:"title"`
				Authors []string `json:"authors"`
			} `json:"paper"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal(fixturetest.Read(t, "MANIFEST.json"), &m))
	abstracts := map[string]string{
		"bmc_jtmo_2010_4_1_with_groundtruth.pdf":       nlmAbstract(t, "pdfs/bmc_jtmo_2010_4_1.groundtruth_metadata_nlm.xml"),
		"hindawi_rrp_2010_157939_with_groundtruth.pdf": nlmAbstract(t, "pdfs/hindawi_rrp_2010_157939.groundtruth_content_nlm.xml"),
	}
	var papers, titles, authors, absN, absOK, absFound int
	for _, f := range m.Files {
		name, ok := strings.CutPrefix(f.File, "pdfs/")
		if !ok || !strings.HasSuffix(name, ".pdf") || f.Paper == nil {
			continue
		}
		doc, err := ExtractFile(t.Context(), filepath.Join(dir, name), nil)
		require.NoError(t, err)
		papers++
		t.Logf("%s: year %d, venue %q, %d authors, first affiliation %q, abstract %d words", name, doc.Year, doc.Venue, len(doc.Authors), firstAffiliation(doc), len(strings.Fields(doc.Abstract)))
		if strings.Join(words(doc.Title), " ") == strings.Join(words(f.Paper.Title), " ") {
			titles++
		} else {
			t.Logf("%s: title %q", name, doc.Title)
		}
		var got []string
		for _, a := range doc.Authors {
			got = append(got, strings.Join(words(a.Name), " "))
		}
		var want []string
		for _, a := range f.Paper.Authors {
			want = append(want, strings.Join(words(a), " "))
		}
		if strings.Join(got, "|") == strings.Join(want, "|") {
			authors++
		} else {
			t.Logf("%s: authors %q", name, got)
		}
		if doc.Abstract != "" {
			absFound++
		}
		if w, ok := abstracts[name]; ok {
			absN++
			if o := tokenOverlap(words(doc.Abstract), words(w)); o >= 0.9 {
				absOK++
			} else {
				t.Logf("%s: abstract overlap %.2f: %q", name, o, doc.Abstract)
			}
		}
	}
	t.Logf("titles %d/%d, author lists %d/%d, abstracts %d/%d (found on %d/%d)", titles, papers, authors, papers, absOK, absN, absFound, papers)
	require.Equal(t, 10, papers)
	require.GreaterOrEqual(t, float64(titles)/float64(papers), 1.0)
	require.GreaterOrEqual(t, float64(authors)/float64(papers), authorFloor)
	require.Equal(t, absN, absOK)
	require.Equal(t, papers, absFound, "every fixture paper has an abstract")
}

func firstAffiliation(doc *Document) string {
	if len(doc.Authors) == 0 {
		return ""
	}
	return doc.Authors[0].Affiliation
}

// authorFloor is the measured author-list accuracy over the fixtures.
const authorFloor = 1.0

// tokenOverlap is the F1 of the two bags of words.
func tokenOverlap(got, want []string) float64 {
	if len(got) == 0 || len(want) == 0 {
		return 0
	}
	bag := map[string]int{}
	for _, w := range want {
		bag[w]++
	}
	common := 0
	for _, g := range got {
		if bag[g] > 0 {
			bag[g]--
			common++
		}
	}
	p, r := float64(common)/float64(len(got)), float64(common)/float64(len(want))
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// nlmAbstract returns the <abstract> text of an NLM ground-truth file.
func nlmAbstract(t *testing.T, path string) string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(fixturetest.Read(t, path))))
	dec.Strict = false
	var sb strings.Builder
	in := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch x := tok.(type) {
		case xml.StartElement:
			in = in || x.Name.Local == "abstract"
		case xml.EndElement:
			if x.Name.Local == "abstract" {
				return sb.String()
			}
		case xml.CharData:
			if in {
				sb.Write(x)
				sb.WriteByte(' ')
			}
		}
	}
	require.NotEmpty(t, sb.String(), path)
	return sb.String()
}

// TestFixturesFrontMatter checks what the Hindawi paper prints under its title:
// one affiliation for every author, the corresponding author's email, the year
// and the journal.
func TestFixturesFrontMatter(t *testing.T) {
	t.Parallel()
	dir, _ := fixturePDFs(t)
	doc, err := ExtractFile(t.Context(), filepath.Join(dir, "hindawi_rrp_2010_157939_with_groundtruth.pdf"), nil)
	require.NoError(t, err)
	require.Len(t, doc.Authors, 4)
	for _, a := range doc.Authors {
		require.Contains(t, a.Affiliation, "Royal College of Surgeons in Ireland")
	}
	require.Equal(t, "helenburke1@rcsi.ie", doc.Authors[2].Email)
	require.Empty(t, doc.Authors[0].Email)
	require.Equal(t, 2010, doc.Year)
	require.Equal(t, "Rehabilitation Research and Practice", doc.Venue)
	require.True(t, strings.HasPrefix(doc.Abstract, "Objectives. Patient experiences"), doc.Abstract)
}

func TestFixCaps(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"L ONG E VAL : Guidelines for Evaluating": "LongEval: Guidelines for Evaluating",
		"T H E Title":        "THE Title",
		"A Survey of NLP":    "A Survey of NLP",
		"PaSa: An LLM Agent": "PaSa: An LLM Agent",
	} {
		require.Equal(t, want, fixCaps(in), in)
	}
}

func TestSplitNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"Indraneel Datta 1 , Chad G Ball 1* , Lucas Rudmik 1":         {"Indraneel Datta", "Chad G Ball", "Lucas Rudmik"},
		"Nuala E. Tully, Karen M. Morgan, and Hannah M. McGee":        {"Nuala E. Tully", "Karen M. Morgan", "Hannah M. McGee"},
		"Kyle Lo †∗ Lucy Lu Wang †∗ Mark Neumann † Daniel S. Weld †‡": {"Kyle Lo", "Lucy Lu Wang", "Mark Neumann", "Daniel S. Weld"},
		"Yichen He ∗1 Guanhua Huang ∗1 Weinan E 2":                    {"Yichen He", "Guanhua Huang", "Weinan E"},
	} {
		got, ok := splitNames(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	_, ok := splitNames("We introduce a large corpus of papers")
	require.False(t, ok)
}

func TestApplyInfoFillsOnlyWhatTheLayoutLeftEmpty(t *testing.T) {
	t.Parallel()
	doc := &Document{}
	applyInfo(doc, "Apparent and average accelerations of the Universe ", "Krzysztof Bolejko, Lars Andersson")
	require.Equal(t, "Apparent and average accelerations of the Universe", doc.Title)
	require.Equal(t, []Author{{Name: "Krzysztof Bolejko"}, {Name: "Lars Andersson"}}, doc.Authors)

	doc = &Document{}
	applyInfo(doc, "Microsoft Word - AVE2008 Report.doc", "ibm")
	require.Empty(t, doc.Title)
	require.Empty(t, doc.Authors)

	doc = &Document{Title: "From the page", Metadata: Metadata{Authors: []Author{{Name: "Kyle Lo"}}}}
	applyInfo(doc, "S2ORC", "Kyle Lo ; Lucy Lu Wang")
	require.Equal(t, "From the page", doc.Title)
	require.Len(t, doc.Authors, 1)

	doc = &Document{}
	applyInfo(doc, "", "Nuala E. Tully {et al.}")
	require.Empty(t, doc.Authors, "a truncated list is no author list")
}
