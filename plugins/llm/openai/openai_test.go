package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// testKey is the API key the tests send; no error may ever contain it.
const testKey = "sk-test-lectern-0123456789abcdef5678"

func creds() map[string]string { return map[string]string{llm.CredAPIKey: testKey} }

// recorded is one request the fake upstream received.
type recorded struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// fake is an upstream that answers its n-th request with steps[n] and every later
// one with then, recording each request.
type fake struct {
	srv   *httptest.Server
	steps []http.HandlerFunc
	then  http.HandlerFunc

	mu   sync.Mutex
	reqs []recorded
}

func newFake(t *testing.T, then http.HandlerFunc, steps ...http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{steps: steps, then: then}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, recorded{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if n < len(f.steps) {
			f.steps[n](w, r)
			return
		}
		f.then(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// fixture answers 200 with the testdata file name.
func fixture(t *testing.T, name, contentType string) http.HandlerFunc {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return reply(http.StatusOK, map[string]string{"Content-Type": contentType}, string(body))
}

// errorFixture answers status with the testdata file name and the headers.
func errorFixture(t *testing.T, status int, name string, header map[string]string) http.HandlerFunc {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	return reply(status, h, string(body))
}

func reply(status int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// fastSettings point the provider at baseURL with millisecond backoff.
func fastSettings(baseURL string, extra map[string]any) map[string]any {
	s := map[string]any{"base_url": baseURL, "backoff_base": "1ms", "max_backoff": "2s", "timeout": "5s"}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func configured(t *testing.T, baseURL string, extra map[string]any) *OpenAI {
	t.Helper()
	p := New(slog.New(slog.DiscardHandler))
	_, err := p.Configure(t.Context(), &protocol.ConfigureRequest{Settings: fastSettings(baseURL, extra)})
	require.NoError(t, err)
	return p
}

type testBundle struct {
	p  *OpenAI
	up *fake
}

// setup starts a fake upstream (steps, then `then`) and a provider configured
// against it with extra settings.
func setup(t *testing.T, extra map[string]any, then http.HandlerFunc, steps ...http.HandlerFunc) *testBundle {
	t.Helper()
	up := newFake(t, then, steps...)
	return &testBundle{p: configured(t, up.srv.URL, extra), up: up}
}

// requireClean fails when err's message holds the key or the upstream's URL.
func requireClean(t *testing.T, err error, baseURL string) {
	t.Helper()
	require.Error(t, err)
	require.NotContains(t, err.Error(), testKey)
	require.NotContains(t, err.Error(), "5678", "not even the key's last digits")
	require.NotContains(t, err.Error(), strings.TrimPrefix(baseURL, "http://"))
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	d, err := New(slog.New(slog.DiscardHandler)).Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.Equal(t, "openai", d.Name)
	require.ElementsMatch(t, []string{protocol.CapabilityStreaming, protocol.CapabilityJSONSchema, protocol.CapabilityEmbeddings}, d.Capabilities)
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]any
		wantErr  string
		check    func(t *testing.T, s settings)
	}{
		{name: "empty keeps the defaults", settings: map[string]any{}, check: func(t *testing.T, s settings) {
			require.Equal(t, defaultSettings(), s)
		}},
		{name: "all", settings: map[string]any{
			"base_url": "http://127.0.0.1:11434/v1/", "timeout": "30s", "max_retries": float64(0), "backoff_base": "10ms",
			"max_backoff": 1.5, "default_chat_model": " llama3.1:8b ", "default_embedding_model": "nomic-embed-text",
			"embedding_dimensions": map[string]any{"bge-m3": float64(1024)}, "max_output_field": "max_completion_tokens",
		}, check: func(t *testing.T, s settings) {
			require.Equal(t, settings{
				baseURL: "http://127.0.0.1:11434/v1", timeout: 30 * time.Second, maxRetries: 0, backoff: 10 * time.Millisecond,
				maxBackoff: 1500 * time.Millisecond, chatModel: "llama3.1:8b", embedModel: "nomic-embed-text",
				dims: map[string]int{"bge-m3": 1024}, maxOutputField: maxCompletionTokensField,
			}, s)
		}},
		{name: "relative url", settings: map[string]any{"base_url": "api.openai.com/v1?key=hunter2"}, wantErr: `setting base_url must be an absolute http(s) URL without user info, query or fragment (keys go in the credentials), got "api.openai.com/v1"`},
		{name: "ftp url", settings: map[string]any{"base_url": "ftp://files.example.org"}, wantErr: "setting base_url"},
		{name: "url not a string", settings: map[string]any{"base_url": float64(8080)}, wantErr: "got 8080"},
		{name: "url with user info", settings: map[string]any{"base_url": "https://user:hunter2@gw.example.org/v1"}, wantErr: `got "https://gw.example.org/v1"`},
		{name: "url with query", settings: map[string]any{"base_url": "https://gw.example.org/v1?key=hunter2"}, wantErr: "setting base_url"},
		{name: "zero timeout", settings: map[string]any{"timeout": "0s"}, wantErr: "setting timeout"},
		{name: "timeout not a duration", settings: map[string]any{"timeout": "soon"}, wantErr: "setting timeout"},
		{name: "negative retries", settings: map[string]any{"max_retries": float64(-1)}, wantErr: "setting max_retries"},
		{name: "fractional retries", settings: map[string]any{"max_retries": 1.5}, wantErr: "setting max_retries"},
		{name: "empty model", settings: map[string]any{"default_chat_model": " "}, wantErr: "setting default_chat_model"},
		{name: "model not a string", settings: map[string]any{"default_embedding_model": float64(3)}, wantErr: "setting default_embedding_model"},
		{name: "dimensions not a table", settings: map[string]any{"embedding_dimensions": "bge-m3=1024"}, wantErr: "setting embedding_dimensions"},
		{name: "dimension zero", settings: map[string]any{"embedding_dimensions": map[string]any{"bge-m3": float64(0)}}, wantErr: "setting embedding_dimensions.bge-m3"},
		{name: "bad max output field", settings: map[string]any{"max_output_field": "tokens"}, wantErr: "setting max_output_field"},
		{name: "unknown", settings: map[string]any{"api_key": "sk-x"}, wantErr: `unknown setting "api_key"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := New(slog.New(slog.DiscardHandler))
			_, err := p.Configure(t.Context(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr != "" {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "hunter2")
				require.Equal(t, defaultSettings(), p.set, "refused settings leave the previous ones")
				return
			}
			require.NoError(t, err)
			tc.check(t, p.set)
		})
	}
}

// TestSettingNames keeps every setting name clear of what plugins.toml refuses as
// credential-like (docs/plugins.md): a name holding "token", "secret", "api_key"
// and the like could never be configured.
func TestSettingNames(t *testing.T) {
	t.Parallel()
	credentialLike := regexp.MustCompile(`(?i)(secret|password|passwd|token|api[_-]?key|credential|private[_-]?key)`)
	for _, name := range settingNames {
		require.False(t, credentialLike.MatchString(name), name)
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	t.Run("key as bearer token, base URL per call", func(t *testing.T) {
		t.Parallel()
		up := newFake(t, fixture(t, "models.json", "application/json"))
		// The configured base URL is dead; the credential one is used.
		p := configured(t, "http://127.0.0.1:1/v1", nil)
		_, err := p.Models(t.Context(), &llm.ModelsRequest{Credentials: map[string]string{
			llm.CredAPIKey: testKey, llm.CredBaseURL: up.srv.URL + "/v1/",
		}})
		require.NoError(t, err)
		reqs := up.requests()
		require.Len(t, reqs, 1)
		require.Equal(t, "/v1/models", reqs[0].path)
		require.Equal(t, "Bearer "+testKey, reqs[0].header.Get("Authorization"))
	})
	t.Run("no key, no authorization header", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, fixture(t, "models.json", "application/json"))
		_, err := b.p.Models(t.Context(), &llm.ModelsRequest{})
		require.NoError(t, err)
		require.Empty(t, b.up.requests()[0].header.Get("Authorization"))
	})
	t.Run("bad credential base URL is refused without repeating it", func(t *testing.T) {
		t.Parallel()
		p := configured(t, "http://127.0.0.1:1/v1", nil)
		_, err := p.Models(t.Context(), &llm.ModelsRequest{Credentials: map[string]string{llm.CredBaseURL: "gw.example.org/v1?key=hunter2"}})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.NotContains(t, err.Error(), "hunter2")
	})
	t.Run("network failure names no URL", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL
		srv.Close() // nothing listens there any more
		p := configured(t, base, map[string]any{"max_retries": float64(1)})
		_, err := p.Models(t.Context(), &llm.ModelsRequest{Credentials: creds()})
		require.ErrorIs(t, err, protocol.ErrUnavailable)
		require.NotContains(t, err.Error(), "/models")
		require.NotContains(t, err.Error(), "http://")
	})
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, errorFixture(t, http.StatusUnauthorized, "error_401.json", nil))
	_, err := llm.Collect(t.Context(), b.p, &llm.ChatRequest{Credentials: creds(), Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	require.ErrorIs(t, err, protocol.ErrUnauthorized)
	require.ErrorContains(t, err, "Incorrect API key provided: [redacted]")
	requireClean(t, err, b.up.srv.URL)
	require.Len(t, b.up.requests(), 1, "refused credentials are not retried")

	t.Run("the upstream quotes the whole key", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusForbidden, nil, `{"error":{"message":"key `+testKey+` may not use this model","type":"permission_error"}}`))
		_, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: map[string]string{llm.CredAPIKey: "gw-secret-token-42"}, Model: "m", Inputs: []string{"x"}})
		require.ErrorIs(t, err, protocol.ErrUnauthorized)
		require.NotContains(t, err.Error(), testKey)
		b2 := setup(t, nil, reply(http.StatusUnauthorized, nil, `{"error":{"message":"token gw-secret-token-42 revoked"}}`))
		_, err = b2.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: map[string]string{llm.CredAPIKey: "gw-secret-token-42"}, Model: "m", Inputs: []string{"x"}})
		require.ErrorIs(t, err, protocol.ErrUnauthorized)
		require.NotContains(t, err.Error(), "gw-secret-token-42")
		require.ErrorContains(t, err, "token [redacted] revoked")
	})
}

// conformanceUpstream serves the model list and answers everything else with an
// OpenAI error, which the kit never needs.
func conformanceUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	models := fixture(t, "models.json", "application/json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" && r.Header.Get("Authorization") == "Bearer "+testKey {
			models(w, r)
			return
		}
		reply(http.StatusNotFound, nil, `{"error":{"message":"not here","type":"invalid_request_error"}}`)(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := conformanceUpstream(t)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindLLM,
		// models.json lists acme-embed-v2, an embedding model of unknown length,
		// which the kit refuses to see with dimension 0.
		Settings: map[string]any{
			"base_url": srv.URL + "/v1", "backoff_base": "1ms", "timeout": "5s",
			"default_chat_model": "gpt-4o-mini", "embedding_dimensions": map[string]any{"bge-m3": float64(1024)},
		},
		Credentials: creds(),
	})
}

// collect runs Chat and returns every chunk sent.
func collect(ctx context.Context, p *OpenAI, req *llm.ChatRequest) ([]*llm.ChatChunk, error) {
	var chunks []*llm.ChatChunk
	err := p.Chat(ctx, req, llm.ChatStreamFunc(func(c *llm.ChatChunk) error {
		chunks = append(chunks, c)
		return nil
	}))
	return chunks, err
}
