package bibio

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

func TestParseBibTeXFromCrossref(t *testing.T) {
	t.Parallel()
	src := fixturetest.Read(t, "crossref/works_transform_bibtex_s42256-024-00832-8.bib")
	entries, errs := ParseBibTeX(string(src))
	require.Empty(t, errs)
	require.Len(t, entries, 1)
	e := entries[0]
	require.Equal(t, "M_Bran_2024", e.Key)
	require.Equal(t, "article", e.Type)
	require.Equal(t, "Augmenting large language models with chemistry tools", e.Title)
	require.Equal(t, []string{"M. Bran, Andres", "Cox, Sam", "Schilter, Oliver", "Baldassari, Carlo", "White, Andrew D.", "Schwaller, Philippe"}, e.Authors)
	require.Equal(t, 2024, e.Year)
	require.Equal(t, 5, e.Month, "month=may is a macro")
	require.Equal(t, "Nature Machine Intelligence", e.Venue)
	require.Equal(t, "10.1038/s42256-024-00832-8", e.DOI)
	require.Equal(t, "525–535", e.Pages)
	require.Equal(t, "6", e.Volume)
	require.Equal(t, "5", e.Issue)
}

func TestParseBibTeXKeepsGoodEntriesAndReportsBadOnes(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/tricky.bib")
	require.NoError(t, err)
	entries, errs := ParseBibTeX(string(src))

	byKey := map[string]Entry{}
	for _, e := range entries {
		byKey[e.Key] = e
	}
	require.Len(t, entries, 3, "three good entries: %+v", errs)

	s := byKey["schroedinger1926"]
	require.Equal(t, "Quantisierung als Eigenwertproblem", s.Title)
	require.Equal(t, []string{"Schrödinger, Erwin"}, s.Authors)
	require.Equal(t, 1926, s.Year)
	require.Equal(t, 1, s.Month)
	require.Equal(t, "361–376", s.Pages)
	require.Equal(t, 5, s.Line)

	g := byKey["gomez2020"]
	require.Equal(t, "Learning with Étale cohomology (a survey)", g.Title, "parentheses inside braces do not close a (...) entry")
	require.Equal(t, []string{"Gómez, José", "Müller, François", "The Lectern Team"}, g.Authors)
	require.Equal(t, "Nature Machine Intelligence Workshop", g.Venue, "@string macro joined with #")
	require.Equal(t, "2104.12255", g.ArxivID)
	require.Equal(t, "inproceedings", g.Type)

	require.Equal(t, "The book", byKey["knuth1984"].Title, "unknown commands drop out")

	lines := map[int]string{}
	for _, e := range errs {
		lines[e.Line] = e.Message
	}
	require.Contains(t, lines, 25, "the entry that never closes is reported at its line: %v", errs)
	require.Contains(t, lines, 30, "the entry without a title: %v", errs)
	require.Contains(t, lines[30], "no title")
}

func TestParseRIS(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/sample.ris")
	require.NoError(t, err)
	entries, errs := ParseRIS(string(src))
	require.Len(t, entries, 2)

	a := entries[0]
	require.Equal(t, "Augmenting large language models with chemistry tools", a.Title)
	require.Equal(t, []string{"Bran, Andres M.", "Cox, Sam"}, a.Authors)
	require.Equal(t, [3]int{2024, 5, 8}, [3]int{a.Year, a.Month, a.Day})
	require.Equal(t, "525–535", a.Pages)
	require.Equal(t, "Large language models have shown strong performance across domains.", a.Abstract, "continuation lines join")
	require.Equal(t, "article", a.Type)

	b := entries[1]
	require.Equal(t, "1706.03762", b.ArxivID)
	require.Equal(t, "https://arxiv.org/pdf/1706.03762", b.PDFURL)

	lines := map[int]string{}
	for _, e := range errs {
		lines[e.Line] = e.Message
	}
	require.Contains(t, lines[17], "no title")
	require.Contains(t, lines[22], "not an RIS line")
	require.Contains(t, lines[32], "never ends")
}

func TestRoundTrips(t *testing.T) {
	t.Parallel()
	in := []Entry{
		{Type: "article", Title: "Costs & benefits of 100% recall_rates {sic}", Authors: []string{"Müller, François", "Ann Smith"},
			Year: 2021, Month: 3, Venue: "J. Test", Volume: "4", Issue: "2", Pages: "10–20", DOI: "10.1000/x", Abstract: "An abstract."},
		{Type: "inproceedings", Title: "Second paper", Authors: []string{"Müller, François"}, Year: 2021, ArxivID: "2104.12255"},
	}
	var bib bytes.Buffer
	require.NoError(t, WriteBibTeX(&bib, in))
	out, errs := ParseBibTeX(bib.String())
	require.Empty(t, errs, bib.String())
	require.Len(t, out, 2)
	require.Equal(t, in[0].Title, out[0].Title)
	require.Equal(t, in[0].Authors, out[0].Authors)
	require.Equal(t, in[0].Pages, out[0].Pages)
	require.Equal(t, "mller2021costs", out[0].Key)
	require.Equal(t, "mller2021second", out[1].Key)
	require.Equal(t, "2104.12255", out[1].ArxivID)

	var ris bytes.Buffer
	require.NoError(t, WriteRIS(&ris, in))
	out, errs = ParseRIS(ris.String())
	require.Empty(t, errs, ris.String())
	require.Equal(t, in[0].Title, out[0].Title)
	require.Equal(t, in[0].Pages, out[0].Pages)
	require.Equal(t, 3, out[0].Month)

	var csl bytes.Buffer
	require.NoError(t, WriteCSLJSON(&csl, in))
	var items []map[string]any
	require.NoError(t, json.Unmarshal(csl.Bytes(), &items))
	require.Len(t, items, 2)
	require.Equal(t, "article-journal", items[0]["type"])
	require.Equal(t, "Müller", items[0]["author"].([]any)[0].(map[string]any)["family"])
	require.Equal(t, []any{[]any{float64(2021), float64(3)}}, items[0]["issued"].(map[string]any)["date-parts"])
}
