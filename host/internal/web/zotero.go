package web

import (
	"net/http"
	"strconv"
	"time"
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
