// Command semanticscholar is Lectern's Semantic Scholar paper source: the Academic
// Graph API (api.semanticscholar.org/graph/v1) served as a source plugin. It imports
// only the sdk module and never writes to stdout, which carries the plugin handshake.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
