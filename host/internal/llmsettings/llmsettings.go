// Package llmsettings is the admin's side of the deployment-wide cloud LLM provider
// settings (SPEC "Cloud LLM provider settings"): provider API keys kept sealed in
// user_config (store 1, the source of truth, masked when read back) and the custom
// compatible endpoint's base URL, checked before it is saved. Keys never go to a
// file, an environment block or a log.
package llmsettings

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{1,31}$`)

// API serves the admin routes (auth.AdminSession).
type API struct {
	// OnEmbedChange runs after the embed role changed (it enqueues the
	// re-embedding of the corpus); nil does nothing.
	OnEmbedChange func(ctx context.Context) error

	gw           *llmgw.Gateway
	store        *userconfig.Store
	audit        *audit.Log
	log          *slog.Logger
	gatewayHosts []string
	resolver     netguard.Resolver
}

// NewAPI returns the admin LLM settings API. gatewayHosts are the self-hosted
// gateway's host names, which may be reached over plain HTTP.
func NewAPI(gw *llmgw.Gateway, store *userconfig.Store, auditLog *audit.Log, logger *slog.Logger, gatewayHosts []string) *API {
	return &API{gw: gw, store: store, audit: auditLog, log: logger, gatewayHosts: gatewayHosts}
}

// Provider is one provider's settings as an admin sees them: the key masked.
type Provider struct {
	Name string `json:"name"`
	// Label names the provider for people ("Local model (OpenAI-compatible)").
	Label string `json:"label"`
	// BaseURLSettable is true for the custom endpoint and a local runtime, whose
	// base URL is a setting and whose key is optional.
	BaseURLSettable bool `json:"base_url_settable"`
	// DefaultBaseURL is the base URL offered before one is saved (a local
	// runtime's); empty for the others.
	DefaultBaseURL string `json:"default_base_url,omitempty"`
	KeyName        string `json:"key_name"`
	APIKey         *struct {
		Set    bool   `json:"set"`
		Masked string `json:"masked,omitempty"`
	} `json:"api_key,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
}

// Settings is the answer of GET /api/admin/llm.
type Settings struct {
	Providers []Provider `json:"providers"`
	// Roles say which provider and model serve each role.
	Roles []llmgw.Assignment `json:"roles"`
	// Gateway is true when models are registered with a self-hosted gateway.
	Gateway  bool     `json:"gateway"`
	Warnings []string `json:"warnings"`
}

func (a *API) settings(ctx context.Context) (Settings, error) {
	entries, err := a.store.ListSystem(ctx, "llm.")
	if err != nil {
		return Settings{}, err
	}
	byName := map[string]*Provider{}
	provider := func(name string) *Provider {
		if p, ok := byName[name]; ok {
			return p
		}
		p := &Provider{Name: name, Label: name, KeyName: llmgw.KeyName(name)}
		if known, ok := llmgw.LookupProvider(name); ok {
			p.Label, p.BaseURLSettable = known.Title(), known.SettableBaseURL()
			if name == llmgw.Local {
				p.DefaultBaseURL = llmgw.LocalDefaultBaseURL
			}
		}
		byName[name] = p
		return p
	}
	roles, err := a.gw.Assignments(ctx)
	if err != nil {
		return Settings{}, err
	}
	out := Settings{Providers: []Provider{}, Roles: roles, Gateway: a.gw.GatewayConfigured(), Warnings: []string{}}
	for _, e := range entries {
		parts := strings.Split(e.Key, ".")
		switch {
		case strings.HasSuffix(e.Key, ".base_url") && len(parts) == 4 && parts[1] == "providers":
			var u string
			_ = json.Unmarshal(e.Value, &u)
			provider(parts[2]).BaseURL = u
		case strings.HasSuffix(e.Key, ".api_key") && len(parts) >= 3:
			name := parts[len(parts)-2]
			p := provider(name)
			p.APIKey = &struct {
				Set    bool   `json:"set"`
				Masked string `json:"masked,omitempty"`
			}{Set: true, Masked: e.Masked}
		}
	}
	// Every provider a role can use is listed, set or not, so a client needs no
	// list of its own.
	for _, p := range llmgw.Providers {
		provider(p.Name)
	}
	for _, p := range byName {
		out.Providers = append(out.Providers, *p)
	}
	slices.SortFunc(out.Providers, func(x, y Provider) int { return strings.Compare(x.Name, y.Name) })
	if p, ok := byName[llmgw.Local]; ok && p.BaseURL != "" && !loopback(p.BaseURL) {
		out.Warnings = append(out.Warnings, "The local model's base URL "+p.BaseURL+
			" is not on this machine: prompts and source excerpts of the roles it serves leave it.")
	}
	if p, ok := byName[llmgw.CustomCompatible]; ok && p.BaseURL != "" {
		host := p.BaseURL
		if u, err := url.Parse(p.BaseURL); err == nil {
			host = u.Host
		}
		var assigned []string
		for _, r := range roles {
			if r.Provider == llmgw.CustomCompatible {
				assigned = append(assigned, r.Role)
			}
		}
		if len(assigned) > 0 {
			out.Warnings = append(out.Warnings, "Prompts and the relevant source excerpts of the roles "+strings.Join(assigned, ", ")+
				" are sent to the custom endpoint "+host+".")
		} else {
			out.Warnings = append(out.Warnings, "When a model of the custom endpoint "+host+
				" is assigned, prompts and the relevant source excerpts are sent to it.")
		}
	}
	return out, nil
}

// loopback reports whether a base URL names this machine: localhost or a
// loopback address.
func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
