// Command zotero is Lectern's reference-manager plugin for Zotero: a user's own
// library and their group libraries through the Zotero Web API v3 — incremental
// sync of records, notes and PDF annotations by library version, removals and the
// trash, and pushes of papers into collections that never create an item twice.
// It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.RefManager(New(sdklog.New(nil))) }
