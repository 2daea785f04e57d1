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

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	pool *pgxpool.Pool
	log  *slog.Logger
}

// New returns a Log on pool; write failures are reported to logger.
func New(pool *pgxpool.Pool, logger *slog.Logger) *Log {
	return &Log{pool: pool, log: logger}
}

// Record appends an entry. It is best effort: a failure is logged and never reaches
// the caller, so an audit outage cannot abort the request being audited. userID is
// uuid.Nil when no user is known.
func (l *Log) Record(ctx context.Context, userID uuid.UUID, action, resource string, metadata map[string]any) {
	var uid *string
	if userID != uuid.Nil {
		s := userID.String()
		uid = &s
	}
	meta := capMetadata(metadata)
	// The request may be ending; the entry should still land.
	writeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := l.pool.Exec(writeCtx,
		`INSERT INTO audit_log (user_id, action, resource, metadata) VALUES ($1, $2, $3, $4)`,
		uid, action, truncate(resource, 512), meta)
	if err != nil {
		l.log.ErrorContext(ctx, "audit write failed", "action", action, "resource", resource, "error", err)
	}
}

// capMetadata returns metadata as JSON of at most MaxMetadataBytes. Oversized
// metadata is replaced by a marker that keeps its size and, when small, the ip.
func capMetadata(metadata map[string]any) []byte {
	if metadata == nil {
		return []byte("{}")
	}
	b, err := json.Marshal(metadata)
	if err == nil && len(b) <= MaxMetadataBytes {
		return b
	}
	marker := map[string]any{"truncated": true}
	if err == nil {
		marker["original_bytes"] = len(b)
	}
	if ip, ok := metadata["ip"].(string); ok && len(ip) <= 64 {
		marker["ip"] = ip
	}
	out, _ := json.Marshal(marker)
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
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
// hard-deleted users it nulls user_id and strips PII metadata keys, keeping action,
// resource and timestamp. It disables the no-update rule and enables it again inside
// tx, so no other session ever sees the log mutable; the caller commits.
func ScrubUsersTx(ctx context.Context, tx pgx.Tx, userIDs []uuid.UUID) (int64, error) {
	if len(userIDs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(userIDs))
	for i, id := range userIDs {
		ids[i] = id.String()
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE audit_log DISABLE RULE audit_log_no_update`); err != nil {
		return 0, fmt.Errorf("audit: scrub: %w", err)
	}
	tag, err := tx.Exec(ctx, `
		UPDATE audit_log
		   SET user_id = NULL, metadata = metadata - $2::text[]
		 WHERE user_id = ANY($1)`, ids, PIIKeys)
	if err != nil {
		return 0, fmt.Errorf("audit: scrub: %w", err)
	}
	// Entries where someone else acted on the deleted user keep their actor and lose
	// what identified the subject beyond its id.
	if _, err := tx.Exec(ctx, `
		UPDATE audit_log SET metadata = metadata - 'target_email'
		 WHERE metadata->>'target_user_id' = ANY($1)`, ids); err != nil {
		return 0, fmt.Errorf("audit: scrub: %w", err)
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE audit_log ENABLE RULE audit_log_no_update`); err != nil {
		return 0, fmt.Errorf("audit: scrub: %w", err)
	}
	return tag.RowsAffected(), nil
}
