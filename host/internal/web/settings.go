package web

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// integrationKey is a per-user setting the settings page offers by name.
type integrationKey struct{ Key, Label string }

var integrationKeys = []integrationKey{
	{"zotero.user_id", "Zotero user id"},
	{"zotero.api_key", "Zotero API key"},
	{"semanticscholar.api_key", "Semantic Scholar API key"},
	{"openalex.email", "OpenAlex contact email"},
	{"pubmed.api_key", "PubMed (NCBI) API key"},
}

type settingsData struct {
	Entries      []configEntry
	Integrations []integrationKey
	// Messenger is the caller's chat pairing (messenger.go); Issued the pairing
	// token just created, shown once.
	Messenger, Issued *messengerStatus
	// Zotero is the caller's Zotero sync (zotero.go); ZoteroCheck the key check
	// just made.
	Zotero      *zoteroStatus
	ZoteroCheck *zoteroCheck
	// ZoteroInstance is the instance's group libraries, for admins only.
	ZoteroInstance *zoteroInstance
}

// settingsPage shows the caller's profile and per-user integration settings.
func (h *handler) settingsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &settingsData{Integrations: integrationKeys}
	loadMessenger(s, v, d)
	loadZotero(s, v, d)
	loadZoteroInstance(s, d)
	v.Title, v.Nav, v.Data = "Settings", "settings", d
	var list struct {
		Items []configEntry `json:"items"`
	}
	if err := s.c.get("/api/settings/config", &list); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	d.Entries = list.Items
	h.show(w, r, "settings", v)
}

// settingsPut stores one per-user setting; credentials are sealed by the API.
func (h *handler) settingsPut(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		key = strings.TrimSpace(r.PostFormValue("custom_key"))
	}
	value := r.PostFormValue("value")
	if key == "" {
		v.Err, v.Form, v.status = &uiError{What: "Choose which setting to save.", Do: "Pick one from the list or type its key."}, r.PostForm, http.StatusUnprocessableEntity
		v.Fields = map[string]string{"key": "is required"}
		h.settingsPage(w, r, s, v)
		return
	}
	if err := s.c.do(http.MethodPut, "/api/settings/config/"+pathEscape(key), map[string]any{"value": value}, nil); err != nil {
		form := r.PostForm
		if strings.Contains(key, "key") || strings.Contains(key, "secret") || strings.Contains(key, "token") || strings.Contains(key, "password") {
			form.Del("value") // a credential is never put back into the page
		}
		r.PostForm = form
		h.fail(w, r, s, v, err, h.settingsPage, map[string]string{"key": "key"})
		return
	}
	done(w, r, "/settings#integrations", "Saved "+key+".")
}

// profilePut saves the caller's display name and time zone.
func (h *handler) profilePut(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	body := map[string]any{"display_name": r.PostFormValue("display_name"), "timezone": strings.TrimSpace(r.PostFormValue("timezone"))}
	if err := s.c.do(http.MethodPatch, "/api/me", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	done(w, r, "/settings", "Profile saved.")
}

func (h *handler) settingsDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	key := r.PostFormValue("key")
	if err := s.c.do(http.MethodDelete, "/api/settings/config/"+pathEscape(key), nil, nil); err != nil {
		h.actionFailed(w, r, err, "/settings#integrations")
		return
	}
	done(w, r, "/settings#integrations", "Removed "+key+".")
}

type llmData struct {
	Settings  llmSettings
	Providers []string
	Roles     []llmRole
	// Probe is the connection test just made, if any: its models are offered
	// to the roles.
	Probe *llmProbe
}

// llmPage is the admin's page of deployment-wide LLM providers and the model each
// role uses, with the warning the API gives while a custom endpoint is set.
func (h *handler) llmPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &llmData{}
	if p, ok := v.Data.(*llmProbe); ok {
		d.Probe = p
	}
	v.Title, v.Nav, v.Data = "Language models", "settings", d
	if err := s.c.get("/api/admin/llm", &d.Settings); err != nil && v.Err == nil {
		v.Err = humanError(err)
	}
	// The API lists every provider, key set or not, and every role.
	d.Providers = []string{"builtin"}
	for _, p := range d.Settings.Providers {
		d.Providers = append(d.Providers, p.Name)
	}
	d.Roles = d.Settings.Roles
	h.show(w, r, "settings_llm", v)
}

func (h *handler) llmProviderPut(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	provider := chi.URLParam(r, "provider")
	body := map[string]string{}
	if k := r.PostFormValue("api_key"); k != "" {
		body["api_key"] = k
	}
	if _, ok := r.PostForm["base_url"]; ok {
		body["base_url"] = strings.TrimSpace(r.PostFormValue("base_url"))
	}
	if err := s.c.do(http.MethodPut, "/api/admin/llm/providers/"+pathEscape(provider), body, nil); err != nil {
		r.PostForm.Del("api_key")
		h.fail(w, r, s, v, err, h.llmPage, nil)
		return
	}
	done(w, r, "/settings/llm", "Saved the settings of "+provider+".")
}

func (h *handler) llmRolePut(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	role := chi.URLParam(r, "role")
	body := map[string]string{"provider": r.PostFormValue("provider"), "model": strings.TrimSpace(r.PostFormValue("model"))}
	if err := s.c.do(http.MethodPut, "/api/admin/llm/roles/"+pathEscape(role), body, nil); err != nil {
		h.fail(w, r, s, v, err, h.llmPage, nil)
		return
	}
	done(w, r, "/settings/llm#roles", "The "+role+" role now uses "+body["provider"]+".")
}
