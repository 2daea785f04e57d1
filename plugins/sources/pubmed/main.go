// Command pubmed is Lectern's PubMed paper source: NCBI E-utilities
// (eutils.ncbi.nlm.nih.gov/entrez/eutils) served as a source plugin. It imports only
// the sdk module and never writes to stdout, which carries the plugin handshake.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
