package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
)

type jobsData struct {
	Jobs   []job
	State  string
	Cursor string
	Next   string
}

// jobsPage lists the caller's jobs with live progress bars.
func (h *handler) jobsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &jobsData{State: r.URL.Query().Get("state"), Cursor: r.URL.Query().Get("cursor")}
	if d.State != "active" {
		d.State = ""
	}
	v.Title, v.Nav, v.Data = "Jobs", "jobs", d
	var page jobPage
	if err := s.c.get("/api/jobs"+q("state", d.State, "cursor", d.Cursor, "limit", "30"), &page); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		v.Err = humanError(err)
	}
	d.Jobs, d.Next = page.Jobs, page.NextCursor
	for _, j := range d.Jobs {
		if j.Active() {
			v.Refresh = 3
		}
	}
	h.show(w, r, "jobs", v)
}

// jobPage shows one job.
func (h *handler) jobPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	var j job
	if err == nil {
		err = s.c.get("/api/jobs/"+itoa(id), &j)
	} else {
		err = &apiError{Status: http.StatusNotFound, Code: "not_found"}
	}
	if err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		h.view.render(w, r, statusOf(err), "error", &view{Title: "Job not found", Me: s.me, Nav: "jobs", Err: humanError(err)})
		return
	}
	if j.Active() {
		v.Refresh = 3
	}
	v.Title, v.Nav, v.Data = j.Label(), "jobs", &j
	h.show(w, r, "job", v)
}

// jobCancel cancels a job.
func (h *handler) jobCancel(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	to := back(r, "/jobs/"+id)
	if err := s.c.do(http.MethodPost, "/api/jobs/"+pathEscape(id)+"/cancel", nil, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The job is cancelled.")
}
