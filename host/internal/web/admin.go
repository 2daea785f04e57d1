package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

type usersData struct {
	Users []user
}

// usersPage is the admin's user management: invite, role, delete, send a link.
func (h *handler) usersPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &usersData{}
	v.Title, v.Nav, v.Data = "Users", "admin", d
	var list struct {
		Items []user `json:"items"`
	}
	if err := s.c.get("/api/admin/users", &list); err != nil && v.Err == nil {
		v.Err = humanError(err)
	}
	d.Users = list.Items
	h.show(w, r, "admin_users", v)
}

func (h *handler) userInvite(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	body := map[string]string{"email": strings.TrimSpace(r.PostFormValue("email")), "role": r.PostFormValue("role")}
	var res struct {
		InviteSent bool `json:"invite_sent"`
	}
	if err := s.c.do(http.MethodPost, "/api/admin/users", body, &res); err != nil {
		h.fail(w, r, s, v, err, h.usersPage, nil)
		return
	}
	if !res.InviteSent {
		// The account exists, the mail did not go: the success and the failure are
		// shown apart.
		setFlashMixed(w, "The account of "+body["email"]+" is created.", &uiError{
			What: "The invitation to " + body["email"] + " could not be mailed.",
			Do:   "Check the mail (SMTP) settings, then press Send link next to the account."})
		http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
		return
	}
	done(w, r, "/admin/users", "The account of "+body["email"]+" is created and an invitation is on its way.")
}

func (h *handler) userRole(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	if err := s.c.do(http.MethodPatch, "/api/admin/users/"+pathEscape(chi.URLParam(r, "id"))+"/role",
		map[string]string{"role": r.PostFormValue("role")}, nil); err != nil {
		h.actionFailed(w, r, err, "/admin/users")
		return
	}
	done(w, r, "/admin/users", "The role is changed.")
}

func (h *handler) userDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	if err := s.c.do(http.MethodDelete, "/api/admin/users/"+pathEscape(chi.URLParam(r, "id")), nil, nil); err != nil {
		h.actionFailed(w, r, err, "/admin/users")
		return
	}
	done(w, r, "/admin/users", "The account is deleted; its data goes with the daily purge after 30 days.")
}

func (h *handler) userSendLink(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	if err := s.c.do(http.MethodPost, "/api/admin/users/"+pathEscape(chi.URLParam(r, "id"))+"/send-link", nil, nil); err != nil {
		h.actionFailed(w, r, err, "/admin/users")
		return
	}
	done(w, r, "/admin/users", "A sign-in link is on its way.")
}

type auditData struct {
	Page   auditPage
	Cursor string
	Prefix string
}

// Meta renders an entry's metadata for the table.
func (auditData) Meta(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// auditPage pages the audit log, newest first.
func (h *handler) auditPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	qv := r.URL.Query()
	d := &auditData{Cursor: qv.Get("cursor"), Prefix: strings.TrimSpace(qv.Get("action"))}
	v.Title, v.Nav, v.Data = "Audit log", "admin", d
	if err := s.c.get("/api/admin/audit-log"+q("limit", "50", "cursor", d.Cursor, "action_prefix", d.Prefix), &d.Page); err != nil {
		v.Err = humanError(err)
	}
	h.show(w, r, "admin_audit", v)
}

type pluginsData struct {
	Plugins []pluginInfo
}

// pluginsPage lists the plugins with their state; admins turn them on and off.
func (h *handler) pluginsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &pluginsData{}
	v.Title, v.Nav, v.Data = "Plugins", "admin", d
	var list struct {
		Plugins []pluginInfo `json:"plugins"`
	}
	if err := s.c.get("/api/admin/plugins", &list); err != nil && v.Err == nil {
		v.Err = humanError(err)
	}
	d.Plugins = list.Plugins
	h.show(w, r, "admin_plugins", v)
}

func (h *handler) pluginUpdate(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	name := chi.URLParam(r, "name")
	enabled := r.PostFormValue("enabled") == "true"
	var st pluginInfo
	if err := s.c.do(http.MethodPatch, "/api/admin/plugins/"+pathEscape(name), map[string]bool{"enabled": enabled}, &st); err != nil {
		h.actionFailed(w, r, err, "/admin/plugins")
		return
	}
	if !enabled {
		done(w, r, "/admin/plugins", name+" is disabled.")
		return
	}
	if st.State == "failed" {
		setFlashMixed(w, name+" is enabled.", &uiError{What: name + " could not start.",
			Do: "The server log has the reason; check the plugin's binary and settings, then enable it again."})
		http.Redirect(w, r, "/admin/plugins", http.StatusSeeOther)
		return
	}
	done(w, r, "/admin/plugins", name+" is enabled.")
}
