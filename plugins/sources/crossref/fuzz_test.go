package main

import (
	"encoding/json"
	"testing"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzDecodeWorks feeds the Crossref decoders (a /works listing, one work, an error
// body) arbitrary bytes, seeded with every recorded answer: no panic, and every
// paper kept is well formed and bounded by the answer it came from.
func FuzzDecodeWorks(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "crossref", ".json", ".txt")
	f.Add([]byte(`{"message":{"DOI":"10.1/x","title":["<jats:p>T</jats:p>"],"author":[{"given":"A","family":"B"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > plugintest.MaxFuzzInput {
			return
		}
		_ = errStatus(400, body)
		var list struct {
			Message struct {
				Items []item `json:"items"`
			} `json:"message"`
		}
		if json.Unmarshal(body, &list) == nil {
			var papers []paper.Paper
			for i := range list.Message.Items {
				if p, ok := itemPaper(&list.Message.Items[i]); ok {
					papers = append(papers, p)
				}
			}
			plugintest.CheckPapers(t, "crossref", len(body), papers)
		}
		var one struct {
			Message item `json:"message"`
		}
		if json.Unmarshal(body, &one) == nil {
			if p, ok := itemPaper(&one.Message); ok {
				plugintest.CheckPapers(t, "crossref", len(body), []paper.Paper{p})
			}
		}
	})
}
