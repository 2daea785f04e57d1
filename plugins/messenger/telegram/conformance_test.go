package main

import (
	"testing"

	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// TestConformance runs the SDK's messenger checks on the built binary, first as
// `lectern plugins check` does (no credentials, no chat), then against the local
// Bot API with a token and a chat to post to.
func TestConformance(t *testing.T) {
	t.Parallel()
	bin := plugintest.Build(t, ".")
	f := newFakeBot(t)
	settings := map[string]any{"base_url": f.srv.URL, "backoff_base": "1ms", "poll_timeout": "1s"}
	t.Run("without credentials", func(t *testing.T) {
		plugintest.Run(t, plugintest.Options{Path: bin, Kind: protocol.KindMessenger, Settings: settings})
	})
	t.Run("against a local Bot API", func(t *testing.T) {
		plugintest.Run(t, plugintest.Options{Path: bin, Kind: protocol.KindMessenger, Settings: settings, Credentials: creds, ChatID: "5550001"})
		if len(f.callsOf("editMessageText")) != 3 || len(f.callsOf("sendMessage")) < 3+2 {
			t.Errorf("the checks sent %d messages and made %d edits, want at least 5 and 3", len(f.callsOf("sendMessage")), len(f.callsOf("editMessageText")))
		}
	})
}
