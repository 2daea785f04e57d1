package main

import (
	"testing"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzDecodeRecords feeds the E-utilities decoders (efetch's article set, esummary,
// esearch, elink, a JSON error body) arbitrary bytes, seeded with every recorded
// answer: no panic, and every paper kept is well formed and bounded by the answer
// it came from.
func FuzzDecodeRecords(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "pubmed", ".xml")
	f.Add([]byte(`<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>T &amp; <i>x</i></ArticleTitle><Abstract><AbstractText Label="A">y</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>`))
	f.Add([]byte(`{"error":"API rate limit exceeded"}`))
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		_ = jsonError(body)
		_ = statusError("efetch", 400, body)
		var set articleSet
		if decodeXML("efetch", body, &set) == nil {
			var papers []paper.Paper
			for i := range set.Articles {
				if p, ok := set.Articles[i].toPaper(now); ok {
					papers = append(papers, p)
				}
			}
			for i := range set.Books {
				if p, ok := set.Books[i].toPaper(); ok {
					papers = append(papers, p)
				}
			}
			plugintest.CheckPapers(t, "pubmed", len(body), papers)
		}
		var sum eSummaryResult
		if decodeXML("esummary", body, &sum) == nil {
			var papers []paper.Paper
			for i := range sum.DocSums {
				if p, ok := sum.DocSums[i].toPaper(); ok {
					papers = append(papers, p)
				}
			}
			plugintest.CheckPapers(t, "pubmed", len(body), papers)
		}
		var search eSearchResult
		_ = decodeXML("esearch", body, &search)
		var links eLinkResult
		_ = decodeXML("elink", body, &links)
	})
}
