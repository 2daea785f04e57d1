package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// testToken is a well-formed bot token that exists nowhere.
const testToken = "123456789:AAF-test_token_value_abcdefghij"

// creds are the credentials of every test call.
var creds = map[string]string{messenger.CredBotToken: testToken}

// reply is one canned Bot API answer.
type reply struct {
	status int
	body   []byte
}

// apiCall is one request the fake Bot API received.
type apiCall struct {
	method string
	token  string
	params map[string]any
}

// fakeBot is a local Bot API: it answers each method from its queue of replies,
// then from its fallback, and records every call. A getUpdates with nothing
// queued waits until the caller gives up, as a long poll with no update does.
type fakeBot struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	queue    map[string][]reply
	fallback map[string]reply
	calls    []apiCall
	// files are served at /file/bot<token>/<path>, by path; fileTokens records
	// the token of each file request.
	files      map[string]reply
	fileTokens []string
}

func newFakeBot(t *testing.T) *fakeBot {
	t.Helper()
	f := &fakeBot{t: t, queue: map[string][]reply{}, fallback: map[string]reply{
		"getMe":               {200, testdata(t, "getme.json")},
		"sendMessage":         {200, testdata(t, "sendmessage_ok.json")},
		"editMessageText":     {200, testdata(t, "sendmessage_ok.json")},
		"answerCallbackQuery": {200, testdata(t, "ok_true.json")},
		"setMyCommands":       {200, testdata(t, "ok_true.json")},
		"deleteMyCommands":    {200, testdata(t, "ok_true.json")},
	}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeBot) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		f.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	params := map[string]any{}
	_ = json.Unmarshal(body, &params)
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{method: method, token: token, params: params})
	q := f.queue[method]
	var rep reply
	have := len(q) > 0
	if have {
		rep, f.queue[method] = q[0], q[1:]
	} else {
		rep, have = f.fallback[method]
	}
	f.mu.Unlock()
	if !have && method == "getUpdates" {
		if params["offset"] == float64(-1) {
			rep = reply{200, []byte(`{"ok":true,"result":[]}`)}
		} else {
			<-r.Context().Done()
			return
		}
	} else if !have {
		rep = reply{404, []byte(`{"ok":false,"error_code":404,"description":"Not Found"}`)}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

// serveFile answers a file download: rest is "<token>/<path>".
func (f *fakeBot) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	f.mu.Lock()
	f.fileTokens = append(f.fileTokens, token)
	rep, ok := f.files[path]
	f.mu.Unlock()
	if !ok || token != testToken {
		http.NotFound(w, nil)
		return
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

// putFile serves body at path.
func (f *fakeBot) putFile(path string, status int, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		f.files = map[string]reply{}
	}
	f.files[path] = reply{status, body}
}

// push queues replies of method.
func (f *fakeBot) push(method string, replies ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue[method] = append(f.queue[method], replies...)
}

// callsOf returns the calls of method so far.
func (f *fakeBot) callsOf(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

// testdata reads a response this package's tests wrote from the Bot API
// documentation.
func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// newTransport returns the plugin configured against f with fast retries.
func newTransport(t *testing.T, f *fakeBot, extra map[string]any) *Telegram {
	t.Helper()
	tg := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := map[string]any{"base_url": f.srv.URL, "backoff_base": "1ms", "max_retry_wait": "2s", "request_timeout": "5s", "poll_timeout": "1s"}
	for k, v := range extra {
		s[k] = v
	}
	_, err := tg.Configure(context.Background(), &protocol.ConfigureRequest{Settings: s})
	require.NoError(t, err)
	return tg
}
