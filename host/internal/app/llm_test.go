package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// streamAnswer is an OpenAI-compatible streamed completion that cites [S1].
func streamAnswer(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		d, _ := json.Marshal(map[string]string{"content": delta})
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1735689600,\"model\":%q,\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", model, d, fin)
		w.(http.Flusher).Flush()
	}
	chunk("Once the programme ended, participants found it ", "")
	chunk("difficult to remain motivated [S1].", "")
	chunk("", "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// The admin's provider key reaches the provider in the call's Authorization header
// only: not the logs, not a file, not the host's or the plugin's environment.
func TestAPlantedProviderKeyStaysInMemory(t *testing.T) {
	t.Parallel()
	const planted = "sk-planted-31d7c0a2-env-8842"
	var mu sync.Mutex
	var authz []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		authz = append(authz, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		streamAnswer(w, "local-model")
	}))
	defer provider.Close()

	bin := plugintest.Build(t, "../../../plugins/llm/openai")
	logs := &syncBuffer{}
	host := pluginhost.New([]pluginhost.Entry{{Name: "openai", Kind: protocol.KindLLM, Path: bin, Enabled: true,
		CallTimeout: time.Minute, MaxConcurrency: 4, Settings: map[string]any{"base_url": "https://api.openai.com/v1"}}},
		pluginhost.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, host.Start(context.Background()))
	t.Cleanup(host.Close)

	dataDir := t.TempDir()
	b := setupWith(t, map[string]string{"LECTERN_DATA_DIR": dataDir}, func(o *Options) { o.Plugins = host })
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	rec := b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/providers/custom_compatible", cookie: admin,
		body: map[string]any{"api_key": planted, "base_url": provider.URL + "/v1"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/roles/answer", cookie: admin,
		body: map[string]any{"provider": "custom_compatible", "model": "local-model"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "Prompts and the relevant source excerpts of the roles answer are sent to the custom endpoint")
	require.NotContains(t, rec.Body.String(), planted)

	paperID := b.uploadAndIngest(t, admin, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: admin,
		body: map[string]any{"question": "Why was it difficult for participants to stay motivated after the programme ended?"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "difficult to remain motivated [S1]")
	require.Contains(t, rec.Body.String(), paperID.String(), "the model's [S1] maps to the retrieved passage")
	require.Contains(t, rec.Body.String(), `"method":"generative"`)
	mu.Lock()
	require.Contains(t, authz, "Bearer "+planted, "the key reached the provider, per call")
	mu.Unlock()

	// Nowhere else.
	require.NotContains(t, b.logs.String(), planted)
	require.NotContains(t, logs.String(), planted)
	for _, kv := range os.Environ() {
		require.NotContains(t, kv, planted)
	}
	requireInNoFile(t, dataDir, planted)
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	found := 0
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !strings.HasPrefix(string(cmdline), bin+"\x00") && string(cmdline) != bin {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		require.NoError(t, err)
		require.NotContains(t, string(environ), planted, "plugin process %s", p)
		found++
	}
	require.Positive(t, found, "the plugin process was found and its environment read")
}
