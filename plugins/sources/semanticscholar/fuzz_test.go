package main

import (
	"encoding/json"
	"testing"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzDecodePapers feeds the Semantic Scholar decoders (a paper page, one paper, a
// page of citation edges, an error body) arbitrary bytes, seeded with every
// recorded answer: no panic, and every paper kept is well formed and bounded by
// the answer it came from.
func FuzzDecodePapers(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "semanticscholar", ".json")
	f.Add([]byte(`{"data":[{"paperId":"649def34f8be52c8b66281af98ae884c09aef38b","title":"T","externalIds":{"DOI":"10.1/x","PubMed":12,"ArXiv":["2101.00001"]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		_ = statusError("paper", 400, body)
		var page s2PaperPage
		if json.Unmarshal(body, &page) == nil {
			plugintest.CheckPapers(t, "semanticscholar", len(body), toPapers(page.Data))
		}
		var one s2Paper
		if json.Unmarshal(body, &one) == nil {
			if p, ok := toPaper(&one); ok {
				plugintest.CheckPapers(t, "semanticscholar", len(body), []paper.Paper{p})
			}
		}
		var edges s2EdgePage
		if json.Unmarshal(body, &edges) == nil {
			var papers []paper.Paper
			for _, e := range edges.Data {
				for _, raw := range []*s2Paper{e.CitingPaper, e.CitedPaper} {
					if raw == nil {
						continue
					}
					if p, ok := toPaper(raw); ok {
						papers = append(papers, p)
					}
				}
			}
			plugintest.CheckPapers(t, "semanticscholar", len(body), papers)
		}
	})
}
