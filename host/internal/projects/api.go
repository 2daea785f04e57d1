package projects

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// API serves projects, tasks, milestones and project papers for the caller.
type API struct {
	store  *Store
	papers *papers.Store
}

// NewAPI returns the projects API.
func NewAPI(pool *pgxpool.Pool, paperStore *papers.Store) *API {
	return &API{store: New(pool), papers: paperStore}
}

func user(r *http.Request) uuid.UUID { return auth.CallerFrom(r.Context()).UserID }

// pathID reads a UUID path parameter; a malformed one is simply not found.
func pathID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(chi.URLParam(r, name))
	if err != nil {
		return uuid.Nil, ErrNotFound
	}
	return id, nil
}

// readPatch reads the body as a patch of the allowed fields, checks it with fill and
// the required names, and answers 400/422 itself when it fails.
func readPatch(w http.ResponseWriter, r *http.Request, allowed []string, fill func(*patch), required ...string) (*patch, bool) {
	body, ok := decodeObject(w, r)
	if !ok {
		return nil, false
	}
	p := newPatch(body, allowed...)
	p.require(required...)
	fill(p)
	if err := p.err(); err != nil {
		answer(w, r, 0, nil, err)
		return nil, false
	}
	return p, true
}

// projectFromPath reads the {id} of one of the caller's projects; another user's
// project is ErrNotFound.
func (a *API) projectFromPath(r *http.Request) (uuid.UUID, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return uuid.Nil, err
	}
	return id, a.store.HasProject(r.Context(), user(r), id)
}

func decodeObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	var body map[string]json.RawMessage
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return nil, false
	}
	if body == nil {
		body = map[string]json.RawMessage{}
	}
	return body, true
}

// answer writes v, or the error: ErrNotFound as 404, a *ValidationError as 422.
func answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	var apiErr *httpx.Error
	var invalid *ValidationError
	switch {
	case err == nil:
		httpx.JSON(w, status, v)
	case errors.Is(err, ErrNotFound), errors.Is(err, papers.ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("Not found."))
	case errors.As(err, &invalid):
		fields := make([]httpx.FieldError, len(invalid.Fields))
		for i, f := range invalid.Fields {
			fields[i] = httpx.FieldError{Field: f.Field, Message: f.Message}
		}
		httpx.Err(w, r, httpx.Invalid("Some fields are not valid.", fields...))
	case errors.As(err, &apiErr):
		httpx.Err(w, r, apiErr)
	default:
		httpx.Err(w, r, httpx.Internal(err))
	}
}

func noContent(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- projects ----

// ListProjects answers the caller's projects; ?status= filters.
func (a *API) ListProjects(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status != "" && !slices.Contains(ProjectStatuses, status) {
		answer(w, r, 0, nil, httpx.Invalid("Unknown status.", httpx.FieldError{Field: "status", Message: "must be one of active, paused, completed, archived"}))
		return
	}
	list, err := a.store.Projects(r.Context(), user(r), status)
	answer(w, r, http.StatusOK, map[string]any{"items": list}, err)
}

// CreateProject makes a project: name required; description, status, deadline, color.
func (a *API) CreateProject(w http.ResponseWriter, r *http.Request) {
	p, ok := readPatch(w, r, []string{"name", "description", "status", "deadline", "color"}, projectFields, "name")
	if !ok {
		return
	}
	pr, err := a.store.CreateProject(r.Context(), user(r), p.changes)
	answer(w, r, http.StatusCreated, pr, err)
}

func projectFields(p *patch) {
	p.text("name", "name", true, 200)
	p.text("description", "description", false, 20000)
	p.enum("status", "status", ProjectStatuses)
	p.date("deadline", "deadline", false)
	p.color("color", "color")
}

// GetProject answers one of the caller's projects.
func (a *API) GetProject(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	pr, err := a.store.Project(r.Context(), user(r), id)
	answer(w, r, http.StatusOK, pr, err)
}

// UpdateProject changes the fields sent; null clears description, deadline, color.
func (a *API) UpdateProject(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	p, ok := readPatch(w, r, []string{"name", "description", "status", "deadline", "color"}, projectFields)
	if !ok {
		return
	}
	if err := a.store.UpdateProject(r.Context(), user(r), id, p.changes); err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	a.GetProject(w, r)
}

// DeleteProject removes a project with its tasks, milestones and paper links (the
// papers stay in the library).
func (a *API) DeleteProject(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, a.store.DeleteProject))
}

// deleteRow deletes the caller's row of the path's {id} with del.
func (a *API) deleteRow(r *http.Request, del func(ctx context.Context, owner, id uuid.UUID) error) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return del(r.Context(), user(r), id)
}

// ---- tasks ----

func taskFields(p *patch) {
	p.text("title", "title", true, 500)
	p.text("description", "description", false, 20000)
	p.enum("status", "status", TaskStatuses)
	p.integer("priority", "priority", 1, 4)
	p.timestamp("due_at", "due_at")
	p.integer("sort_order", "sort_order", -1000000, 1000000)
	if p.has("status") && len(p.errs) == 0 {
		var s string
		_ = json.Unmarshal(p.raw["status"], &s)
		// completed_at follows the status: set when it becomes done, cleared otherwise.
		p.stamp("completed_at", s == "done")
	}
}

// ListTasks answers a project's tasks.
func (a *API) ListTasks(w http.ResponseWriter, r *http.Request) {
	id, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	list, err := a.store.Tasks(r.Context(), user(r), id)
	answer(w, r, http.StatusOK, map[string]any{"items": list}, err)
}

// CreateTask adds a task to one of the caller's projects.
func (a *API) CreateTask(w http.ResponseWriter, r *http.Request) {
	projectID, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	p, ok := readPatch(w, r, []string{"title", "description", "status", "priority", "due_at", "sort_order", "parent_task_id"}, taskFields, "title")
	if !ok {
		return
	}
	var parent *uuid.UUID
	if p.has("parent_task_id") && !p.isNull("parent_task_id") {
		var s string
		if json.Unmarshal(p.raw["parent_task_id"], &s) != nil || uuid.Validate(s) != nil {
			p.fail("parent_task_id", "must be a task id")
		} else {
			id := uuid.MustParse(s)
			parent = &id
		}
	}
	if err := p.err(); err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	if parent != nil {
		if ok, err := a.store.HasTask(r.Context(), user(r), projectID, *parent); err != nil || !ok {
			answer(w, r, 0, nil, httpx.Invalid("The parent task is not in this project.", httpx.FieldError{Field: "parent_task_id", Message: "must be a task of this project"}))
			return
		}
	}
	t, err := a.store.CreateTask(r.Context(), user(r), projectID, parent, p.changes)
	answer(w, r, http.StatusCreated, t, err)
}

// GetTask answers one of the caller's tasks.
func (a *API) GetTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	t, err := a.store.Task(r.Context(), user(r), id)
	answer(w, r, http.StatusOK, t, err)
}

// UpdateTask changes the fields sent; status done stamps completed_at.
func (a *API) UpdateTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	p, ok := readPatch(w, r, []string{"title", "description", "status", "priority", "due_at", "sort_order"}, taskFields)
	if !ok {
		return
	}
	t, err := a.store.UpdateTask(r.Context(), user(r), id, p.changes)
	answer(w, r, http.StatusOK, t, err)
}

// DeleteTask removes a task and its subtasks.
func (a *API) DeleteTask(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, a.store.DeleteTask))
}

// ---- milestones ----

func milestoneFields(p *patch) {
	p.text("title", "title", true, 500)
	p.text("description", "description", false, 20000)
	p.date("due_date", "due_date", true)
	if done, ok := p.boolean("completed"); ok {
		p.stamp("completed_at", done)
	}
}

// ListMilestones answers a project's milestones, soonest first.
func (a *API) ListMilestones(w http.ResponseWriter, r *http.Request) {
	id, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	list, err := a.store.Milestones(r.Context(), user(r), id)
	answer(w, r, http.StatusOK, map[string]any{"items": list}, err)
}

// CreateMilestone adds a milestone: title and due_date required.
func (a *API) CreateMilestone(w http.ResponseWriter, r *http.Request) {
	projectID, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	p, ok := readPatch(w, r, []string{"title", "description", "due_date", "completed"}, milestoneFields, "title", "due_date")
	if !ok {
		return
	}
	m, err := a.store.CreateMilestone(r.Context(), user(r), projectID, p.changes)
	answer(w, r, http.StatusCreated, m, err)
}

// GetMilestone answers one of the caller's milestones.
func (a *API) GetMilestone(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	m, err := a.store.Milestone(r.Context(), user(r), id)
	answer(w, r, http.StatusOK, m, err)
}

// UpdateMilestone changes the fields sent; "completed": true stamps completed_at.
func (a *API) UpdateMilestone(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	p, ok := readPatch(w, r, []string{"title", "description", "due_date", "completed"}, milestoneFields)
	if !ok {
		return
	}
	m, err := a.store.UpdateMilestone(r.Context(), user(r), id, p.changes)
	answer(w, r, http.StatusOK, m, err)
}

// DeleteMilestone removes a milestone.
func (a *API) DeleteMilestone(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, a.store.DeleteMilestone))
}

// ---- project papers ----

// ListPapers answers the papers linked to a project, with the caller's overlay.
func (a *API) ListPapers(w http.ResponseWriter, r *http.Request) {
	id, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	ids, err := a.store.PaperIDs(r.Context(), user(r), id)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	items := make([]papers.Item, 0, len(ids))
	for _, pid := range ids {
		it, err := a.papers.Get(r.Context(), user(r), pid)
		if errors.Is(err, papers.ErrNotFound) {
			continue
		}
		if err != nil {
			answer(w, r, 0, nil, err)
			return
		}
		items = append(items, it)
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": items})
}

type linkBody struct {
	PaperID string `json:"paper_id"`
}

// LinkPaper links a paper the caller may see to their project and adds it to their
// library, in one transaction (SPEC ownership rule 8): both happen or neither.
func (a *API) LinkPaper(w http.ResponseWriter, r *http.Request) {
	projectID, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	var body linkBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	paperID, perr := uuid.Parse(body.PaperID)
	if perr != nil {
		answer(w, r, 0, nil, httpx.Invalid("paper_id is not a paper id.", httpx.FieldError{Field: "paper_id", Message: "must be a UUID"}))
		return
	}
	owner := user(r)
	err = a.store.LinkPaper(r.Context(), owner, projectID, paperID)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	it, err := a.papers.Get(r.Context(), owner, paperID)
	answer(w, r, http.StatusCreated, it, err)
}

// UnlinkPaper removes a paper from a project; it stays in the library.
func (a *API) UnlinkPaper(w http.ResponseWriter, r *http.Request) {
	projectID, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	paperID, err := pathID(r, "paper_id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	noContent(w, r, a.store.UnlinkPaper(r.Context(), user(r), projectID, paperID))
}
