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
	v.Title, v.Nav, v.Data = j.Label(), "jobs", newJobView(j)
	h.show(w, r, "job", v)
}

// jobView is the job page's data.
type jobView struct {
	job
	// Retry is true for an uploaded PDF that could not be read: the page offers to
	// upload one again.
	Retry bool
}

func newJobView(j job) *jobView {
	return &jobView{job: j, Retry: j.Kind == "ingest.pdf" && j.State == "failed"}
}

// unreadUpload shows, instead of "not found", why the paper of an upload is gone:
// when the PDF cannot be read, its reading job deletes the paper, and the browser
// was sent to the paper's page with ?job= to follow that job. While the job is
// still ending, its progress shows (and the page reloads); once it has failed, its
// reason and a form to upload again. It reports false when the request names no
// job of this paper.
func (h *handler) unreadUpload(w http.ResponseWriter, r *http.Request, s *session, paperID string) bool {
	n, err := strconv.ParseInt(r.URL.Query().Get("job"), 10, 64)
	if err != nil {
		return false
	}
	var j job
	if s.c.get("/api/jobs/"+itoa(n), &j) != nil || j.PaperID() != paperID {
		return false
	}
	v := &view{Title: j.Label(), Me: s.me, Nav: "library", Data: newJobView(j)}
	switch {
	case j.Active():
		v.Refresh = 3
	case j.Error != nil:
		v.Title = "The PDF could not be read"
		v.Err = &uiError{What: sentence(j.Error.Message, "Lectern could not read the PDF."),
			Do: "Nothing of it was kept. Upload the PDF again below, or another copy of it."}
	default:
		return false
	}
	h.view.render(w, r, http.StatusOK, "job", v)
	return true
}

// jobCancel cancels a job.
func (h *handler) jobCancel(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	to := back(r, "/jobs/"+id)
	var j job
	if err := s.c.do(http.MethodPost, "/api/jobs/"+pathEscape(id)+"/cancel", nil, &j); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, cancelMessage(j))
}

// cancelMessage says what a cancel did: a running job stops at its next step, so it
// is not called cancelled before it is.
func cancelMessage(j job) string {
	if j.State == "cancelled" {
		return "The job is cancelled."
	}
	return "Lectern is stopping the job; it stops at its next step."
}
