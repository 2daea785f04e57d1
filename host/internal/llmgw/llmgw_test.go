package llmgw_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const plantedKey = "sk-planted-0c9e4b7a-gw-5513"

// gatewayServer stands in for the LLM gateway's admin API: it records what
// registration calls carry and can be told to refuse them.
type gatewayServer struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []string
	bodies  []map[string]any
	auth    []string
	refuse  bool
	models  map[string]map[string]any
	deleted []string
}

func newGateway(t *testing.T) *gatewayServer {
	g := &gatewayServer{models: map[string]map[string]any{}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		g.mu.Lock()
		defer g.mu.Unlock()
		g.calls = append(g.calls, r.Method+" "+r.URL.Path)
		g.bodies = append(g.bodies, body)
		g.auth = append(g.auth, r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/model/new":
			if g.refuse {
				w.WriteHeader(http.StatusBadRequest)
				// A careless gateway echoes the request; the error must not.
				_, _ = w.Write(append([]byte(`{"error":{"message":"invalid model, got `), raw...))
				return
			}
			info := body["model_info"].(map[string]any)
			g.models[info["id"].(string)] = body
			_, _ = w.Write([]byte(`{"model_id":"` + info["id"].(string) + `"}`))
		case "/model/delete":
			id, _ := body["id"].(string)
			if _, ok := g.models[id]; !ok {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"detail":"model not found"}`))
				return
			}
			delete(g.models, id)
			g.deleted = append(g.deleted, id)
			_, _ = w.Write([]byte(`{"message":"deleted"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

type bundle struct {
	settings *userconfig.Store
	logs     *strings.Builder
}

func newSettings(t *testing.T) *bundle {
	t.Helper()
	keys, err := secrets.NewKeyring("a7c1e9f3b5d2a8c4e6f0b1d9c3a5e7f2b4d6c8e0", "")
	require.NoError(t, err)
	return &bundle{settings: userconfig.New(dbtest.NewDB(t), keys), logs: &strings.Builder{}}
}

func (b *bundle) gateway(url string) *llmgw.Gateway {
	return llmgw.New(llmgw.Config{Settings: b.settings, Builtin: extractive.New(nil), GatewayURL: url, GatewayKey: "gw-master-key",
		Logger: slog.New(slog.NewJSONHandler(b.logs, nil))})
}

func (b *bundle) putKey(t *testing.T, key, value string) {
	t.Helper()
	v, _ := json.Marshal(value)
	_, err := b.settings.PutSystem(context.Background(), key, v)
	require.NoError(t, err)
}

func TestRolesDefaultToTheBuiltinPlugin(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	gw := b.gateway("")
	ctx := context.Background()
	list, err := gw.Assignments(ctx)
	require.NoError(t, err)
	require.Len(t, list, len(llmgw.Roles))
	for _, a := range list {
		require.True(t, a.Default)
		require.Equal(t, llmgw.Builtin, a.Provider)
	}
	bind, err := gw.Resolve(ctx, llmgw.RoleAnswer)
	require.NoError(t, err)
	require.Equal(t, llmgw.BuiltinChatModel, bind.Model)
	emb, err := llmgw.Embedder{G: gw}.Embed(ctx, []string{"quote verification", "hybrid retrieval"})
	require.NoError(t, err)
	require.Len(t, emb.Vectors, 2)
	require.Equal(t, llmgw.BuiltinEmbedModel, emb.Model)
}

func TestAssignRefusesWhatCannotBeCalled(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	gw := b.gateway("")
	ctx := context.Background()
	_, err := gw.Assign(ctx, "poetry", "openai", "gpt-4o-mini")
	require.ErrorIs(t, err, llmgw.ErrUnknownRole)
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, "acme", "x")
	require.ErrorIs(t, err, llmgw.ErrUnknownProvider)
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, "openai", "gpt 4o; rm -rf")
	require.ErrorIs(t, err, llmgw.ErrBadModel)
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, "openai", "gpt-4o-mini")
	require.ErrorIs(t, err, llmgw.ErrNoKey, "no key stored for openai")
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, llmgw.CustomCompatible, "llama3")
	require.ErrorIs(t, err, llmgw.ErrNoBaseURL, "the custom endpoint needs its base URL (a key is optional)")
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, llmgw.Builtin, "gpt-4o")
	require.ErrorIs(t, err, llmgw.ErrBadModel, "the builtin plugin has its own models only")
	a, err := gw.Assignment(ctx, llmgw.RoleAnswer)
	require.NoError(t, err)
	require.True(t, a.Default, "nothing refused was stored")
}

func TestAssignWithoutAGatewayCallsTheProviderDirectly(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	gw := b.gateway("")
	ctx := context.Background()
	b.putKey(t, "llm.anthropic.api_key", plantedKey)
	a, err := gw.Assign(ctx, llmgw.RoleSummarize, "anthropic", "claude-sonnet-4-5")
	require.NoError(t, err)
	require.Equal(t, "claude-sonnet-4-5", a.Model)
	// No plugin called "openai" runs here: the binding cannot be made, and the
	// error says which plugin is missing, not the key.
	_, err = gw.Resolve(ctx, llmgw.RoleSummarize)
	require.ErrorIs(t, err, llmgw.ErrUnavailable)
	require.NotContains(t, err.Error(), plantedKey)

	var seen *llm.ChatRequest
	gw = llmgw.New(llmgw.Config{Settings: b.settings, Builtin: extractive.New(nil), Plugins: func(name string) (llm.Provider, error) {
		require.Equal(t, "openai", name)
		return capture{Provider: extractive.New(nil), seen: &seen}, nil
	}})
	bind, err := gw.Resolve(ctx, llmgw.RoleSummarize)
	require.NoError(t, err)
	require.Equal(t, "claude-sonnet-4-5", bind.Model)
	_, _ = bind.Collect(ctx, &llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: llm.FormatRequest("q", nil)}}})
	require.NotNil(t, seen)
	require.Equal(t, plantedKey, seen.Credentials[llm.CredAPIKey], "the key reaches the plugin per call")
	require.Equal(t, "https://api.anthropic.com/v1", seen.Credentials[llm.CredBaseURL])
	require.Empty(t, seen.Credentials[llm.CredOperatorEndpoint], "a provider endpoint is checked by the plugin's dialer")
	require.Equal(t, "claude-sonnet-4-5", seen.Model)
	require.NotContains(t, b.logs.String(), plantedKey)
}

// capture records the last chat request and answers through the builtin provider.
type capture struct {
	llm.Provider
	seen **llm.ChatRequest
}

func (c capture) Chat(ctx context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	*c.seen = req
	return c.Provider.Chat(ctx, req, stream)
}

func TestAssignRegistersTheModelWithTheGateway(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	srv := newGateway(t)
	gw := b.gateway(srv.URL)
	ctx := context.Background()
	b.putKey(t, "llm.openai.api_key", plantedKey)

	_, err := gw.Assign(ctx, llmgw.RoleAnswer, "openai", "gpt-4o-mini")
	require.NoError(t, err)
	srv.mu.Lock()
	reg := srv.models["lectern-answer"]
	require.Equal(t, "Bearer gw-master-key", srv.auth[len(srv.auth)-1])
	srv.mu.Unlock()
	require.NotNil(t, reg, "POST /model/new registered the alias")
	require.Equal(t, "lectern-answer", reg["model_name"])
	params := reg["litellm_params"].(map[string]any)
	require.Equal(t, "openai/gpt-4o-mini", params["model"])
	require.Equal(t, plantedKey, params["api_key"], "the key travels in the registration body (store 2)")

	// Calls go through the gateway under the alias with the gateway's key.
	var seen *llm.ChatRequest
	gw2 := llmgw.New(llmgw.Config{Settings: b.settings, Builtin: extractive.New(nil), GatewayURL: srv.URL, GatewayKey: "gw-master-key",
		Plugins: func(string) (llm.Provider, error) { return capture{Provider: extractive.New(nil), seen: &seen}, nil }})
	bind, err := gw2.Resolve(ctx, llmgw.RoleAnswer)
	require.NoError(t, err)
	_, _ = bind.Collect(ctx, &llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: llm.FormatRequest("q", nil)}}})
	require.Equal(t, "lectern-answer", seen.Model)
	require.Equal(t, srv.URL, seen.Credentials[llm.CredBaseURL])
	require.Equal(t, "true", seen.Credentials[llm.CredOperatorEndpoint], "the operator's gateway is exempt from the dialer's check, as from the save-time one")
	require.Equal(t, "gw-master-key", seen.Credentials[llm.CredAPIKey])

	// Re-assigning replaces the registration; a gateway that lost its database
	// gets every assignment again from the settings (store 1).
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, "openai", "gpt-4.1")
	require.NoError(t, err)
	srv.mu.Lock()
	require.Contains(t, srv.deleted, "lectern-answer")
	srv.models = map[string]map[string]any{}
	srv.mu.Unlock()
	require.NoError(t, gw.Sync(ctx))
	srv.mu.Lock()
	require.Equal(t, "openai/gpt-4.1", srv.models["lectern-answer"]["litellm_params"].(map[string]any)["model"])
	srv.mu.Unlock()

	// Restoring the builtin default removes the gateway's model.
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, llmgw.Builtin, "")
	require.NoError(t, err)
	srv.mu.Lock()
	require.NotContains(t, srv.models, "lectern-answer")
	srv.mu.Unlock()
	require.NotContains(t, b.logs.String(), plantedKey)
}

func TestAGatewayRefusalStoresNothingAndLeaksNoKey(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	srv := newGateway(t)
	srv.refuse = true
	gw := b.gateway(srv.URL)
	ctx := context.Background()
	b.putKey(t, "llm.google.api_key", plantedKey)
	_, err := gw.Assign(ctx, llmgw.RoleExtract, "google", "gemini-2.5-flash")
	require.ErrorIs(t, err, llmgw.ErrGateway)
	require.NotContains(t, err.Error(), plantedKey, "the gateway's echo of the request is scrubbed")
	require.NotContains(t, err.Error(), "gw-master-key")
	a, err := gw.Assignment(ctx, llmgw.RoleExtract)
	require.NoError(t, err)
	require.True(t, a.Default)
	require.NotContains(t, b.logs.String(), plantedKey)
}

func TestALocalRuntimeOnTheCustomEndpointNeedsNoKey(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	ctx := context.Background()
	v, _ := json.Marshal("http://127.0.0.1:11434/v1")
	_, err := b.settings.PutSystem(ctx, llmgw.BaseURLKey, v)
	require.NoError(t, err)
	var seen *llm.ChatRequest
	gw := llmgw.New(llmgw.Config{Settings: b.settings, Builtin: extractive.New(nil),
		Plugins: func(string) (llm.Provider, error) { return capture{Provider: extractive.New(nil), seen: &seen}, nil }})
	_, err = gw.Assign(ctx, llmgw.RoleAnswer, llmgw.CustomCompatible, "llama3.2")
	require.NoError(t, err)
	bind, err := gw.Resolve(ctx, llmgw.RoleAnswer)
	require.NoError(t, err)
	_, _ = bind.Collect(ctx, &llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: llm.FormatRequest("q", nil)}}})
	require.Equal(t, "http://127.0.0.1:11434/v1", seen.Credentials[llm.CredBaseURL])
	require.Empty(t, seen.Credentials[llm.CredAPIKey])
	require.Equal(t, "llama3.2", seen.Model)
}

// reassignDuring stands in for the custom endpoint's model: it embeds with the
// builtin provider under any model name and, during the call, gives
// the embed role back to the builtin plugin: an admin changing the model while a
// passage is embedded.
type reassignDuring struct {
	llm.Provider
	gw   **llmgw.Gateway
	seen *string
}

func (r reassignDuring) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	*r.seen = req.Model
	if _, err := (*r.gw).Assign(ctx, llmgw.RoleEmbed, llmgw.Builtin, ""); err != nil {
		return nil, err
	}
	asked := *req
	asked.Model = llmgw.BuiltinEmbedModel // the only model the builtin plugin serves
	return r.Provider.Embed(ctx, &asked)
}

func TestEmbedNamesTheModelThatMadeTheVectors(t *testing.T) {
	t.Parallel()
	b := newSettings(t)
	ctx := context.Background()
	v, _ := json.Marshal("http://127.0.0.1:11434/v1")
	_, err := b.settings.PutSystem(ctx, llmgw.BaseURLKey, v)
	require.NoError(t, err)
	var gw *llmgw.Gateway
	var seen string
	gw = llmgw.New(llmgw.Config{Settings: b.settings, Builtin: extractive.New(nil),
		Plugins: func(name string) (llm.Provider, error) {
			if name != "openai" {
				return nil, llmgw.ErrUnavailable
			}
			return reassignDuring{Provider: extractive.New(nil), gw: &gw, seen: &seen}, nil
		}})
	e := llmgw.Embedder{G: gw}

	emb, err := e.Embed(ctx, []string{"hybrid retrieval"})
	require.NoError(t, err)
	require.Equal(t, llmgw.BuiltinEmbedModel, emb.Model)

	_, err = gw.Assign(ctx, llmgw.RoleEmbed, llmgw.CustomCompatible, "nomic-embed-text")
	require.NoError(t, err)
	// The custom model embeds while the role goes back to the builtin plugin: the
	// vectors are the custom model's, and so is their name.
	emb, err = e.Embed(ctx, []string{"hybrid retrieval"})
	require.NoError(t, err)
	require.Equal(t, "nomic-embed-text", seen)
	require.Equal(t, llmgw.CustomCompatible+"/nomic-embed-text", emb.Model)
	a, err := gw.Assignment(ctx, llmgw.RoleEmbed)
	require.NoError(t, err)
	require.True(t, a.Default, "the role changed during the call")

	emb, err = e.Embed(ctx, []string{"hybrid retrieval"})
	require.NoError(t, err)
	require.Equal(t, llmgw.BuiltinEmbedModel, emb.Model, "the next call is the new assignment's")
}
