package plugintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// TestRefManagerChecksFailABrokenPlugin shows that each reference-manager check
// can fail: the plugin under test breaks every rule. (The Zotero plugin's own test
// shows them passing.)
func TestRefManagerChecksFailABrokenPlugin(t *testing.T) {
	t.Parallel()
	bin := Build(t, "./testdata/brokenrefmanager")
	report, err := Check(t.Context(), Options{Path: bin, Kind: protocol.KindRefManager,
		Credentials: map[string]string{"api_key": "k"}, MaxPages: 3})
	require.NoError(t, err)
	got := map[string]string{}
	for _, res := range report.Results {
		got[res.Check] = ""
		if res.Err != nil {
			got[res.Check] = res.Err.Error()
		}
	}
	require.Empty(t, got["describe"])
	require.Contains(t, got["typed_errors"], "items since with no library id succeeded")
	require.Contains(t, got["credentials_required"], "libraries without credentials listed 1 libraries")
	require.Contains(t, got["sync_pages_end"], "has no key or no title")
	require.True(t, report.Failed())
}
