package llmsettings

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

// Get answers the providers with keys set (masked) and the custom endpoint, with
// the warning SPEC asks for when a custom endpoint is configured.
func (a *API) Get(w http.ResponseWriter, r *http.Request) {
	s, err := a.settings(r.Context())
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, s)
}

type putBody struct {
	APIKey  *string `json:"api_key"`
	BaseURL *string `json:"base_url"`
}

// PutProvider answers PUT /api/admin/llm/providers/{provider} {"api_key", "base_url"}:
// the key is sealed (store 1) and only ever shown masked; the base URL (custom
// endpoint only) is checked before it is saved and refused with 422 naming the rule.
func (a *API) PutProvider(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "provider")
	if !providerName.MatchString(name) {
		httpx.Err(w, r, httpx.Invalid("Unknown provider name.", httpx.FieldError{Field: "provider", Message: "must be lowercase letters, digits and _"}))
		return
	}
	var body putBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	if body.APIKey == nil && body.BaseURL == nil {
		httpx.Err(w, r, httpx.Invalid("Send api_key, base_url or both.", httpx.FieldError{Field: "api_key", Message: "nothing to change"}))
		return
	}
	if body.BaseURL != nil {
		if p, ok := llmgw.LookupProvider(name); !ok || !p.SettableBaseURL() {
			httpx.Err(w, r, httpx.Invalid("Only the custom compatible endpoint and a local model have a base URL.",
				httpx.FieldError{Field: "base_url", Message: "only for custom_compatible and local"}))
			return
		}
		if err := netguard.CheckBaseURL(r.Context(), *body.BaseURL, netguard.BaseURLOpts{GatewayHosts: a.gatewayHosts, Resolver: a.resolver}); err != nil {
			msg := strings.TrimPrefix(err.Error(), "netguard: ")
			httpx.Err(w, r, httpx.Invalid("The base URL is refused: "+msg+".", httpx.FieldError{Field: "base_url", Message: msg}))
			return
		}
	}
	var changed []string
	if body.APIKey != nil {
		v, _ := json.Marshal(strings.TrimSpace(*body.APIKey))
		if _, err := a.store.PutSystem(r.Context(), llmgw.KeyName(name), v); err != nil {
			a.fail(w, r, err)
			return
		}
		changed = append(changed, llmgw.KeyName(name))
	}
	if body.BaseURL != nil {
		v, _ := json.Marshal(strings.TrimSpace(*body.BaseURL))
		if _, err := a.store.PutSystem(r.Context(), llmgw.BaseURLKeyOf(name), v); err != nil {
			a.fail(w, r, err)
			return
		}
		changed = append(changed, llmgw.BaseURLKeyOf(name))
	}
	meta := map[string]any{"provider": name, "keys": strings.Join(changed, ",")}
	a.changed(w, r, meta)
}

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, userconfig.ErrBadValue):
		httpx.Err(w, r, httpx.Invalid(err.Error(), httpx.FieldError{Field: "api_key", Message: "must be a non-empty string"}))
	case errors.Is(err, secrets.ErrNoKey):
		httpx.Err(w, r, httpx.Unavailable("Keys cannot be stored: SERVICE_CONFIG_KEY is not configured on this host.", err))
	default:
		httpx.Err(w, r, httpx.Internal(err))
	}
}

type roleBody struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// PutRole answers PUT /api/admin/llm/roles/{role} {"provider", "model"}: the role
// is served by that provider's model from now on (provider "builtin" restores the
// default). With a gateway configured the model is registered there first; 502
// when the gateway refuses it, and nothing changes.
func (a *API) PutRole(w http.ResponseWriter, r *http.Request) {
	role := chi.URLParam(r, "role")
	var body roleBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	assigned, err := a.gw.Assign(r.Context(), role, strings.TrimSpace(body.Provider), strings.TrimSpace(body.Model))
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "llmgw: ")
		switch {
		case errors.Is(err, llmgw.ErrUnknownRole):
			httpx.Err(w, r, httpx.Invalid("Unknown role: "+msg+".", httpx.FieldError{Field: "role", Message: msg}))
		case errors.Is(err, llmgw.ErrUnknownProvider):
			httpx.Err(w, r, httpx.Invalid("Unknown provider: "+msg+".", httpx.FieldError{Field: "provider", Message: msg}))
		case errors.Is(err, llmgw.ErrBadModel):
			httpx.Err(w, r, httpx.Invalid("The model is refused: "+msg+".", httpx.FieldError{Field: "model", Message: msg}))
		case errors.Is(err, llmgw.ErrNoKey), errors.Is(err, llmgw.ErrNoBaseURL):
			httpx.Err(w, r, httpx.Invalid(msg+".", httpx.FieldError{Field: "provider", Message: msg}))
		case errors.Is(err, llmgw.ErrGateway):
			httpx.Err(w, r, httpx.BadGateway("The LLM gateway did not accept the model: "+msg, err))
		case errors.Is(err, secrets.ErrNoKey):
			httpx.Err(w, r, httpx.Unavailable("Keys cannot be read: SERVICE_CONFIG_KEY is not configured on this host.", err))
		default:
			httpx.Err(w, r, httpx.Internal(err))
		}
		return
	}
	if role == llmgw.RoleEmbed && a.OnEmbedChange != nil {
		if err := a.OnEmbedChange(r.Context()); err != nil {
			a.log.ErrorContext(r.Context(), "enqueue the re-embedding after an embed role change", "error", err)
		}
	}
	meta := map[string]any{"role": role, "provider": assigned.Provider, "model": assigned.Model}
	a.changed(w, r, meta)
}

// changed audits an admin's change (metadata meta, plus the caller's address) and
// answers with the settings as they now are.
func (a *API) changed(w http.ResponseWriter, r *http.Request, meta map[string]any) {
	if ip := auth.ClientIP(r.Context()); ip.IsValid() {
		meta["ip"] = ip.String()
	}
	a.audit.Record(r.Context(), auth.CallerFrom(r.Context()).UserID, audit.ActionAdminConfigChange, r.URL.Path, meta)
	s, err := a.settings(r.Context())
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, s)
}

type probeBody struct {
	BaseURL *string `json:"base_url"`
	APIKey  *string `json:"api_key"`
}

// ProbeProvider answers POST /api/admin/llm/providers/{provider}/test {"base_url"?,
// "api_key"?}: it asks the provider's endpoint for its models (GET /models), with
// the base URL and key given or else the saved ones, and answers 200 with what it
// found: {"ok", "endpoint", "models", "message"}, the message saying in a sentence
// why an endpoint could not be used (unreachable, refused, not an
// OpenAI-compatible answer). A base URL the model-endpoint rule refuses is 422,
// and nothing is dialed; nothing is saved either way.
func (a *API) ProbeProvider(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "provider")
	var body probeBody
	if r.ContentLength != 0 && !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	pp := llmgw.ProbeParams{Provider: name}
	if body.BaseURL != nil {
		pp.BaseURL = *body.BaseURL
	}
	if body.APIKey != nil {
		pp.APIKey = *body.APIKey
	}
	res, err := a.gw.Probe(r.Context(), pp)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "llmgw: ")
		switch {
		case errors.Is(err, llmgw.ErrUnknownProvider), errors.Is(err, llmgw.ErrNothingToTest):
			httpx.Err(w, r, httpx.Invalid(sentence(msg), httpx.FieldError{Field: "provider", Message: msg}))
		case errors.Is(err, llmgw.ErrBaseURLRefused), errors.Is(err, llmgw.ErrFixedBaseURL), errors.Is(err, llmgw.ErrNoBaseURL):
			httpx.Err(w, r, httpx.Invalid(sentence(msg), httpx.FieldError{Field: "base_url", Message: msg}))
		case errors.Is(err, secrets.ErrNoKey):
			httpx.Err(w, r, httpx.Unavailable("Keys cannot be read: SERVICE_CONFIG_KEY is not configured on this host.", err))
		default:
			httpx.Err(w, r, httpx.Internal(err))
		}
		return
	}
	httpx.JSON(w, http.StatusOK, res)
}

// sentence makes a clause a sentence: a capital first letter and a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
