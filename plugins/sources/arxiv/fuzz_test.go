package main

import (
	"testing"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzParseFeed feeds the Atom decoder arbitrary bytes, seeded with every recorded
// API answer: it must not panic, and every paper it keeps must be well formed and
// no larger than the feed it came from.
func FuzzParseFeed(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "arxiv", ".xml")
	f.Add([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/2101.00001v2</id><title>T</title><author><name>A</name></author></entry></feed>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		feed, err := parseFeed(body)
		if err != nil {
			return
		}
		_, _ = feed.errorMessage()
		page := feedPage(feed, 0, 100)
		if len(page.Papers) > len(feed.Entries) {
			t.Fatalf("%d papers from %d entries", len(page.Papers), len(feed.Entries))
		}
		plugintest.CheckPapers(t, "arxiv", len(body), feedPapers(feed))
	})
}

// FuzzParseOAI feeds the OAI-PMH decoder arbitrary bytes, seeded with the recorded
// harvests and errors: no panic, and the harvested papers are well formed and
// bounded by the input.
func FuzzParseOAI(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "arxiv", ".xml")
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		r, err := parseOAI(body)
		if err != nil {
			return
		}
		l := listFrom(r)
		papers := make([]paper.Paper, 0, len(l.papers))
		for _, p := range l.papers {
			papers = append(papers, p.Paper)
		}
		plugintest.CheckPapers(t, "arxiv", len(body), papers)
		plugintest.CheckText(t, "resumption token", l.next)
	})
}

// FuzzParseAuthors runs the arXivRaw author-line parser (commas, "and", nested
// affiliation groups, numbered legends) on arbitrary text: no panic, and the
// authors it finds are named and bounded by the line.
func FuzzParseAuthors(f *testing.F) {
	for _, s := range []string{
		"A. Smith (MIT), B. Jones and C. Lee",
		"A. Smith (1, 2), B. Jones (2) ((1) MIT, (2) CERN)",
		"J. Doe, Jr., et al.", "((()))", "A & B (x (y) z)", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > plugintest.MaxFuzzInput || !utf8.ValidString(s) {
			return // the line comes out of the XML decoder, which refuses invalid UTF-8
		}
		authors := parseAuthors(s)
		p := []paper.Paper{{IDs: paper.IDs{ArXivID: "2101.00001"}, Title: "t", Authors: authors}}
		plugintest.CheckPapers(t, "arxiv", len(s), p)
	})
}
