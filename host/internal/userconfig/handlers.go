package userconfig

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/secrets"
)

// API serves /api/settings/config for the signed-in user (auth.Strict).
type API struct {
	store    *Store
	cfg      *config.Config
	resolver netguard.Resolver
	log      *slog.Logger
}

// NewAPI returns the settings API. resolver checks SMTP hosts; nil means the system's.
func NewAPI(store *Store, cfg *config.Config, resolver netguard.Resolver, logger *slog.Logger) *API {
	return &API{store: store, cfg: cfg, resolver: resolver, log: logger}
}

// List answers the caller's stored values, secrets masked.
func (a *API) List(w http.ResponseWriter, r *http.Request) {
	list, err := a.store.List(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": list})
}

// Get answers one of the caller's values.
func (a *API) Get(w http.ResponseWriter, r *http.Request) {
	e, err := a.store.Get(r.Context(), auth.CallerFrom(r.Context()).UserID, chi.URLParam(r, "key"))
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("No value stored under this key."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, e)
}

type putBody struct {
	Value json.RawMessage `json:"value"`
}

// Put stores a value for the caller. An SMTP host is checked before it is saved.
func (a *API) Put(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "key")
	var body putBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	if key == "smtp.host" {
		var host string
		if err := json.Unmarshal(body.Value, &host); err != nil || host == "" {
			httpx.Err(w, r, httpx.Invalid("smtp.host must be a host name.", httpx.FieldError{Field: "value", Message: "must be a host name"}))
			return
		}
		if err := netguard.CheckHost(r.Context(), a.resolver, host, a.cfg.AllowPrivateSMTPHost); err != nil {
			httpx.Err(w, r, smtpHostRefused(err))
			return
		}
	}
	e, err := a.store.Put(r.Context(), auth.CallerFrom(r.Context()).UserID, key, body.Value)
	switch {
	case errors.Is(err, ErrBadKey):
		httpx.Err(w, r, httpx.Invalid(ErrBadKey.Error(), httpx.FieldError{Field: "key", Message: "must be dotted lowercase words"}))
	case errors.Is(err, ErrSystemKey):
		httpx.Err(w, r, httpx.Forbidden("system_key", "This key is deployment-wide; an admin sets it in the admin settings."))
	case errors.Is(err, ErrBadValue):
		httpx.Err(w, r, httpx.Invalid(err.Error(), httpx.FieldError{Field: "value", Message: err.Error()}))
	case errors.Is(err, secrets.ErrNoKey):
		httpx.Err(w, r, httpx.Unavailable("Secrets cannot be stored: SERVICE_CONFIG_KEY is not configured on this host.", err))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		httpx.JSON(w, http.StatusOK, e)
	}
}

// Delete removes one of the caller's values.
func (a *API) Delete(w http.ResponseWriter, r *http.Request) {
	err := a.store.Delete(r.Context(), auth.CallerFrom(r.Context()).UserID, chi.URLParam(r, "key"))
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("No value stored under this key."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// smtpHostRefused says whether an SMTP host was refused for its name or for where
// it points, without the addresses it resolved to or the resolver's text (those go
// to the exception with DEV_ERROR_DETAIL).
func smtpHostRefused(err error) *httpx.Error {
	var refused *netguard.RefusedError
	var e *httpx.Error
	switch {
	case errors.As(err, &refused):
		e = httpx.Invalid("This SMTP host is refused: it points at a "+refused.Why+
			" (ALLOW_PRIVATE_SMTP_HOST lets an admin allow internal relays).",
			httpx.FieldError{Field: "value", Message: "points at a " + refused.Why})
	case errors.Is(err, netguard.ErrUnresolvable):
		e = httpx.Invalid("This SMTP host could not be found; check its name.",
			httpx.FieldError{Field: "value", Message: "does not resolve"})
	default:
		e = httpx.Invalid("This SMTP host could not be checked; try again.",
			httpx.FieldError{Field: "value", Message: "could not be checked"})
	}
	e.Cause = err
	return e
}
