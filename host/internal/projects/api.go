package projects

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpapi/respond"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// API serves projects, tasks, milestones and project papers for the caller.
type API struct {
	pool   *pgxpool.Pool
	papers *papers.Store
}

// NewAPI returns the projects API.
func NewAPI(pool *pgxpool.Pool, paperStore *papers.Store) *API {
	return &API{pool: pool, papers: paperStore}
}

const projectColumns = `p.id::text, p.name, coalesce(p.description, ''), p.status, to_char(p.deadline, 'YYYY-MM-DD'), p.color,
	(SELECT count(*) FROM tasks t WHERE t.project_id = p.id AND t.status <> 'done'),
	(SELECT count(*) FROM project_papers pp WHERE pp.project_id = p.id),
	p.created_at, p.updated_at,
	(SELECT to_char(min(m.due_date), 'YYYY-MM-DD') FROM milestones m WHERE m.project_id = p.id AND m.completed_at IS NULL)`

func scanProject(row pgx.Row) (Project, error) {
	var p Project
	err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Status, &p.Deadline, &p.Color, &p.OpenTasks, &p.Papers,
		&p.CreatedAt, &p.UpdatedAt, &p.NextDue)
	return p, err
}

const taskColumns = `id::text, project_id::text, parent_task_id::text, title, coalesce(description, ''), status, priority,
	due_at, completed_at, sort_order, created_at, updated_at`

func scanTask(row pgx.Row) (Task, error) {
	var t Task
	err := row.Scan(&t.ID, &t.ProjectID, &t.ParentTaskID, &t.Title, &t.Description, &t.Status, &t.Priority,
		&t.DueAt, &t.CompletedAt, &t.SortOrder, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

const milestoneColumns = `id::text, project_id::text, title, coalesce(description, ''), to_char(due_date, 'YYYY-MM-DD'),
	completed_at, created_at, updated_at`

func scanMilestone(row pgx.Row) (Milestone, error) {
	var m Milestone
	err := row.Scan(&m.ID, &m.ProjectID, &m.Title, &m.Description, &m.DueDate, &m.CompletedAt, &m.CreatedAt, &m.UpdatedAt)
	return m, err
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
	return id, a.ownedProject(r.Context(), a.pool, id, user(r))
}

func decodeObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	var body map[string]json.RawMessage
	if !auth.DecodeJSON(w, r, &body) {
		return nil, false
	}
	if body == nil {
		body = map[string]json.RawMessage{}
	}
	return body, true
}

// answer writes v, or the error: ErrNotFound and pgx.ErrNoRows as 404.
func answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	var apiErr *respond.Error
	switch {
	case err == nil:
		respond.JSON(w, status, v)
	case errors.Is(err, ErrNotFound), errors.Is(err, pgx.ErrNoRows), errors.Is(err, papers.ErrNotFound):
		respond.Err(w, r, respond.NotFound("Not found."))
	case errors.As(err, &apiErr):
		respond.Err(w, r, apiErr)
	default:
		respond.Err(w, r, respond.Internal(err))
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
		answer(w, r, 0, nil, respond.Invalid("Unknown status.", respond.FieldError{Field: "status", Message: "must be one of active, paused, completed, archived"}))
		return
	}
	rows, err := a.pool.Query(r.Context(), `SELECT `+projectColumns+` FROM projects p
		WHERE p.user_id = $1 AND ($2 = '' OR p.status = $2) ORDER BY p.status = 'archived', p.updated_at DESC`, user(r), status)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Project, error) { return scanProject(row) })
	answer(w, r, http.StatusOK, map[string]any{"items": nonNil(list)}, err)
}

// CreateProject makes a project: name required; description, status, deadline, color.
func (a *API) CreateProject(w http.ResponseWriter, r *http.Request) {
	p, ok := readPatch(w, r, []string{"name", "description", "status", "deadline", "color"}, projectFields, "name")
	if !ok {
		return
	}
	var id string
	sql, args := p.insert("projects", []string{"user_id"}, []any{user(r)}, "id::text")
	err := a.pool.QueryRow(r.Context(), sql, args...).Scan(&id)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	pr, err := scanProject(a.pool.QueryRow(r.Context(), `SELECT `+projectColumns+` FROM projects p WHERE p.id = $1 AND p.user_id = $2`, id, user(r)))
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
	pr, err := scanProject(a.pool.QueryRow(r.Context(), `SELECT `+projectColumns+` FROM projects p WHERE p.id = $1 AND p.user_id = $2`, id, user(r)))
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
	if err := a.update(r.Context(), "projects", id, user(r), p); err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	a.GetProject(w, r)
}

// DeleteProject removes a project with its tasks, milestones and paper links (the
// papers stay in the library).
func (a *API) DeleteProject(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, "projects"))
}

// update applies p to the caller's row id of table.
func (a *API) update(ctx context.Context, table string, id, owner uuid.UUID, p *patch) error {
	set, args := p.setClause(3)
	tag, err := a.pool.Exec(ctx, `UPDATE `+table+` SET `+set+` WHERE id = $1 AND user_id = $2`, append([]any{id, owner}, args...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

func (a *API) deleteRow(r *http.Request, table string) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	tag, err := a.pool.Exec(r.Context(), `DELETE FROM `+table+` WHERE id = $1 AND user_id = $2`, id, user(r))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// ownedProject checks the project is the caller's.
func (a *API) ownedProject(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id, owner uuid.UUID) error {
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $1 AND user_id = $2)`, id, owner).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
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
	rows, err := a.pool.Query(r.Context(), `SELECT `+taskColumns+` FROM tasks
		WHERE project_id = $1 AND user_id = $2 ORDER BY status = 'done', sort_order, priority, created_at`, id, user(r))
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Task, error) { return scanTask(row) })
	answer(w, r, http.StatusOK, map[string]any{"items": nonNil(list)}, err)
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
	var parent any
	if p.has("parent_task_id") && !p.isNull("parent_task_id") {
		var s string
		if json.Unmarshal(p.raw["parent_task_id"], &s) != nil || uuid.Validate(s) != nil {
			p.fail("parent_task_id", "must be a task id")
		} else {
			parent = s
		}
	}
	if err := p.err(); err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	if parent != nil {
		var ok bool
		if err := a.pool.QueryRow(r.Context(), `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1 AND user_id = $2 AND project_id = $3)`,
			parent, user(r), projectID).Scan(&ok); err != nil || !ok {
			answer(w, r, 0, nil, respond.Invalid("The parent task is not in this project.", respond.FieldError{Field: "parent_task_id", Message: "must be a task of this project"}))
			return
		}
	}
	sql, args := p.insert("tasks", []string{"user_id", "project_id", "parent_task_id"}, []any{user(r), projectID, parent}, taskColumns)
	t, err := scanTask(a.pool.QueryRow(r.Context(), sql, args...))
	answer(w, r, http.StatusCreated, t, err)
}

// GetTask answers one of the caller's tasks.
func (a *API) GetTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	t, err := scanTask(a.pool.QueryRow(r.Context(), `SELECT `+taskColumns+` FROM tasks WHERE id = $1 AND user_id = $2`, id, user(r)))
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
	set, args := p.setClause(3)
	t, err := scanTask(a.pool.QueryRow(r.Context(), `UPDATE tasks SET `+set+` WHERE id = $1 AND user_id = $2 RETURNING `+taskColumns,
		append([]any{id, user(r)}, args...)...))
	answer(w, r, http.StatusOK, t, err)
}

// DeleteTask removes a task and its subtasks.
func (a *API) DeleteTask(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, "tasks"))
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
	rows, err := a.pool.Query(r.Context(), `SELECT `+milestoneColumns+` FROM milestones
		WHERE project_id = $1 AND user_id = $2 ORDER BY due_date, created_at`, id, user(r))
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Milestone, error) { return scanMilestone(row) })
	answer(w, r, http.StatusOK, map[string]any{"items": nonNil(list)}, err)
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
	sql, args := p.insert("milestones", []string{"user_id", "project_id"}, []any{user(r), projectID}, milestoneColumns)
	m, err := scanMilestone(a.pool.QueryRow(r.Context(), sql, args...))
	answer(w, r, http.StatusCreated, m, err)
}

// GetMilestone answers one of the caller's milestones.
func (a *API) GetMilestone(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	m, err := scanMilestone(a.pool.QueryRow(r.Context(), `SELECT `+milestoneColumns+` FROM milestones WHERE id = $1 AND user_id = $2`, id, user(r)))
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
	set, args := p.setClause(3)
	m, err := scanMilestone(a.pool.QueryRow(r.Context(), `UPDATE milestones SET `+set+` WHERE id = $1 AND user_id = $2 RETURNING `+milestoneColumns,
		append([]any{id, user(r)}, args...)...))
	answer(w, r, http.StatusOK, m, err)
}

// DeleteMilestone removes a milestone.
func (a *API) DeleteMilestone(w http.ResponseWriter, r *http.Request) {
	noContent(w, r, a.deleteRow(r, "milestones"))
}

// ---- project papers ----

// ListPapers answers the papers linked to a project, with the caller's overlay.
func (a *API) ListPapers(w http.ResponseWriter, r *http.Request) {
	id, err := a.projectFromPath(r)
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	rows, err := a.pool.Query(r.Context(), `SELECT paper_id FROM project_papers WHERE project_id = $1 AND user_id = $2 ORDER BY added_at`, id, user(r))
	if err != nil {
		answer(w, r, 0, nil, err)
		return
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
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
	respond.JSON(w, http.StatusOK, map[string]any{"items": items})
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
	if !auth.DecodeJSON(w, r, &body) {
		return
	}
	paperID, perr := uuid.Parse(body.PaperID)
	if perr != nil {
		answer(w, r, 0, nil, respond.Invalid("paper_id is not a paper id.", respond.FieldError{Field: "paper_id", Message: "must be a UUID"}))
		return
	}
	owner := user(r)
	err = pgx.BeginFunc(r.Context(), a.pool, func(tx pgx.Tx) error {
		if err := a.ownedProject(r.Context(), tx, projectID, owner); err != nil {
			return err
		}
		if err := papers.AddToLibraryTx(r.Context(), tx, owner, paperID, "project_link"); err != nil {
			return err
		}
		_, err := tx.Exec(r.Context(), `
			INSERT INTO project_papers (project_id, paper_id, user_id) VALUES ($1, $2, $3)
			ON CONFLICT (project_id, paper_id) DO NOTHING`, projectID, paperID, owner)
		return err
	})
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
	tag, err := a.pool.Exec(r.Context(), `DELETE FROM project_papers WHERE project_id = $1 AND paper_id = $2 AND user_id = $3`,
		projectID, paperID, user(r))
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	noContent(w, r, err)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
