package pdftext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// page makes a layout page of 800 points from its lines, top to bottom, one
// row every 20 points from y=40 (a header row) down.
func page(texts ...string) layoutPage {
	p := layoutPage{width: 600, height: 800}
	for i, t := range texts {
		y := 40 + 20*float64(i)
		if i == len(texts)-1 {
			y = 760 // the last line is the footer row
		}
		p.lines = append(p.lines, line{box: box{x0: 50, y0: y, x1: 550, y1: y + 10}, text: t, block: i})
	}
	return p
}

func pageTexts(pages []layoutPage) []string {
	var out []string
	for _, p := range pages {
		var ls []string
		for _, l := range p.lines {
			ls = append(ls, l.text)
		}
		out = append(out, strings.Join(ls, "|"))
	}
	return out
}

func TestCleanDropsRunningHeadersAndPageNumbers(t *testing.T) {
	t.Parallel()
	got := pageTexts(clean([]layoutPage{
		page("Journal of Tests 2010, 4:1", "A first page of body text", "about headers.", "Page 1 of 3"),
		page("Journal of Tests 2010, 4:1", "A second page of body", "text.", "Page 2 of 3"),
		page("Journal of Tests 2010, 4:1", "The last page.", "Page 3 of 3"),
	}))
	require.Equal(t, []string{"A first page of body text|about headers.", "A second page of body|text.", "The last page."}, got)
}

func TestCleanKeepsShortDocuments(t *testing.T) {
	t.Parallel()
	got := pageTexts(clean([]layoutPage{page("Header", "one", "1"), page("Header", "two", "2")}))
	require.Equal(t, []string{"Header|one|1", "Header|two|2"}, got)
}

func TestCleanJoinsLineBreakHyphens(t *testing.T) {
	t.Parallel()
	tests := []struct{ lines, want string }{
		{"the com-|plement of it", "the complement|of it"},
		{"a word at the end of a page com-|plement", "a word at the end of a page complement"},
		{"state-of-the-|art results", "state-of-the-art|results"},
		{"COVID-|19 cases; COVID", "COVID-19|cases; COVID"},
		{"pages 12-|15", "pages 12-|15"},
		{"RNA-|binding proteins", "RNA-binding|proteins"},
		{"pre-|and post-processing", "pre- and|post-processing"},
		{"mass-|to-temperature ratio", "mass-to-temperature|ratio"},
		{"see astro-|ph/0303455 for", "see astro-ph/0303455|for"},
		{"a tree-|based model; a tree-based one", "a tree-based|model; a tree-based one"},
		{"exper-|iment, an experiment", "experiment,|an experiment"},
		{"a non-|paper and a paper", "a non-paper|and a paper"},
		{"end-|", "end-"},
		{"a line-|End", "a line-|End"},
	}
	for _, tt := range tests {
		t.Run(tt.lines, func(t *testing.T) {
			t.Parallel()
			var p layoutPage
			for i, l := range strings.Split(tt.lines, "|") {
				if l != "" {
					p.lines = append(p.lines, line{box: box{x0: 50, y0: 100 + 20*float64(i), x1: 550, y1: 110 + 20*float64(i)}, text: l})
				}
			}
			pages := []layoutPage{p}
			joinHyphens(pages)
			require.Equal(t, tt.want, pageTexts(pages)[0])
		})
	}
}

func TestCleanDropsMarginStampsNotFormulaLetters(t *testing.T) {
	t.Parallel()
	var pages []layoutPage
	for i := range 3 {
		p := page("Body text on page one.", "x", "More body text.", "end")
		p.lines[0].text = strings.Replace(p.lines[0].text, "one", []string{"one", "two", "three"}[i], 1)
		p.lines[1].box = box{x0: 300, y0: 400, x1: 305, y1: 409} // a letter of a formula, taller than wide
		p.lines[2].box = box{x0: 300, y0: 420, x1: 550, y1: 430}
		p.lines[3].text = "Stamp 2008 003"
		p.lines[3].box = box{x0: 10, y0: 270, x1: 25, y1: 500} // set sideways in the margin
		pages = append(pages, p)
	}
	got := pageTexts(clean(pages))
	require.Equal(t, []string{"Body text on page one.|x|More body text.", "Body text on page two.|x|More body text.", "Body text on page three.|x|More body text."}, got)
}
