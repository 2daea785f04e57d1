// Command example is Lectern's example paper-source plugin: a small deterministic
// corpus served through the SDK, as a template for source authors and as the plugin
// the platform's own tests and benchmarks start. It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Source(New(sdklog.New(nil))) }
