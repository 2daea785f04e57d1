package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

var projectStatuses = []string{"active", "paused", "completed", "archived"}
var taskStatuses = []string{"todo", "in_progress", "blocked", "done"}

type projectsData struct {
	Projects []project
	Statuses []string
}

// projectsPage lists the caller's projects, with a form for a new one.
func (h *handler) projectsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &projectsData{Statuses: projectStatuses}
	v.Title, v.Nav, v.Data = "Projects", "projects", d
	var ps struct {
		Items []project `json:"items"`
	}
	if err := s.c.get("/api/projects", &ps); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	d.Projects = ps.Items
	h.show(w, r, "projects", v)
}

// projectBody reads the project form; absent fields are left out.
func projectBody(r *http.Request) map[string]any {
	b := map[string]any{}
	for _, f := range []string{"name", "description", "status", "deadline"} {
		if _, ok := r.PostForm[f]; !ok {
			continue
		}
		val := strings.TrimSpace(r.PostFormValue(f))
		if val == "" && (f == "deadline" || f == "description") {
			b[f] = nil
			continue
		}
		b[f] = val
	}
	return b
}

func (h *handler) projectCreate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var p project
	if err := s.c.do(http.MethodPost, "/api/projects", projectBody(r), &p); err != nil {
		h.fail(w, r, s, v, err, h.projectsPage, nil)
		return
	}
	done(w, r, "/projects/"+p.ID, "The project is created.")
}

type projectData struct {
	Project       project
	Tasks         []task
	Milestones    []milestone
	Papers        []paper
	Statuses      []string
	TaskStatuses  []string
	LibraryPapers []paper
}

// projectPage shows a project with its tasks, milestones and papers.
func (h *handler) projectPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := pathEscape(chi.URLParam(r, "id"))
	d := &projectData{Statuses: projectStatuses, TaskStatuses: taskStatuses}
	if err := s.c.get("/api/projects/"+id, &d.Project); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		h.view.render(w, r, statusOf(err), "error", &view{Title: "Project not found", Me: s.me, Nav: "projects", Err: humanError(err)})
		return
	}
	v.Title, v.Nav, v.Data = d.Project.Name, "projects", d
	var ts struct {
		Items []task `json:"items"`
	}
	var ms struct {
		Items []milestone `json:"items"`
	}
	var pp struct {
		Items []paper `json:"items"`
	}
	var lib paperPage
	for _, call := range []struct {
		path string
		out  any
	}{{"/api/projects/" + id + "/tasks", &ts}, {"/api/projects/" + id + "/milestones", &ms},
		{"/api/projects/" + id + "/papers", &pp}, {"/api/papers?scope=library&view=all_non_trash&limit=100", &lib}} {
		if err := s.c.get(call.path, call.out); err != nil && v.Err == nil {
			v.Err = humanError(err)
		}
	}
	d.Tasks, d.Milestones, d.Papers = ts.Items, ms.Items, pp.Items
	linked := map[string]bool{}
	for _, p := range d.Papers {
		linked[p.ID] = true
	}
	for _, p := range lib.Items {
		if !linked[p.ID] {
			d.LibraryPapers = append(d.LibraryPapers, p)
		}
	}
	h.show(w, r, "project", v)
}

func (h *handler) projectUpdate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	if err := s.c.do(http.MethodPatch, "/api/projects/"+pathEscape(id), projectBody(r), nil); err != nil {
		h.fail(w, r, s, v, err, h.projectPage, nil)
		return
	}
	done(w, r, "/projects/"+id, "The project is saved.")
}

func (h *handler) projectDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	if err := s.c.do(http.MethodDelete, "/api/projects/"+pathEscape(id), nil, nil); err != nil {
		h.actionFailed(w, r, err, "/projects/"+id)
		return
	}
	done(w, r, "/projects", "The project is deleted.")
}

func (h *handler) taskCreate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	body := map[string]any{"title": strings.TrimSpace(r.PostFormValue("title"))}
	if due := r.PostFormValue("due_at"); due != "" {
		body["due_at"] = dueAt(due, zoneOf(s.me))
	}
	if p, err := strconv.Atoi(r.PostFormValue("priority")); err == nil {
		body["priority"] = p
	}
	if err := s.c.do(http.MethodPost, "/api/projects/"+pathEscape(id)+"/tasks", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.projectPage, nil)
		return
	}
	done(w, r, "/projects/"+id+"#tasks", "The task is added.")
}

func (h *handler) taskUpdate(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/projects")
	body := map[string]any{}
	if st := r.PostFormValue("status"); st != "" {
		body["status"] = st
	}
	if err := s.c.do(http.MethodPatch, "/api/tasks/"+pathEscape(chi.URLParam(r, "id")), body, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The task is saved.")
}

func (h *handler) taskDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/projects")
	if err := s.c.do(http.MethodDelete, "/api/tasks/"+pathEscape(chi.URLParam(r, "id")), nil, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The task is deleted.")
}

func (h *handler) milestoneCreate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	body := map[string]any{"title": strings.TrimSpace(r.PostFormValue("title")), "due_date": r.PostFormValue("due_date")}
	if err := s.c.do(http.MethodPost, "/api/projects/"+pathEscape(id)+"/milestones", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.projectPage, map[string]string{"due_date": "due_date"})
		return
	}
	done(w, r, "/projects/"+id+"#milestones", "The milestone is added.")
}

func (h *handler) milestoneUpdate(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/projects")
	body := map[string]any{"completed": r.PostFormValue("completed") == "true"}
	if err := s.c.do(http.MethodPatch, "/api/milestones/"+pathEscape(chi.URLParam(r, "id")), body, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The milestone is saved.")
}

func (h *handler) milestoneDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/projects")
	if err := s.c.do(http.MethodDelete, "/api/milestones/"+pathEscape(chi.URLParam(r, "id")), nil, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The milestone is deleted.")
}

func (h *handler) projectLinkPaper(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	to := "/projects/" + id + "#papers"
	if err := s.c.do(http.MethodPost, "/api/projects/"+pathEscape(id)+"/papers", map[string]string{"paper_id": r.PostFormValue("paper_id")}, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The paper is linked to the project.")
}

func (h *handler) projectUnlinkPaper(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	to := "/projects/" + id + "#papers"
	if err := s.c.do(http.MethodDelete, "/api/projects/"+pathEscape(id)+"/papers/"+pathEscape(chi.URLParam(r, "paper_id")), nil, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The paper is unlinked.")
}

// dueAt is the instant a task picked for day (YYYY-MM-DD) is due: 17:00 on that day
// in the viewer's zone, so the day shown back in that zone is the day picked. What
// is not a date goes to the API as typed, for it to refuse.
func dueAt(day string, loc *time.Location) string {
	d, err := time.ParseInLocation("2006-01-02", day, loc)
	if err != nil {
		return day + "T17:00:00Z"
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 17, 0, 0, 0, loc).Format(time.RFC3339)
}
