// Command crossref is Lectern's Crossref paper source: DOI look-ups, searches,
// recent publications and author listings through api.crossref.org, within the
// polite pool's rate and concurrency limits. It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
