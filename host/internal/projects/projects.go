// Package projects keeps a researcher's projects, their tasks and milestones, and
// the papers linked to them. Everything here is per user: every query carries the
// caller's user_id, and another user's id answers 404.
package projects

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrNotFound means no such row for this user.
var ErrNotFound = errors.New("projects: not found")

// States.
var (
	ProjectStatuses = []string{"active", "paused", "completed", "archived"}
	TaskStatuses    = []string{"todo", "in_progress", "blocked", "done"}
)

// Project is a user's project.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Status      string    `json:"status"`
	Deadline    *string   `json:"deadline,omitempty"` // YYYY-MM-DD
	Color       *string   `json:"color,omitempty"`
	OpenTasks   int       `json:"open_tasks"`
	Papers      int       `json:"papers"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	NextDue     *string   `json:"next_milestone_due,omitempty"`
}

// Task is a unit of work in a project.
type Task struct {
	ID           string     `json:"id"`
	ProjectID    string     `json:"project_id"`
	ParentTaskID *string    `json:"parent_task_id,omitempty"`
	Title        string     `json:"title"`
	Description  string     `json:"description,omitempty"`
	Status       string     `json:"status"`
	Priority     int        `json:"priority"`
	DueAt        *time.Time `json:"due_at,omitempty"`
	CompletedAt  *time.Time `json:"completed_at,omitempty"`
	SortOrder    int        `json:"sort_order"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// Milestone is a dated goal of a project.
type Milestone struct {
	ID          string     `json:"id"`
	ProjectID   string     `json:"project_id"`
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	DueDate     string     `json:"due_date"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// FieldError says what is wrong with one field of a project, task or milestone.
type FieldError struct {
	Field   string
	Message string
}

// ValidationError lists every field that failed validation, by field name. The API
// answers it as 422 naming the fields.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + " " + f.Message
	}
	return "projects: invalid: " + strings.Join(parts, "; ")
}

// patch is a JSON object whose fields may be absent (leave as is), null (clear) or
// set. It validates as it reads and collects every field error.
type patch struct {
	raw     map[string]json.RawMessage
	errs    []FieldError
	changes Changes // the columns to set, in order
}

func newPatch(body map[string]json.RawMessage, allowed ...string) *patch {
	p := &patch{raw: body}
	for k := range body {
		if !slices.Contains(allowed, k) {
			p.errs = append(p.errs, FieldError{Field: k, Message: "is not a field of this object"})
		}
	}
	return p
}

func (p *patch) fail(field, msg string) {
	p.errs = append(p.errs, FieldError{Field: field, Message: msg})
}

func (p *patch) has(k string) bool { _, ok := p.raw[k]; return ok }

func (p *patch) isNull(k string) bool { return string(p.raw[k]) == "null" }

func (p *patch) set(col string, v any) { p.changes.set(col, v) }

// text reads a string field of 1..max characters (min 0 when optional). A null
// clears an optional field.
func (p *patch) text(k, col string, required bool, max int) {
	if !p.has(k) {
		return
	}
	if p.isNull(k) {
		if required {
			p.fail(k, "is required")
			return
		}
		p.set(col, nil)
		return
	}
	var s string
	if err := json.Unmarshal(p.raw[k], &s); err != nil {
		p.fail(k, "must be a string")
		return
	}
	s = strings.TrimSpace(s)
	switch {
	case required && s == "":
		p.fail(k, "must not be empty")
	case utf8.RuneCountInString(s) > max:
		p.fail(k, fmt.Sprintf("must be at most %d characters", max))
	default:
		if s == "" {
			p.set(col, nil)
		} else {
			p.set(col, s)
		}
	}
}

func (p *patch) enum(k, col string, values []string) {
	if !p.has(k) {
		return
	}
	var s string
	if err := json.Unmarshal(p.raw[k], &s); err != nil || !slices.Contains(values, s) {
		p.fail(k, "must be one of "+strings.Join(values, ", "))
		return
	}
	p.set(col, s)
}

var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func (p *patch) color(k, col string) {
	if !p.has(k) {
		return
	}
	if p.isNull(k) {
		p.set(col, nil)
		return
	}
	var s string
	if err := json.Unmarshal(p.raw[k], &s); err != nil || !colorPattern.MatchString(s) {
		p.fail(k, "must be a color like #3366cc")
		return
	}
	p.set(col, strings.ToLower(s))
}

// date reads YYYY-MM-DD.
func (p *patch) date(k, col string, required bool) {
	if !p.has(k) {
		return
	}
	if p.isNull(k) {
		if required {
			p.fail(k, "is required")
			return
		}
		p.set(col, nil)
		return
	}
	var s string
	if err := json.Unmarshal(p.raw[k], &s); err != nil {
		p.fail(k, "must be a date YYYY-MM-DD")
		return
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		p.fail(k, "must be a date YYYY-MM-DD")
		return
	}
	p.set(col, d)
}

// timestamp reads an RFC 3339 time.
func (p *patch) timestamp(k, col string) {
	if !p.has(k) {
		return
	}
	if p.isNull(k) {
		p.set(col, nil)
		return
	}
	var s string
	if err := json.Unmarshal(p.raw[k], &s); err != nil {
		p.fail(k, "must be a time like 2026-05-01T17:00:00Z")
		return
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		p.fail(k, "must be a time like 2026-05-01T17:00:00Z")
		return
	}
	p.set(col, t)
}

func (p *patch) integer(k, col string, lo, hi int) {
	if !p.has(k) {
		return
	}
	var n int
	if err := json.Unmarshal(p.raw[k], &n); err != nil || n < lo || n > hi {
		p.fail(k, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
		return
	}
	p.set(col, n)
}

func (p *patch) boolean(k string) (bool, bool) {
	if !p.has(k) {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(p.raw[k], &b); err != nil {
		p.fail(k, "must be true or false")
		return false, false
	}
	return b, true
}

func (p *patch) require(keys ...string) {
	for _, k := range keys {
		if !p.has(k) {
			p.fail(k, "is required")
		}
	}
}

// err is a *ValidationError with the collected field errors, or nil.
func (p *patch) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	slices.SortFunc(p.errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	return &ValidationError{Fields: p.errs}
}

// stamp sets a completion column: now() when done is true (keeping an earlier
// stamp), NULL otherwise.
func (p *patch) stamp(col string, done bool) {
	if done {
		p.set(col, stampNow)
	} else {
		p.set(col, nil)
	}
}
