// Package audit writes and reads the append-only security log (SPEC "Events" 2-3):
// best-effort writes with metadata capped at 4 KB, cursor-paginated reads for admins,
// and the one sanctioned mutation, the scrub of hard-deleted users.
package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MaxMetadataBytes caps an entry's metadata (SPEC Limits).
const MaxMetadataBytes = 4096

// Actions the host records. Keep names lowercase and dotted; the column checks them.
const (
	ActionAPIKeyInvalid     = "auth.api_key.invalid"
	ActionSessionMissing    = "auth.session.missing"
	ActionOverrideRefused   = "auth.owner_override.refused"
	ActionMagicLinkRequest  = "auth.magic_link.request"
	ActionMagicLinkVerify   = "auth.magic_link.verify"
	ActionMagicLinkRejected = "auth.magic_link.rejected"
	ActionAPIKeyLogin       = "auth.api_key_login"
	ActionLogout            = "auth.logout"
	ActionUserCreate        = "user.create"
	ActionUserDelete        = "user.delete"
	ActionUserPurge         = "user.purge"
	ActionUserRoleChange    = "admin.user.role_change"
	ActionAdminConfigChange = "admin.config.change"
	ActionConfigKeyRotate   = "admin.config.rotate_key"
	ActionCSRFRefused       = "auth.csrf.refused"
)

// PIIKeys are metadata keys the purge strips from a hard-deleted user's entries.
var PIIKeys = []string{"ip", "email", "user_agent", "target_email"}

// Entry is one row of audit_log.
type Entry struct {
	ID        int64          `json:"id"`
	UserID    string         `json:"user_id,omitempty"`
	Action    string         `json:"action"`
	Resource  string         `json:"resource"`
	Timestamp time.Time      `json:"timestamp"`
	Metadata  map[string]any `json:"metadata"`
}

// Log writes and reads audit_log.
type Log struct {
	pool  *pgxpool.Pool
	log   *slog.Logger
	flood *flood
}

// New returns a Log on pool; write failures are reported to logger.
func New(pool *pgxpool.Pool, logger *slog.Logger) *Log {
	l := &Log{pool: pool, log: logger}
	l.flood = newFlood(floodWindow, floodBurst, floodMaxSources, floodBudget, time.Now, l.writeSummaries)
	return l
}

// Record appends an entry. It is best effort: a failure is logged and never reaches
// the caller, so an audit outage cannot abort the request being audited. userID is
// uuid.Nil when no user is known.
//
// Text is made storable first: NUL bytes and invalid UTF-8, which PostgreSQL text
// refuses, are dropped or replaced, and the resource is cut at a character
// boundary, so no input can make the insert fail. Unauthenticated auth.* events
// are sampled per source (see flood.go): every attempt is counted, but a flood
// writes a bounded number of rows.
func (l *Log) Record(ctx context.Context, userID uuid.UUID, action, resource string, metadata map[string]any) {
	if userID == uuid.Nil && strings.HasPrefix(action, "auth.") {
		if !l.flood.admit(action, sourceOf(metadata)) {
			return
		}
	}
	l.insert(ctx, userID, action, resource, metadata)
}

func (l *Log) insert(ctx context.Context, userID uuid.UUID, action, resource string, metadata map[string]any) {
	var uid *string
	if userID != uuid.Nil {
		s := userID.String()
		uid = &s
	}
	meta := capMetadata(metadata)
	// The request may be ending; the entry should still land.
	writeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// The database's own measure of the 4 KB check (jsonb's text adds spaces Go's
	// encoding has not) decides last: an entry still too large becomes the marker.
	_, err := l.pool.Exec(writeCtx, `
		INSERT INTO audit_log (user_id, action, resource, metadata)
		VALUES ($1, $2, $3, CASE WHEN octet_length($4::jsonb::text) <= $5 THEN $4::jsonb
		                         ELSE jsonb_build_object('truncated', true) END)`,
		uid, action, truncate(clean(resource), maxResourceChars), meta, MaxMetadataBytes)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
		// Input the database still refused (a value cleanValue does not know held a
		// NUL): the event is kept without its details rather than lost.
		_, err = l.pool.Exec(writeCtx, `INSERT INTO audit_log (user_id, action, resource, metadata) VALUES ($1, $2, '', $3)`,
			uid, action, []byte(`{"unstorable": true}`))
	}
	if err != nil {
		l.log.ErrorContext(ctx, "audit write failed", "action", action, "resource", clean(resource), "error", err)
	}
}

// maxResourceChars is the resource column's limit, in characters.
const maxResourceChars = 512

// capMetadata returns metadata as JSON of at most MaxMetadataBytes, with every
// string made storable (clean). Oversized metadata is replaced by a marker that
// keeps its size and, when small, the ip.
func capMetadata(metadata map[string]any) []byte {
	if metadata == nil {
		return []byte("{}")
	}
	m, _ := cleanValue(metadata).(map[string]any)
	b, err := json.Marshal(m)
	if err == nil && len(b) <= MaxMetadataBytes {
		return b
	}
	marker := map[string]any{"truncated": true}
	if err == nil {
		marker["original_bytes"] = len(b)
	}
	if ip, ok := m["ip"].(string); ok && len(ip) <= 64 {
		marker["ip"] = ip
	}
	out, _ := json.Marshal(marker)
	return out
}

// clean makes s storable in a PostgreSQL text or jsonb value: it drops NUL bytes
// (text cannot hold them, jsonb refuses \u0000) and replaces invalid UTF-8.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// cleanValue applies clean to every string, key and nested value of v.
func cleanValue(v any) any {
	switch v := v.(type) {
	case string:
		return clean(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[clean(k)] = cleanValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cleanValue(x)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = clean(x)
		}
		return out
	}
	return v
}

// truncate cuts s to at most n characters, never inside one.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// ListParams selects a page of the log, newest first.
type ListParams struct {
	// Limit is the page size, 1 to 200. Default 50.
	Limit int
	// Cursor continues after the last entry of the previous page; "" starts at the
	// newest entry.
	Cursor string
	// ActionPrefix keeps only actions starting with it ("auth.").
	ActionPrefix string
}

// Page is one page of entries and the cursor of the next, "" at the end.
type Page struct {
	Items      []Entry `json:"items"`
	NextCursor string  `json:"next_cursor,omitempty"`
}

// ErrBadCursor is returned for a cursor this package did not issue.
var ErrBadCursor = errors.New("audit: invalid cursor")

// List returns a page of entries, newest first.
func (l *Log) List(ctx context.Context, p ListParams) (Page, error) {
	if p.Limit == 0 {
		p.Limit = 50
	}
	if p.Limit < 1 || p.Limit > 200 {
		return Page{}, fmt.Errorf("audit: limit must be from 1 to 200")
	}
	before := int64(1<<63 - 1)
	if p.Cursor != "" {
		id, err := decodeCursor(p.Cursor)
		if err != nil {
			return Page{}, err
		}
		before = id
	}
	rows, err := l.pool.Query(ctx, `
		SELECT id, coalesce(user_id, ''), action, resource, "timestamp", metadata
		  FROM audit_log
		 WHERE id < $1 AND ($2 = '' OR starts_with(action, $2))
		 ORDER BY id DESC
		 LIMIT $3`, before, p.ActionPrefix, p.Limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("audit: list: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := row.Scan(&e.ID, &e.UserID, &e.Action, &e.Resource, &e.Timestamp, &e.Metadata)
		return e, err
	})
	if err != nil {
		return Page{}, fmt.Errorf("audit: list: %w", err)
	}
	page := Page{Items: items}
	if len(items) > p.Limit {
		page.Items = items[:p.Limit]
		page.NextCursor = encodeCursor(page.Items[p.Limit-1].ID)
	}
	if page.Items == nil {
		page.Items = []Entry{}
	}
	return page, nil
}

func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("audit:" + strconv.FormatInt(id, 10)))
}

func decodeCursor(s string) (int64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, ErrBadCursor
	}
	n, ok := strings.CutPrefix(string(raw), "audit:")
	if !ok {
		return 0, ErrBadCursor
	}
	id, err := strconv.ParseInt(n, 10, 64)
	if err != nil || id < 1 {
		return 0, ErrBadCursor
	}
	return id, nil
}

// ScrubUsersTx is the purge's sanctioned mutation (SPEC "Events" 3): for the given
// hard-deleted users it nulls user_id and strips PII metadata keys (PIIKeys),
// keeping action, resource and timestamp. It calls audit_log_scrub (migration
// 0008), which the audit log's owner runs: it disables the no-update rule, scrubs
// and enables the rule again inside tx, so no other session ever sees the log
// mutable, and the host's own role never needs the right to disable a rule. The
// caller commits.
func ScrubUsersTx(ctx context.Context, tx pgx.Tx, userIDs []uuid.UUID) (int64, error) {
	if len(userIDs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(userIDs))
	for i, id := range userIDs {
		ids[i] = id.String()
	}
	var n int64
	if err := tx.QueryRow(ctx, `SELECT audit_log_scrub($1)`, ids).Scan(&n); err != nil {
		return 0, fmt.Errorf("audit: scrub: %w", err)
	}
	return n, nil
}

// Enforcement says why the audit rules cannot be enforced against the role the
// pool connects as ("" when they can): a superuser bypasses every check, and the
// table's owner may disable its rules. The host warns at start when it is not "".
func Enforcement(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var super, owner bool
	var role string
	err := pool.QueryRow(ctx, `
		SELECT current_user, r.rolsuper, pg_has_role(current_user, c.relowner, 'USAGE')
		  FROM pg_roles r, pg_class c
		 WHERE r.rolname = current_user AND c.oid = 'audit_log'::regclass`).Scan(&role, &super, &owner)
	if err != nil {
		return "", fmt.Errorf("audit: enforcement: %w", err)
	}
	switch {
	case super:
		return fmt.Sprintf("the database role %s is a superuser, which can disable the audit log's append-only rules; connect as a role without SUPERUSER (docs/database.md)", role), nil
	case owner:
		return fmt.Sprintf("the database role %s owns audit_log and can disable its append-only rules; run the migrations once as a superuser to hand it to lectern_audit (docs/database.md)", role), nil
	}
	return "", nil
}
