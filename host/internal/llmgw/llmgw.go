// Package llmgw is the host's LLM gateway: it decides which provider plugin and
// which model serve each role (summarize, answer, relevance, extract, embed,
// cards), and hands each call the credentials it needs, decrypted in memory for
// that call only.
//
// A role is assigned by an admin (PUT /api/admin/llm/roles/{role}) and stored as a
// deployment-wide user_config row llm.roles.<role>. Unassigned roles use the
// builtin extractive plugin, so a fresh install answers without any model.
//
// With LLM_GATEWAY_URL set, assigning a cloud model also registers it with the
// self-hosted gateway through its model-registration call (POST /model/new), the
// provider key carried in that request body only (SPEC "Cloud LLM provider
// settings", store 2); calls then go through the gateway under the alias
// lectern-<role>. Without a gateway the openai-compatible plugin calls the provider
// directly, with the key in the call's credentials.
package llmgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/llm"
)

// Roles.
const (
	RoleSummarize = "summarize"
	RoleAnswer    = "answer"
	RoleRelevance = "relevance"
	RoleExtract   = "extract"
	RoleEmbed     = "embed"
	RoleCards     = "cards"
)

// Roles lists every role, in the order the settings show them.
var Roles = []string{RoleAnswer, RoleSummarize, RoleExtract, RoleCards, RoleRelevance, RoleEmbed}

// Builtin is the provider name of the embedded extractive plugin, and its models.
const (
	Builtin           = "builtin"
	BuiltinChatModel  = "extractive"
	BuiltinEmbedModel = "lectern-lexical-v2-384"
)

// CustomCompatible is the custom OpenAI-compatible endpoint.
const CustomCompatible = "custom_compatible"

// Local is a model runtime on this machine that speaks the OpenAI API (Ollama,
// llama.cpp's server, vLLM, LM Studio): its base URL is a setting, plain http to
// loopback by default, and its key is optional.
const Local = "local"

// LocalDefaultBaseURL is the base URL offered for a local runtime: Ollama's
// OpenAI-compatible API on its default port.
const LocalDefaultBaseURL = "http://127.0.0.1:11434/v1"

// compatiblePlugin is the plugin that speaks to every OpenAI-compatible provider.
const compatiblePlugin = "openai"

// Provider is how one cloud provider is reached.
type Provider struct {
	// Name is the provider's settings name (llm.<name>.api_key or
	// llm.providers.<name>.api_key).
	Name string
	// BaseURL is its OpenAI-compatible endpoint; empty for custom_compatible and
	// local, whose base URL is a setting (BaseURLKeyOf) and whose key is optional.
	BaseURL string
	// Label names it for people; Name when empty.
	Label string
	// GatewayPrefix is the gateway's provider prefix for model ids
	// (<prefix>/<model>).
	GatewayPrefix string
}

// Providers are the cloud providers a role can be assigned to, besides builtin.
// The first three keep the flat key names.
var Providers = []Provider{
	{Name: "openai", BaseURL: "https://api.openai.com/v1", GatewayPrefix: "openai"},
	{Name: "anthropic", BaseURL: "https://api.anthropic.com/v1", GatewayPrefix: "anthropic"},
	{Name: "google", BaseURL: "https://generativelanguage.googleapis.com/v1beta/openai", GatewayPrefix: "gemini"},
	{Name: "mistral", BaseURL: "https://api.mistral.ai/v1", GatewayPrefix: "mistral"},
	{Name: "groq", BaseURL: "https://api.groq.com/openai/v1", GatewayPrefix: "groq"},
	{Name: "openrouter", BaseURL: "https://openrouter.ai/api/v1", GatewayPrefix: "openrouter"},
	{Name: CustomCompatible, Label: "Custom OpenAI-compatible endpoint", GatewayPrefix: "openai"},
	{Name: Local, Label: "Local model (OpenAI-compatible)", GatewayPrefix: "openai"},
}

// Title is how the provider is named for people.
func (p Provider) Title() string {
	if p.Label != "" {
		return p.Label
	}
	return p.Name
}

// SettableBaseURL reports whether the provider's base URL is a setting (the
// custom endpoint and a local runtime); such a provider needs no key.
func (p Provider) SettableBaseURL() bool { return p.BaseURL == "" }

// LookupProvider returns the cloud provider called name.
func LookupProvider(name string) (Provider, bool) {
	i := slices.IndexFunc(Providers, func(p Provider) bool { return p.Name == name })
	if i < 0 {
		return Provider{}, false
	}
	return Providers[i], true
}

// FlatProviders are the three earlier providers whose keys keep the flat,
// backward-compatible names llm.<provider>.api_key.
var FlatProviders = []string{"openai", "anthropic", "google"}

// KeyName is the config key of a provider's API key: flat for the three earlier
// providers, llm.providers.<provider>.api_key for every other.
func KeyName(provider string) string {
	if slices.Contains(FlatProviders, provider) {
		return "llm." + provider + ".api_key"
	}
	return "llm.providers." + provider + ".api_key"
}

// BaseURLKey is the config key of the custom endpoint's base URL.
const BaseURLKey = "llm.providers.custom_compatible.base_url"

// BaseURLKeyOf is the config key of the base URL of a provider whose base URL is
// a setting: BaseURLKey for the custom endpoint.
func BaseURLKeyOf(provider string) string { return "llm.providers." + provider + ".base_url" }

func roleKey(role string) string { return "llm.roles." + role }

// Assignment says which provider and model serve a role.
type Assignment struct {
	Role     string `json:"role"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Default is true when nothing is assigned and the builtin plugin serves it.
	Default bool `json:"default,omitempty"`
}

// Errors of Assign, for the API to answer 422 or 502.
var (
	ErrUnknownRole     = errors.New("llmgw: unknown role")
	ErrUnknownProvider = errors.New("llmgw: unknown provider")
	ErrBadModel        = errors.New("llmgw: bad model")
	ErrNoKey           = errors.New("llmgw: the provider has no API key set")
	ErrNoBaseURL       = errors.New("llmgw: the endpoint has no base URL set")
	ErrGateway         = errors.New("llmgw: the LLM gateway refused the model")
	ErrUnavailable     = errors.New("llmgw: the provider's plugin is not available")
)

var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$`)

// PluginFunc returns the LLM plugin called name (pluginhost.Host.LLM).
type PluginFunc func(name string) (llm.Provider, error)

// Config configures a Gateway.
type Config struct {
	// Settings holds role assignments, keys and the custom base URL.
	Settings *userconfig.Store
	// Plugins finds running LLM plugins by name; nil means none run out of
	// process.
	Plugins PluginFunc
	// Builtin serves the builtin provider when no plugin called "builtin" runs
	// (tests, and hosts without plugins). Required.
	Builtin llm.Provider
	// GatewayURL and GatewayKey are LLM_GATEWAY_URL and LLM_GATEWAY_KEY.
	GatewayURL string
	GatewayKey string
	// GatewayHosts may be reached over plain HTTP (the self-hosted gateway).
	GatewayHosts []string
	// Resolver checks custom base URLs; nil uses the system resolver.
	Resolver netguard.Resolver
	// HTTP calls the gateway; default a client with a 30 s timeout.
	HTTP   *http.Client
	Logger *slog.Logger
}

// Gateway resolves roles to providers. Safe for concurrent use.
type Gateway struct {
	cfg Config

	mu      sync.Mutex
	cached  map[string]Assignment
	expires time.Time
}

// cacheFor bounds how long another host's assignment change takes to be seen.
const cacheFor = 10 * time.Second

// New returns a Gateway.
func New(cfg Config) *Gateway {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Gateway{cfg: cfg}
}

// GatewayConfigured reports whether calls go through a self-hosted gateway.
func (g *Gateway) GatewayConfigured() bool { return g.cfg.GatewayURL != "" }

// Assignments returns every role's assignment, defaults included.
func (g *Gateway) Assignments(ctx context.Context) ([]Assignment, error) {
	m, err := g.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Assignment, 0, len(Roles))
	for _, r := range Roles {
		out = append(out, m[r])
	}
	return out, nil
}

// Assignment returns one role's assignment.
func (g *Gateway) Assignment(ctx context.Context, role string) (Assignment, error) {
	m, err := g.load(ctx)
	if err != nil {
		return Assignment{}, err
	}
	a, ok := m[role]
	if !ok {
		return Assignment{}, fmt.Errorf("%w: %q", ErrUnknownRole, role)
	}
	return a, nil
}

func defaultAssignment(role string) Assignment {
	model := BuiltinChatModel
	if role == RoleEmbed {
		model = BuiltinEmbedModel
	}
	return Assignment{Role: role, Provider: Builtin, Model: model, Default: true}
}

func (g *Gateway) load(ctx context.Context) (map[string]Assignment, error) {
	g.mu.Lock()
	if g.cached != nil && time.Now().Before(g.expires) {
		m := g.cached
		g.mu.Unlock()
		return m, nil
	}
	g.mu.Unlock()
	entries, err := g.cfg.Settings.ListSystem(ctx, "llm.roles.")
	if err != nil {
		return nil, fmt.Errorf("llmgw: %w", err)
	}
	m := make(map[string]Assignment, len(Roles))
	for _, r := range Roles {
		m[r] = defaultAssignment(r)
	}
	for _, e := range entries {
		var a Assignment
		if err := json.Unmarshal(e.Value, &a); err != nil || a.Provider == "" {
			g.cfg.Logger.WarnContext(ctx, "llm role assignment unreadable; using the builtin plugin", "key", e.Key)
			continue
		}
		role := e.Key[len("llm.roles."):]
		if _, ok := m[role]; !ok {
			continue
		}
		a.Role, a.Default = role, false
		m[role] = a
	}
	g.mu.Lock()
	g.cached, g.expires = m, time.Now().Add(cacheFor)
	g.mu.Unlock()
	return m, nil
}

func (g *Gateway) forget() {
	g.mu.Lock()
	g.cached = nil
	g.mu.Unlock()
}

// Assign gives role to provider's model after checking it can be called: the
// provider must have its key (and the custom endpoint its base URL) set; with a
// gateway configured the model is registered there first, and nothing is stored
// when the gateway refuses it. Assigning provider "builtin" undoes an assignment.
func (g *Gateway) Assign(ctx context.Context, role, provider, model string) (Assignment, error) {
	if !slices.Contains(Roles, role) {
		return Assignment{}, fmt.Errorf("%w: %q (one of %v)", ErrUnknownRole, role, Roles)
	}
	if provider == Builtin {
		want := defaultAssignment(role)
		if model != "" && model != want.Model {
			return Assignment{}, fmt.Errorf("%w: the builtin plugin serves %s with %q", ErrBadModel, role, want.Model)
		}
		if err := g.cfg.Settings.DeleteSystem(ctx, roleKey(role)); err != nil && !errors.Is(err, userconfig.ErrNotFound) {
			return Assignment{}, fmt.Errorf("llmgw: %w", err)
		}
		if g.GatewayConfigured() {
			g.unregister(ctx, role)
		}
		g.forget()
		return want, nil
	}
	p, ok := LookupProvider(provider)
	if !ok {
		return Assignment{}, fmt.Errorf("%w: %q", ErrUnknownProvider, provider)
	}
	if !modelPattern.MatchString(model) {
		return Assignment{}, fmt.Errorf("%w: %q (letters, digits and . _ : / @ + -, at most 200)", ErrBadModel, model)
	}
	target, err := g.target(ctx, p)
	if err != nil {
		return Assignment{}, err
	}
	if g.GatewayConfigured() {
		if err := g.register(ctx, role, p, model, target); err != nil {
			return Assignment{}, err
		}
	}
	a := Assignment{Role: role, Provider: provider, Model: model}
	v, _ := json.Marshal(a)
	if _, err := g.cfg.Settings.PutSystem(ctx, roleKey(role), v); err != nil {
		return Assignment{}, fmt.Errorf("llmgw: %w", err)
	}
	g.forget()
	return a, nil
}

// target is where a provider's calls go without a gateway: its base URL (the
// custom one checked again, since DNS may have changed) and its key, in memory.
type target struct {
	baseURL string
	apiKey  string
}

func (g *Gateway) target(ctx context.Context, p Provider) (target, error) {
	key, err := g.cfg.Settings.SystemSecret(ctx, KeyName(p.Name))
	switch {
	case errors.Is(err, userconfig.ErrNotFound) && p.SettableBaseURL():
		// A local model runtime (Ollama, llama.cpp, vLLM) asks for no key.
		key, err = "", nil
	case errors.Is(err, userconfig.ErrNotFound):
		return target{}, fmt.Errorf("%w: set %s first", ErrNoKey, KeyName(p.Name))
	}
	if err != nil {
		return target{}, fmt.Errorf("llmgw: %w", err)
	}
	t := target{baseURL: p.BaseURL, apiKey: key}
	if p.SettableBaseURL() {
		if t.baseURL, err = g.savedBaseURL(ctx, p); err != nil {
			return target{}, err
		}
		if err := g.CheckBaseURL(ctx, t.baseURL); err != nil {
			return target{}, fmt.Errorf("llmgw: %s endpoint refused: %w", p.Name, err)
		}
	}
	return t, nil
}

// savedBaseURL is the base URL saved for a provider whose base URL is a setting.
func (g *Gateway) savedBaseURL(ctx context.Context, p Provider) (string, error) {
	key := BaseURLKeyOf(p.Name)
	raw, err := g.cfg.Settings.SystemValue(ctx, key)
	if errors.Is(err, userconfig.ErrNotFound) {
		return "", fmt.Errorf("%w: set %s first", ErrNoBaseURL, key)
	}
	if err != nil {
		return "", fmt.Errorf("llmgw: %w", err)
	}
	var u string
	if err := json.Unmarshal(raw, &u); err != nil || u == "" {
		return "", fmt.Errorf("%w: set %s first", ErrNoBaseURL, key)
	}
	return u, nil
}

// CheckBaseURL applies the model-endpoint rule to a base URL an admin gives
// (netguard.CheckBaseURL): https anywhere but link-local, metadata, reserved and
// the like; plain http only to loopback or the self-hosted gateway.
func (g *Gateway) CheckBaseURL(ctx context.Context, raw string) error {
	return netguard.CheckBaseURL(ctx, raw, netguard.BaseURLOpts{GatewayHosts: g.cfg.GatewayHosts, Resolver: g.cfg.Resolver})
}

// Alias is the gateway's model name for a role.
func Alias(role string) string { return "lectern-" + role }

// Binding is a resolved role: the provider client, the model and the credentials
// of one call. It lives for one request; never store or log it.
type Binding struct {
	Role     string
	Provider string
	// Model is the model the provider is asked for (the gateway alias through a
	// gateway).
	Model string
	// Assigned is the model the admin assigned.
	Assigned string
	client   llm.Provider
	creds    map[string]string
}

// Chat runs a chat completion with the role's model and credentials.
func (b *Binding) Chat(ctx context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	r := *req
	r.Model, r.Credentials = b.Model, b.creds
	return b.client.Chat(ctx, &r, stream)
}

// Collect runs a chat completion and returns the whole answer.
func (b *Binding) Collect(ctx context.Context, req *llm.ChatRequest) (*llm.ChatResponse, error) {
	r := *req
	r.Model, r.Credentials = b.Model, b.creds
	return llm.Collect(ctx, b.client, &r)
}

// Embed embeds texts with the role's model.
func (b *Binding) Embed(ctx context.Context, texts []string) (*llm.EmbedResponse, error) {
	return b.client.Embed(ctx, &llm.EmbedRequest{Model: b.Model, Inputs: texts, Credentials: b.creds})
}

// Endpoint names where the binding's calls go, for people: the host of the
// provider's base URL (the LLM gateway's when one is configured), or "" for the
// builtin plugin.
func (b *Binding) Endpoint() string {
	raw := b.creds[llm.CredBaseURL]
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return ""
}

// Fallback is the builtin plugin's binding for role, which answers when the
// assigned model cannot.
func (g *Gateway) Fallback(role string) (*Binding, error) {
	a := defaultAssignment(role)
	client, err := g.plugin(Builtin)
	if err != nil {
		return nil, err
	}
	return &Binding{Role: role, Provider: Builtin, Model: a.Model, Assigned: a.Model, client: client}, nil
}

// Resolve returns the binding of role for one call.
func (g *Gateway) Resolve(ctx context.Context, role string) (*Binding, error) {
	a, err := g.Assignment(ctx, role)
	if err != nil {
		return nil, err
	}
	if a.Provider == Builtin {
		client, err := g.plugin(Builtin)
		if err != nil {
			return nil, err
		}
		return &Binding{Role: role, Provider: Builtin, Model: a.Model, Assigned: a.Model, client: client}, nil
	}
	p, ok := LookupProvider(a.Provider)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownProvider, a.Provider)
	}
	client, err := g.plugin(compatiblePlugin)
	if err != nil {
		return nil, err
	}
	b := &Binding{Role: role, Provider: a.Provider, Assigned: a.Model, client: client}
	if g.GatewayConfigured() {
		b.Model = Alias(role)
		// The operator's gateway is exempt from the endpoint check here (GatewayHosts)
		// and so in the plugin's dialer.
		b.creds = map[string]string{llm.CredBaseURL: g.cfg.GatewayURL, llm.CredAPIKey: g.cfg.GatewayKey,
			llm.CredOperatorEndpoint: "true"}
		return b, nil
	}
	t, err := g.target(ctx, p)
	if err != nil {
		return nil, err
	}
	b.Model = a.Model
	b.creds = map[string]string{llm.CredBaseURL: t.baseURL, llm.CredAPIKey: t.apiKey}
	return b, nil
}

func (g *Gateway) plugin(name string) (llm.Provider, error) {
	if g.cfg.Plugins != nil {
		if p, err := g.cfg.Plugins(name); err == nil {
			return p, nil
		}
	}
	if name == Builtin && g.cfg.Builtin != nil {
		return g.cfg.Builtin, nil
	}
	return nil, fmt.Errorf("%w: %s (add it to plugins.toml)", ErrUnavailable, name)
}
