package main

import (
	"encoding/json"
	"testing"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzDecodeWorks feeds the OpenAlex decoders (a /works listing, a single Work and
// an error body) arbitrary bytes, seeded with every recorded answer: no panic, and
// every paper kept is well formed and bounded by the answer it came from.
func FuzzDecodeWorks(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "openalex", ".json", ".html")
	f.Add([]byte(`{"results":[{"id":"https://openalex.org/W1","title":"T","abstract_inverted_index":{"a":[0,2],"b":[1]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		_ = errorMessage(body)
		var lr listResponse
		if json.Unmarshal(body, &lr) == nil {
			var papers []paper.Paper
			for i := range lr.Results {
				if p, ok := workPaper(&lr.Results[i]); ok {
					papers = append(papers, p)
				}
			}
			plugintest.CheckPapers(t, "openalex", len(body), papers)
		}
		var w work
		if json.Unmarshal(body, &w) == nil {
			if p, ok := workPaper(&w); ok {
				plugintest.CheckPapers(t, "openalex", len(body), []paper.Paper{p})
			}
		}
	})
}
