package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Auditor records an admin action in the audit log. Implementations take the
// caller's identity from ctx and must not fail the request (auditing is best
// effort).
type Auditor interface {
	Record(ctx context.Context, action, resource string, metadata map[string]any)
}

// Audit actions AdminAPI records.
const (
	AuditPluginEnable   = "plugin.enable"
	AuditPluginDisable  = "plugin.disable"
	AuditPluginSettings = "plugin.settings.update"
)

// AdminAPI serves plugin management to admins. Mount its handlers behind the
// admin-session resolver:
//
//	GET   /api/admin/plugins         List
//	PATCH /api/admin/plugins/{name}  Update
//
// The handlers check the caller is an admin again (defence in depth).
type AdminAPI struct {
	host  *Host
	store *Store
	audit Auditor
}

// NewAdminAPI returns the admin handlers over host, persisting changes in store and
// recording them with audit.
func NewAdminAPI(host *Host, store *Store, audit Auditor) *AdminAPI {
	return &AdminAPI{host: host, store: store, audit: audit}
}

// PluginList is the body of GET /api/admin/plugins.
type PluginList struct {
	// Plugins in plugins.toml order.
	Plugins []Status `json:"plugins"`
}

// UpdateRequest is the body of PATCH /api/admin/plugins/{name}. At least one field
// is required.
type UpdateRequest struct {
	// Enabled starts (true) or stops (false) the plugin.
	Enabled *bool `json:"enabled"`
	// Settings patches the admin's setting overrides: a key with a value overrides
	// plugins.toml, a key with null drops the override.
	Settings map[string]any `json:"settings"`
}

func requireAdmin(w http.ResponseWriter, r *http.Request) bool {
	if !auth.CallerFrom(r.Context()).IsAdmin() {
		httpx.Err(w, r, httpx.Forbidden("admin_required", "Only an admin may manage plugins."))
		return false
	}
	return true
}

// List answers GET /api/admin/plugins: every configured plugin with its name, kind,
// version, state, restarts, last error, enabled flag and effective settings.
func (a *AdminAPI) List(w http.ResponseWriter, r *http.Request) {
	if !requireAdmin(w, r) {
		return
	}
	httpx.JSON(w, http.StatusOK, PluginList{Plugins: a.host.Status()})
}

// maxUpdateBody bounds PATCH bodies.
const maxUpdateBody = 64 << 10

// Update answers PATCH /api/admin/plugins/{name}: it enables or disables the plugin
// and patches its non-secret settings, applies the change at once (a running plugin
// is reconfigured, not restarted), stores it in plugin_settings and records it in the
// audit log. Settings the plugin refuses answer 422 and change nothing.
func (a *AdminAPI) Update(w http.ResponseWriter, r *http.Request) {
	if !requireAdmin(w, r) {
		return
	}
	ctx := r.Context()
	name := r.PathValue("name")
	if _, err := a.host.StatusOf(name); err != nil {
		httpx.Err(w, r, httpx.NotFound("No plugin named "+quote(name)+" is configured."))
		return
	}
	var req UpdateRequest
	if err := httpx.ReadJSON(w, r, &req, maxUpdateBody); err != nil {
		// One sentence for every unreadable body, unknown fields included: the
		// settings are the plugin's, so a field name alone cannot be pointed at.
		e := httpx.BadRequest("The body must be a JSON object with enabled and/or settings.")
		e.Cause = err
		httpx.Err(w, r, e)
		return
	}
	if req.Enabled == nil && req.Settings == nil {
		httpx.Err(w, r, httpx.Invalid("Nothing to change.",
			httpx.FieldError{Field: "enabled", Message: "give enabled and/or settings"}))
		return
	}
	if err := checkSettingNames(req.Settings); err != nil {
		var se *SettingsError
		errors.As(err, &se)
		httpx.Err(w, r, httpx.Invalid("Plugin settings are never secret.",
			httpx.FieldError{Field: "settings." + se.Key, Message: err.Error()}))
		return
	}
	caller := auth.CallerFrom(ctx)
	var before Override
	_, err := a.store.Update(ctx, name, caller.UserID, func(cur Override) (Override, error) {
		before = cur
		next := cur
		if req.Enabled != nil {
			next.Enabled = req.Enabled
		}
		if req.Settings != nil {
			patched := maps.Clone(cur.Settings)
			if patched == nil {
				patched = map[string]any{}
			}
			for k, v := range req.Settings {
				if v == nil {
					delete(patched, k)
					continue
				}
				patched[k] = v
			}
			if err := a.host.ApplySettings(ctx, name, patched); err != nil {
				return Override{}, err
			}
			next.Settings = patched
		}
		return next, nil
	})
	if err != nil {
		if errors.Is(err, protocol.ErrBadRequest) {
			var pe *protocol.Error
			errors.As(err, &pe)
			httpx.Err(w, r, httpx.Invalid("The plugin refused the settings.",
				httpx.FieldError{Field: "settings", Message: pe.Message}))
			return
		}
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if req.Enabled != nil {
		if err := a.host.SetEnabled(name, *req.Enabled); err != nil {
			httpx.Err(w, r, httpx.Internal(err))
			return
		}
		action := AuditPluginDisable
		if *req.Enabled {
			action = AuditPluginEnable
		}
		a.audit.Record(ctx, action, "plugin:"+name, map[string]any{"plugin": name, "enabled": *req.Enabled, "was": before.Enabled})
	}
	if req.Settings != nil {
		a.audit.Record(ctx, AuditPluginSettings, "plugin:"+name, map[string]any{
			"plugin": name, "keys": slices.Sorted(maps.Keys(req.Settings)),
		})
	}
	st, err := a.host.StatusOf(name)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, st)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
