package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// zoteroStatus is GET /api/integrations/zotero's answer.
type zoteroStatus struct {
	Configured bool `json:"configured"`
	Libraries  []struct {
		LibraryID string     `json:"library_id"`
		Version   int64      `json:"version"`
		LastRunAt *time.Time `json:"last_run_at"`
		LastOKAt  *time.Time `json:"last_ok_at"`
		Added     int        `json:"added"`
		Updated   int        `json:"updated"`
		Removed   int        `json:"removed"`
		Notes     int        `json:"notes"`
		Capped    bool       `json:"capped"`
		Error     string     `json:"error"`
	} `json:"libraries"`
}

// zoteroCheck is POST /api/integrations/zotero/test's answer.
type zoteroCheck struct {
	Message   string `json:"message"`
	Libraries []struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Type     string `json:"type"`
		Writable bool   `json:"writable"`
	} `json:"libraries"`
}

// loadZotero fills the settings page's Zotero section, with the key check just
// made when v carries one; a failure leaves the section saying it could not be
// read.
func loadZotero(s *session, v *view, d *settingsData) {
	d.ZoteroCheck, _ = v.Data.(*zoteroCheck)
	var st zoteroStatus
	if err := s.c.get("/api/integrations/zotero", &st); err != nil {
		return
	}
	d.Zotero = &st
}

// zoteroTest asks Zotero what the caller's key may do and shows the answer on
// the settings page.
func (h *handler) zoteroTest(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var check zoteroCheck
	if err := s.c.do(http.MethodPost, "/api/integrations/zotero/test", nil, &check); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	v.Data = &check
	h.settingsPage(w, r, s, v)
}

// zoteroSync starts the caller's sync and shows its progress.
func (h *handler) zoteroSync(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var job struct {
		ID int64 `json:"id"`
	}
	if err := s.c.do(http.MethodPost, "/api/integrations/zotero/sync", nil, &job); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	done(w, r, "/jobs/"+strconv.FormatInt(job.ID, 10), "Your Zotero sync has started.")
}

// zoteroInstance is GET /api/admin/zotero's answer: the group libraries the whole
// instance syncs (admins only).
type zoteroInstance struct {
	APIKeySet    bool     `json:"api_key_set"`
	APIKeyMasked string   `json:"api_key_masked"`
	GroupIDs     []string `json:"group_ids"`
	Libraries    []struct {
		LibraryID string     `json:"library_id"`
		LastRunAt *time.Time `json:"last_run_at"`
		Added     int        `json:"added"`
		Updated   int        `json:"updated"`
		Removed   int        `json:"removed"`
		Capped    bool       `json:"capped"`
		Error     string     `json:"error"`
	} `json:"libraries"`
}

// Groups is the group ids as the form shows them.
func (z *zoteroInstance) Groups() string { return strings.Join(z.GroupIDs, ", ") }

// loadZoteroInstance fills the admin's section of the settings page.
func loadZoteroInstance(s *session, d *settingsData) {
	if !s.me.IsAdmin() {
		return
	}
	var z zoteroInstance
	if err := s.c.get("/api/admin/zotero", &z); err != nil {
		return
	}
	d.ZoteroInstance = &z
}

// zoteroInstancePut saves the instance's Zotero key (when one is typed) and its
// group libraries.
func (h *handler) zoteroInstancePut(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	body := map[string]any{"group_ids": splitGroups(r.PostFormValue("group_ids"))}
	if key := strings.TrimSpace(r.PostFormValue("api_key")); key != "" {
		body["api_key"] = key
	}
	if err := s.c.do(http.MethodPut, "/api/admin/zotero", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	done(w, r, "/settings#zotero-instance", "The instance's Zotero group libraries are saved.")
}

// splitGroups reads "123, 456 groups/789" into group ids.
func splitGroups(s string) []string {
	out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if out == nil {
		return []string{} // an empty list stops the instance's sync
	}
	return out
}

// zoteroInstanceSync starts the instance's sync and shows its progress.
func (h *handler) zoteroInstanceSync(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var job struct {
		ID int64 `json:"id"`
	}
	if err := s.c.do(http.MethodPost, "/api/admin/zotero/sync", nil, &job); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	done(w, r, "/jobs/"+strconv.FormatInt(job.ID, 10), "The sync of the instance's group libraries has started.")
}
