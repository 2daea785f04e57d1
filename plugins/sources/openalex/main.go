// Command openalex is Lectern's OpenAlex paper source: searches, look-ups by DOI,
// PMID or OpenAlex id, recent works per topic, author listings and the citation
// graph through api.openalex.org, paced to about ten requests a second. It imports
// only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
