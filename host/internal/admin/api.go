// Package admin is the admin's HTTP surface: user management and the audit log.
// Admin authority covers operations, not data: nothing here reads another user's
// research rows (SPEC "Identities").
package admin

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/users"
)

// API serves the admin routes. Every route is mounted with auth.AdminSession.
type API struct {
	pool  *pgxpool.Pool
	auth  *auth.Service
	audit *audit.Log
	log   *slog.Logger
}

// New returns the admin API.
func New(pool *pgxpool.Pool, authSvc *auth.Service, auditLog *audit.Log, logger *slog.Logger) *API {
	return &API{pool: pool, auth: authSvc, audit: auditLog, log: logger}
}

func (a *API) record(r *http.Request, action string, meta map[string]any) {
	if ip := auth.ClientIP(r.Context()); ip.IsValid() {
		meta["ip"] = ip.String()
	}
	a.audit.Record(r.Context(), auth.CallerFrom(r.Context()).UserID, action, r.URL.Path, meta)
}

// ListUsers answers every account (no research data).
func (a *API) ListUsers(w http.ResponseWriter, r *http.Request) {
	list, err := users.List(r.Context(), a.pool)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if list == nil {
		list = []users.User{}
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": list})
}

type inviteBody struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// InviteResult is the answer to an invitation.
type InviteResult struct {
	User       users.User `json:"user"`
	InviteSent bool       `json:"invite_sent"`
	Detail     string     `json:"detail,omitempty"`
}

// InviteUser creates an account and mails it a sign-in link valid for a day. When
// the mail cannot go out the account stays, and the answer says so; the admin can
// resend with POST /api/admin/users/{id}/send-link.
func (a *API) InviteUser(w http.ResponseWriter, r *http.Request) {
	var body inviteBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	if body.Role == "" {
		body.Role = users.RoleUser
	}
	u, err := users.Create(r.Context(), a.pool, body.Email, body.Role)
	switch {
	case errors.Is(err, users.ErrBadEmail):
		httpx.Err(w, r, httpx.Invalid("The email address is not valid.", httpx.FieldError{Field: "email", Message: "is not an email address"}))
		return
	case errors.Is(err, users.ErrBadRole):
		httpx.Err(w, r, httpx.Invalid("The role is not valid.", httpx.FieldError{Field: "role", Message: "must be user or admin"}))
		return
	case errors.Is(err, users.ErrEmailTaken):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "email_taken", Detail: "An account with this address exists already."})
		return
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	a.record(r, audit.ActionUserCreate, map[string]any{"via": "invite", "role": u.Role, "target_user_id": u.ID.String(), "target_email": u.Email})
	res := InviteResult{User: u, InviteSent: true}
	if err := a.auth.SendSignInLink(r.Context(), u, "invite"); err != nil {
		a.log.ErrorContext(r.Context(), "send invitation", "user_id", u.ID, "error", err)
		res.InviteSent, res.Detail = false, "The account was created but the invitation could not be sent: check the SMTP settings, then resend."
	}
	httpx.JSON(w, http.StatusCreated, res)
}

// SendLink mails a live account a fresh invitation link.
func (a *API) SendLink(w http.ResponseWriter, r *http.Request) {
	u, ok := a.liveUser(w, r)
	if !ok {
		return
	}
	if err := a.auth.SendSignInLink(r.Context(), u, "invite"); err != nil {
		httpx.Err(w, r, httpx.Unavailable("The link could not be sent: check the SMTP settings.", err))
		return
	}
	a.record(r, "admin.user.send_link", map[string]any{"target_user_id": u.ID.String()})
	w.WriteHeader(http.StatusNoContent)
}

type roleBody struct {
	Role string `json:"role"`
}

// SetRole changes an account's role; the last admin cannot be demoted.
func (a *API) SetRole(w http.ResponseWriter, r *http.Request) {
	id, ok := pathUserID(w, r)
	if !ok {
		return
	}
	var body roleBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	u, err := users.SetRole(r.Context(), a.pool, id, body.Role)
	if !a.userError(w, r, err) {
		return
	}
	a.record(r, audit.ActionUserRoleChange, map[string]any{"target_user_id": u.ID.String(), "role": u.Role})
	httpx.JSON(w, http.StatusOK, u)
}

// DeleteUser soft-deletes an account and revokes its sessions; the purge removes it
// after users.Retention. The last admin cannot be deleted.
func (a *API) DeleteUser(w http.ResponseWriter, r *http.Request) {
	id, ok := pathUserID(w, r)
	if !ok {
		return
	}
	u, err := users.SoftDelete(r.Context(), a.pool, id)
	if !a.userError(w, r, err) {
		return
	}
	a.record(r, audit.ActionUserDelete, map[string]any{"target_user_id": u.ID.String()})
	w.WriteHeader(http.StatusNoContent)
}

// AuditLog answers a page of the audit log, newest first: ?limit=1..200 (default 50),
// ?cursor= from the previous page's next_cursor, ?action_prefix= to filter.
func (a *API) AuditLog(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := audit.ListParams{Cursor: q.Get("cursor"), ActionPrefix: q.Get("action_prefix")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 200 {
			httpx.Err(w, r, httpx.Invalid("limit must be a number from 1 to 200.", httpx.FieldError{Field: "limit", Message: "must be from 1 to 200"}))
			return
		}
		p.Limit = n
	}
	page, err := a.audit.List(r.Context(), p)
	if errors.Is(err, audit.ErrBadCursor) {
		httpx.Err(w, r, httpx.Invalid("The cursor is not valid; start again without it.", httpx.FieldError{Field: "cursor", Message: "is not a cursor this server issued"}))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, page)
}

func (a *API) liveUser(w http.ResponseWriter, r *http.Request) (users.User, bool) {
	id, ok := pathUserID(w, r)
	if !ok {
		return users.User{}, false
	}
	u, err := users.LiveByID(r.Context(), a.pool, id)
	return u, a.userError(w, r, err)
}

// userError answers for a users error and reports whether there was none.
func (a *API) userError(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, users.ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("No such user."))
	case errors.Is(err, users.ErrLastAdmin):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "last_admin", Detail: "This is the last admin: make another user admin first."})
	case errors.Is(err, users.ErrBadRole):
		httpx.Err(w, r, httpx.Invalid("The role is not valid.", httpx.FieldError{Field: "role", Message: "must be user or admin"}))
	default:
		httpx.Err(w, r, httpx.Internal(err))
	}
	return false
}

func pathUserID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("No such user."))
		return uuid.Nil, false
	}
	return id, true
}
