package projects

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/papers"
)

// Store reads and writes projects, tasks, milestones and project papers. Every
// method takes the owner's id and touches only their rows: another user's row is
// ErrNotFound.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Changes are the columns a create or an update sets, in order, with their values;
// the API fills them from a checked request body (patch).
type Changes struct {
	cols []string
	vals []any
}

// stampNow as a value sets a timestamp column to now(), or keeps it when it is set.
const stampNow = "\x00now"

func (c *Changes) set(col string, v any) {
	c.cols = append(c.cols, col)
	c.vals = append(c.vals, v)
}

// setClause renders the SET list of an UPDATE: updated_at, then every column set,
// numbered from $start; it returns the list and its arguments.
func (c Changes) setClause(start int) (string, []any) {
	parts := []string{"updated_at = now()"}
	var args []any
	for i, f := range c.cols {
		if c.vals[i] == stampNow {
			parts = append(parts, f+" = coalesce("+f+", now())")
			continue
		}
		args = append(args, c.vals[i])
		parts = append(parts, fmt.Sprintf("%s = $%d", f, start+len(args)-1))
	}
	return strings.Join(parts, ", "), args
}

// insert renders an INSERT into table of the given columns and values and every
// column set, returning returning.
func (c Changes) insert(table string, cols []string, vals []any, returning string) (string, []any) {
	places := make([]string, len(cols))
	for i := range cols {
		places[i] = fmt.Sprintf("$%d", i+1)
	}
	args := append([]any(nil), vals...)
	for i, f := range c.cols {
		cols = append(cols, f)
		if c.vals[i] == stampNow {
			places = append(places, "now()")
			continue
		}
		args = append(args, c.vals[i])
		places = append(places, fmt.Sprintf("$%d", len(args)))
	}
	return `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(places, ", ") + `) RETURNING ` + returning, args
}

const projectColumns = `p.id::text, p.name, coalesce(p.description, ''), p.status, to_char(p.deadline, 'YYYY-MM-DD'), p.color,
	(SELECT count(*) FROM tasks t WHERE t.project_id = p.id AND t.status <> 'done'),
	(SELECT count(*) FROM project_papers pp WHERE pp.project_id = p.id),
	p.created_at, p.updated_at,
	(SELECT to_char(min(m.due_date), 'YYYY-MM-DD') FROM milestones m WHERE m.project_id = p.id AND m.completed_at IS NULL)`

// listProjectsSQL lists an owner's ($1) projects, of one status ($2) or of all
// (an empty $2), archived last, most recently changed first.
const listProjectsSQL = `SELECT ` + projectColumns + ` FROM projects p
	WHERE p.user_id = $1 AND ($2 = '' OR p.status = $2) ORDER BY p.status = 'archived', p.updated_at DESC`

func scanProject(row pgx.Row) (Project, error) {
	var p Project
	err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Status, &p.Deadline, &p.Color, &p.OpenTasks, &p.Papers,
		&p.CreatedAt, &p.UpdatedAt, &p.NextDue)
	return p, notFound(err)
}

const taskColumns = `id::text, project_id::text, parent_task_id::text, title, coalesce(description, ''), status, priority,
	due_at, completed_at, sort_order, created_at, updated_at`

func scanTask(row pgx.Row) (Task, error) {
	var t Task
	err := row.Scan(&t.ID, &t.ProjectID, &t.ParentTaskID, &t.Title, &t.Description, &t.Status, &t.Priority,
		&t.DueAt, &t.CompletedAt, &t.SortOrder, &t.CreatedAt, &t.UpdatedAt)
	return t, notFound(err)
}

const milestoneColumns = `id::text, project_id::text, title, coalesce(description, ''), to_char(due_date, 'YYYY-MM-DD'),
	completed_at, created_at, updated_at`

func scanMilestone(row pgx.Row) (Milestone, error) {
	var m Milestone
	err := row.Scan(&m.ID, &m.ProjectID, &m.Title, &m.Description, &m.DueDate, &m.CompletedAt, &m.CreatedAt, &m.UpdatedAt)
	return m, notFound(err)
}

// notFound turns no row into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// ---- projects ----

// Projects returns the owner's projects, archived last, most recently changed first;
// status, when not empty, keeps one status.
func (s *Store) Projects(ctx context.Context, owner uuid.UUID, status string) ([]Project, error) {
	rows, err := s.pool.Query(ctx, listProjectsSQL, owner, status)
	if err != nil {
		return nil, fmt.Errorf("projects: list: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Project, error) { return scanProject(row) })
	return nonNil(list), err
}

// CreateProject adds a project for the owner.
func (s *Store) CreateProject(ctx context.Context, owner uuid.UUID, ch Changes) (Project, error) {
	var id string
	sql, args := ch.insert("projects", []string{"user_id"}, []any{owner}, "id::text")
	if err := s.pool.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
		return Project{}, err
	}
	return scanProject(s.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects p WHERE p.id = $1 AND p.user_id = $2`, id, owner))
}

// Project returns one of the owner's projects.
func (s *Store) Project(ctx context.Context, owner, id uuid.UUID) (Project, error) {
	return scanProject(s.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects p WHERE p.id = $1 AND p.user_id = $2`, id, owner))
}

// UpdateProject applies ch to one of the owner's projects.
func (s *Store) UpdateProject(ctx context.Context, owner, id uuid.UUID, ch Changes) error {
	set, args := ch.setClause(3)
	tag, err := s.pool.Exec(ctx, `UPDATE projects SET `+set+` WHERE id = $1 AND user_id = $2`, append([]any{id, owner}, args...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteProject removes one of the owner's projects with its tasks, milestones and
// paper links (the papers stay in the library).
func (s *Store) DeleteProject(ctx context.Context, owner, id uuid.UUID) error {
	return s.deleteRow(ctx, "projects", owner, id)
}

func (s *Store) deleteRow(ctx context.Context, table string, owner, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+table+` WHERE id = $1 AND user_id = $2`, id, owner)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// HasProject is nil when id is one of the owner's projects, ErrNotFound otherwise.
func (s *Store) HasProject(ctx context.Context, owner, id uuid.UUID) error {
	return ownedProject(ctx, s.pool, id, owner)
}

func ownedProject(ctx context.Context, q interface {
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

// Tasks returns the tasks of one of the owner's projects, open ones first.
func (s *Store) Tasks(ctx context.Context, owner, projectID uuid.UUID) ([]Task, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE project_id = $1 AND user_id = $2 ORDER BY status = 'done', sort_order, priority, created_at`, projectID, owner)
	if err != nil {
		return nil, fmt.Errorf("projects: tasks: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Task, error) { return scanTask(row) })
	return nonNil(list), err
}

// HasTask reports whether taskID is one of the owner's tasks in the project.
func (s *Store) HasTask(ctx context.Context, owner, projectID, taskID uuid.UUID) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1 AND user_id = $2 AND project_id = $3)`,
		taskID, owner, projectID).Scan(&ok)
	return ok, err
}

// CreateTask adds a task to one of the owner's projects, under parent when not nil.
func (s *Store) CreateTask(ctx context.Context, owner, projectID uuid.UUID, parent *uuid.UUID, ch Changes) (Task, error) {
	sql, args := ch.insert("tasks", []string{"user_id", "project_id", "parent_task_id"}, []any{owner, projectID, parent}, taskColumns)
	return scanTask(s.pool.QueryRow(ctx, sql, args...))
}

// Task returns one of the owner's tasks.
func (s *Store) Task(ctx context.Context, owner, id uuid.UUID) (Task, error) {
	return scanTask(s.pool.QueryRow(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1 AND user_id = $2`, id, owner))
}

// UpdateTask applies ch to one of the owner's tasks.
func (s *Store) UpdateTask(ctx context.Context, owner, id uuid.UUID, ch Changes) (Task, error) {
	set, args := ch.setClause(3)
	return scanTask(s.pool.QueryRow(ctx, `UPDATE tasks SET `+set+` WHERE id = $1 AND user_id = $2 RETURNING `+taskColumns,
		append([]any{id, owner}, args...)...))
}

// DeleteTask removes one of the owner's tasks and its subtasks.
func (s *Store) DeleteTask(ctx context.Context, owner, id uuid.UUID) error {
	return s.deleteRow(ctx, "tasks", owner, id)
}

// ---- milestones ----

// Milestones returns the milestones of one of the owner's projects, soonest first.
func (s *Store) Milestones(ctx context.Context, owner, projectID uuid.UUID) ([]Milestone, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+milestoneColumns+` FROM milestones
		WHERE project_id = $1 AND user_id = $2 ORDER BY due_date, created_at`, projectID, owner)
	if err != nil {
		return nil, fmt.Errorf("projects: milestones: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Milestone, error) { return scanMilestone(row) })
	return nonNil(list), err
}

// CreateMilestone adds a milestone to one of the owner's projects.
func (s *Store) CreateMilestone(ctx context.Context, owner, projectID uuid.UUID, ch Changes) (Milestone, error) {
	sql, args := ch.insert("milestones", []string{"user_id", "project_id"}, []any{owner, projectID}, milestoneColumns)
	return scanMilestone(s.pool.QueryRow(ctx, sql, args...))
}

// Milestone returns one of the owner's milestones.
func (s *Store) Milestone(ctx context.Context, owner, id uuid.UUID) (Milestone, error) {
	return scanMilestone(s.pool.QueryRow(ctx, `SELECT `+milestoneColumns+` FROM milestones WHERE id = $1 AND user_id = $2`, id, owner))
}

// UpdateMilestone applies ch to one of the owner's milestones.
func (s *Store) UpdateMilestone(ctx context.Context, owner, id uuid.UUID, ch Changes) (Milestone, error) {
	set, args := ch.setClause(3)
	return scanMilestone(s.pool.QueryRow(ctx, `UPDATE milestones SET `+set+` WHERE id = $1 AND user_id = $2 RETURNING `+milestoneColumns,
		append([]any{id, owner}, args...)...))
}

// DeleteMilestone removes one of the owner's milestones.
func (s *Store) DeleteMilestone(ctx context.Context, owner, id uuid.UUID) error {
	return s.deleteRow(ctx, "milestones", owner, id)
}

// ---- project papers ----

// PaperIDs returns the ids of the papers linked to one of the owner's projects, in
// the order they were linked; ErrNotFound when the project is not theirs or does
// not exist. Other areas (rag's project scope) ask this instead of reading
// project_papers.
func (s *Store) PaperIDs(ctx context.Context, owner, projectID uuid.UUID) ([]uuid.UUID, error) {
	if err := ownedProject(ctx, s.pool, projectID, owner); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT paper_id FROM project_papers WHERE project_id = $1 AND user_id = $2 ORDER BY added_at`, projectID, owner)
	if err != nil {
		return nil, fmt.Errorf("projects: papers: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// LinkPaper links a paper the owner may see to their project and adds it to their
// library, in one transaction (SPEC ownership rule 8): both happen or neither. A
// paper linked already stays linked.
func (s *Store) LinkPaper(ctx context.Context, owner, projectID, paperID uuid.UUID) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := ownedProject(ctx, tx, projectID, owner); err != nil {
			return err
		}
		if err := papers.AddToLibraryTx(ctx, tx, owner, paperID, "project_link"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO project_papers (project_id, paper_id, user_id) VALUES ($1, $2, $3)
			ON CONFLICT (project_id, paper_id) DO NOTHING`, projectID, paperID, owner)
		return err
	})
}

// UnlinkPaper removes a paper from one of the owner's projects; it stays in the
// library.
func (s *Store) UnlinkPaper(ctx context.Context, owner, projectID, paperID uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM project_papers WHERE project_id = $1 AND paper_id = $2 AND user_id = $3`,
		projectID, paperID, owner)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
