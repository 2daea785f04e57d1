package plugintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// TestMessengerChecksFailABrokenPlugin shows that each messenger check can fail:
// the plugin under test breaks every rule. (The Telegram plugin's own test shows
// them passing.)
func TestMessengerChecksFailABrokenPlugin(t *testing.T) {
	t.Parallel()
	bin := Build(t, "./testdata/brokenmessenger")
	report, err := Check(t.Context(), Options{Path: bin, Kind: protocol.KindMessenger, ChatID: "1"})
	require.NoError(t, err)
	got := map[string]string{}
	for _, res := range report.Results {
		if res.Err != nil {
			got[res.Check] = res.Err.Error()
		} else {
			got[res.Check] = ""
		}
	}
	require.Empty(t, got["describe"])
	require.Empty(t, got["protocol_version"])
	require.Contains(t, got["typed_errors"], "send with no chat id succeeded")
	require.Contains(t, got["commands_capability"], "set commands with a name holding spaces succeeded")
	require.Contains(t, got["downloads_capability"], "download naming no file succeeded")
	require.Contains(t, got["updates_end_with_context"], "updates returned no error")
	require.Contains(t, got["send_edit_round_trip"], "returned no message id")
	require.Contains(t, got["long_message"], "returned no message id")
	require.True(t, report.Failed())
}
