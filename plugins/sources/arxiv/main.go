// Command arxiv is Lectern's arXiv paper source: searches, lookups by arXiv id,
// recent submissions per category and author listings through the export.arxiv.org
// Atom query API, paced to one request every three seconds. It imports only the sdk
// module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
