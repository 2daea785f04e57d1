package pluginhost

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// TestMessengerDownloadReachesThePlugin: the host's guarded messenger passes a
// file on from the real Telegram plugin (against a local Bot API), every byte
// of a file larger than one gRPC chunk, and an unknown file is not found.
func TestMessengerDownloadReachesThePlugin(t *testing.T) {
	const token = "123456789:AAF-host_test_token_abcdefghij"
	file := bytes.Repeat([]byte("%PDF-1.7 host test "), 150_000) // 2.8 MB
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bot" + token + "/getFile":
			w.Header().Set("Content-Type", "application/json")
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"gone"`) {
				_, _ = w.Write([]byte(`{"ok":true,"result":{"file_id":"gone","file_unique_id":"g","file_path":"documents/gone.pdf"}}`))
				return
			}
			_, _ = w.Write([]byte(`{"ok":true,"result":{"file_id":"f1","file_unique_id":"u1","file_size":2850000,"file_path":"documents/file_1.pdf"}}`))
		case "/file/bot" + token + "/documents/file_1.pdf":
			_, _ = w.Write(file)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	b := setup(t, Entry{Name: "telegram", Kind: protocol.KindMessenger, Path: build(t, "plugins/messenger/telegram"), Enabled: true,
		CallTimeout: 20 * time.Second, MaxConcurrency: 2,
		Settings: map[string]any{"base_url": api.URL, "max_retries": float64(0)}})
	waitState(t, b.host, "telegram", StateRunning)
	m, err := b.host.Messenger("telegram")
	require.NoError(t, err)
	dl, ok := m.(messenger.WithDownloads)
	require.True(t, ok, "the guarded messenger passes files on")

	creds := map[string]string{messenger.CredBotToken: token}
	var got bytes.Buffer
	require.NoError(t, dl.Download(context.Background(), &messenger.DownloadRequest{Credentials: creds, FileID: "f1", MaxBytes: 50 << 20}, &got))
	require.Equal(t, file, got.Bytes())

	err = dl.Download(context.Background(), &messenger.DownloadRequest{Credentials: creds, FileID: "gone"}, &bytes.Buffer{})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	require.NotContains(t, err.Error(), token)
}
