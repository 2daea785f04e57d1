// Command arxiv is Lectern's arXiv paper source: searches, lookups by arXiv id and
// author listings through the export.arxiv.org Atom query API, and recent papers per
// category harvested through arXiv's OAI-PMH interface (arXivRaw), which also
// settles lookups the query API finds nothing for. Requests are paced to one every
// three seconds across both. It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
