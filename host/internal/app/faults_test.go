package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Fault injection with the real OpenAI-compatible plugin binary (docs/reliability.md,
// "Fault injection"): the model endpoint stalls in the middle of its stream, and the
// plugin process is killed with -9 in the middle of a call.

// stallingProvider is an OpenAI-compatible endpoint on a real socket. While stall
// is set it sends the first piece of an answer and then nothing more, keeping the
// connection open, until the caller goes away; otherwise it streams a whole cited
// answer.
type stallingProvider struct {
	*httptest.Server
	stall   atomic.Bool
	stalled chan struct{} // one value each time a stalled answer has sent its first piece
	gone    chan struct{} // one value each time the caller of a stalled answer went away
}

func newStallingProvider(t *testing.T) *stallingProvider {
	t.Helper()
	p := &stallingProvider{stalled: make(chan struct{}, 8), gone: make(chan struct{}, 8)}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if !p.stall.Load() {
			streamAnswer(w, "local-model")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689600,"model":"local-model","choices":[{"index":0,"delta":{"content":"Once the programme ended, participants "},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		p.stalled <- struct{}{}
		<-r.Context().Done() // the hang: no more data, the connection stays open
		p.gone <- struct{}{}
	}))
	t.Cleanup(p.Close)
	return p
}

// openAIHost runs the real openai plugin binary under a plugin host with the given
// per-attempt timeout (the wait for each next piece of a stream) and call timeout.
func openAIHost(t *testing.T, bin string, timeout, callTimeout time.Duration) *pluginhost.Host {
	t.Helper()
	host := pluginhost.New([]pluginhost.Entry{{Name: "openai", Kind: protocol.KindLLM, Path: bin, Enabled: true,
		CallTimeout: callTimeout, MaxConcurrency: 4,
		Settings: map[string]any{"base_url": "https://api.openai.com/v1", "timeout": timeout.String(), "max_retries": int64(0)}}},
		pluginhost.Options{Logger: slog.New(slog.DiscardHandler), HealthInterval: 200 * time.Millisecond,
			ExitPoll: 20 * time.Millisecond, BackoffMin: 50 * time.Millisecond, BackoffMax: time.Second})
	require.NoError(t, host.Start(context.Background()))
	t.Cleanup(host.Close)
	require.Eventually(t, func() bool {
		st, err := host.StatusOf("openai")
		return err == nil && st.State == pluginhost.StateRunning
	}, 60*time.Second, 20*time.Millisecond, "the openai plugin never started")
	return host
}

// assignAnswerRole points the answer role at the custom endpoint url as the admin.
func (b *testBundle) assignAnswerRole(t *testing.T, admin, url string) {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/providers/custom_compatible", cookie: admin,
		body: map[string]any{"api_key": "sk-test", "base_url": url + "/v1"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/roles/answer", cookie: admin,
		body: map[string]any{"provider": "custom_compatible", "model": "local-model"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

const motivationQuestion = "Why was it difficult for participants to stay motivated after the programme ended?"

// TestLLMEndpointStallingMidStreamFallsBackWithinItsDeadline is the fault "the LLM
// endpoint hangs in the middle of its stream": the answer's stream carries the
// model's first words, then a reset event saying in a sentence that the model did
// not answer in time, then the builtin method's cited answer, and ends with the
// done marker naming the fallback, all within the plugin's stall timeout plus
// slack, far below the call's own deadline. The stalled connection is closed.
func TestLLMEndpointStallingMidStreamFallsBackWithinItsDeadline(t *testing.T) {
	t.Parallel()
	provider := newStallingProvider(t)
	provider.stall.Store(true)
	const stallTimeout, callTimeout = 2 * time.Second, 2 * time.Minute
	host := openAIHost(t, plugintest.Build(t, "../../../plugins/llm/openai"), stallTimeout, callTimeout)
	b := setupWith(t, nil, func(o *Options) { o.Plugins = host })
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	b.assignAnswerRole(t, admin, provider.URL)
	paperID := b.uploadAndIngest(t, admin, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	began := time.Now()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: admin, body: map[string]any{"question": motivationQuestion}})
	elapsed := time.Since(began)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.GreaterOrEqual(t, elapsed, stallTimeout, "the stall was waited for")
	require.Less(t, elapsed, stallTimeout+30*time.Second, "the answer ends within its stall deadline (plus slack for a loaded machine), not the call's %s", callTimeout)

	evs := events(t, rec.Body.String())
	var names []string
	for _, ev := range evs {
		names = append(names, ev[0])
	}
	require.NotEmpty(t, evs)
	require.Equal(t, rag.EventToken, evs[0][0], "the model's first words were streamed: %v", names)
	require.Contains(t, evs[0][1], "Once the programme ended")
	reset := -1
	for i, ev := range evs {
		if ev[0] == rag.EventReset {
			reset = i
			break
		}
	}
	require.Positive(t, reset, "a reset event withdraws the stalled answer: %v", names)
	var resetData struct{ Message string }
	require.NoError(t, json.Unmarshal([]byte(evs[reset][1]), &resetData))
	require.Contains(t, resetData.Message, "did not answer in time")
	require.Contains(t, resetData.Message, "builtin extractive method")
	require.NotContains(t, resetData.Message, "context deadline", "no raw error text")
	require.NotContains(t, resetData.Message, "no data for", "no raw error text")
	require.Equal(t, rag.EventToken, evs[reset+1][0], "the builtin answer follows: %v", names)
	require.Contains(t, rec.Body.String(), paperID.String(), "the builtin answer cites the paper")

	last := evs[len(evs)-1]
	var done rag.Done
	require.NoError(t, json.Unmarshal([]byte(last[1]), &done), "the stream ends with its done marker: %v", names)
	require.Equal(t, llm.MethodExtractive, done.Method)
	require.Empty(t, done.Error)
	require.NotNil(t, done.Fallback)
	require.Equal(t, "it did not answer in time", done.Fallback.Reason)

	select {
	case <-provider.gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the stalled connection to the endpoint was left open")
	}
}

// pluginPID finds the process running the plugin binary bin, waiting for it a
// while: on a loaded machine a restarted plugin may take time to appear.
func pluginPID(t *testing.T, bin string) int {
	t.Helper()
	pid := 0
	require.Eventually(t, func() bool {
		procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
		require.NoError(t, err)
		for _, p := range procs {
			cmdline, err := os.ReadFile(p)
			if err != nil || !strings.HasPrefix(string(cmdline), bin+"\x00") && string(cmdline) != bin {
				continue
			}
			if pid, err = strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "no process runs %s", bin)
	return pid
}

// TestLLMPluginKilledMidCallFailsTypedRestartsAndAnswersAgain is the fault "a plugin
// killed with -9 in the middle of a call", with the real openai plugin in the
// middle of a streamed chat: the caller gets protocol.ErrUnavailable (the plugin
// exited, not a timeout) well within the call's deadline, the host restarts the
// plugin, and the next chat, and the next question through the API, succeed.
func TestLLMPluginKilledMidCallFailsTypedRestartsAndAnswersAgain(t *testing.T) {
	t.Parallel()
	provider := newStallingProvider(t)
	provider.stall.Store(true)
	const callTimeout = 2 * time.Minute
	bin := plugintest.Build(t, "../../../plugins/llm/openai")
	host := openAIHost(t, bin, callTimeout, callTimeout) // only the kill can end the stalled call early
	model, err := host.LLM("openai")
	require.NoError(t, err)
	chatReq := &llm.ChatRequest{Model: "local-model", Messages: []llm.Message{{Role: llm.RoleUser, Content: "Why?"}},
		Credentials: map[string]string{llm.CredBaseURL: provider.URL + "/v1", llm.CredAPIKey: "sk-test"}}

	type result struct {
		err     error
		text    string
		elapsed time.Duration
	}
	chat := func() result {
		var text strings.Builder
		began := time.Now()
		err := model.Chat(context.Background(), chatReq, llm.ChatStreamFunc(func(c *llm.ChatChunk) error {
			text.WriteString(c.Delta)
			return nil
		}))
		return result{err, text.String(), time.Since(began)}
	}
	done := make(chan result, 1)
	go func() { done <- chat() }()
	select {
	case <-provider.stalled: // the call is in flight, half answered
	case res := <-done:
		t.Fatalf("the chat ended before it stalled: %v", res.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the chat never reached the endpoint")
	}
	oldPID := pluginPID(t, bin)
	require.NoError(t, syscall.Kill(oldPID, syscall.SIGKILL))

	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight hung after kill -9")
	}
	require.ErrorIs(t, res.err, protocol.ErrUnavailable, "a typed error")
	require.NotErrorIs(t, res.err, context.DeadlineExceeded, "the call failed because the plugin died, not by its deadline")
	require.Less(t, res.elapsed, callTimeout)
	// Its words depend on which the host notices first, the exit or the broken
	// stream ("plugin openai exited during the call", or the transport's EOF); its
	// type does not.

	require.Eventually(t, func() bool {
		st, err := host.StatusOf("openai")
		require.NoError(t, err)
		return st.Restarts == 1 && st.State == pluginhost.StateRunning
	}, 60*time.Second, 20*time.Millisecond, "the plugin is restarted")
	require.NotEqual(t, oldPID, pluginPID(t, bin), "a new process")

	provider.stall.Store(false)
	res = chat()
	require.NoError(t, res.err, "the next call succeeds")
	require.Contains(t, res.text, "difficult to remain motivated [S1]")

	// And the host's own callers go on using it: a question answered by the model.
	b := setupWith(t, nil, func(o *Options) { o.Plugins = host })
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	b.assignAnswerRole(t, admin, provider.URL)
	b.uploadAndIngest(t, admin, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: admin, body: map[string]any{"question": motivationQuestion}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"method":"generative"`, "the restarted plugin answers")
}
