// Package users stores accounts: creation, lookup, roles with the last-admin guard,
// soft deletion that ends every way in, and the daily purge that hard-deletes
// accounts after their retention and scrubs them from the audit log.
package users

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/audit"
)

// Roles.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Retention is how long a soft-deleted account stays restorable before the purge
// removes it for good.
const Retention = 30 * 24 * time.Hour

var (
	// ErrNotFound means no such account (or, for live lookups, a deleted one).
	ErrNotFound = errors.New("users: not found")
	// ErrEmailTaken means another account already uses the address.
	ErrEmailTaken = errors.New("users: email address already in use")
	// ErrLastAdmin refuses a change that would leave no live admin.
	ErrLastAdmin = errors.New("users: this is the last admin; make another user admin first")
	// ErrBadEmail means the address is not a plain email address.
	ErrBadEmail = errors.New("users: not a valid email address")
	// ErrBadRole means the role is not user or admin.
	ErrBadRole = errors.New("users: role must be user or admin")
)

// User is an account. Admin-facing listings show these fields and nothing of the
// user's research data.
type User struct {
	ID          uuid.UUID  `json:"id"`
	Email       string     `json:"email"`
	DisplayName string     `json:"display_name,omitempty"`
	Role        string     `json:"role"`
	Timezone    string     `json:"timezone"`
	CreatedAt   time.Time  `json:"created_at"`
	LastLoginAt *time.Time `json:"last_login_at,omitempty"`
	DeletedAt   *time.Time `json:"deleted_at,omitempty"`
}

// Querier is a pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const columns = `id, email, coalesce(display_name, ''), role, timezone, created_at, last_login_at, deleted_at`

func scanUser(row pgx.Row) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.DisplayName, &u.Role, &u.Timezone, &u.CreatedAt, &u.LastLoginAt, &u.DeletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, ErrNotFound
	}
	return u, err
}

// NormalizeEmail lower-cases and checks a bare address ("Ann <a@x>" is refused).
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	addr, err := mail.ParseAddress(e)
	if err != nil || addr.Address != e || len(e) > 320 {
		return "", ErrBadEmail
	}
	return e, nil
}

// Create adds an account with the given role.
func Create(ctx context.Context, q Querier, email, role string) (User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	if role != RoleUser && role != RoleAdmin {
		return User{}, ErrBadRole
	}
	u, err := scanUser(q.QueryRow(ctx,
		`INSERT INTO users (email, role) VALUES ($1, $2) RETURNING `+columns, email, role))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return User{}, ErrEmailTaken
	}
	if err != nil {
		return User{}, fmt.Errorf("users: create: %w", err)
	}
	return u, nil
}

// LiveByEmail finds a live (not deleted) account by address.
func LiveByEmail(ctx context.Context, q Querier, email string) (User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, ErrNotFound
	}
	return scanUser(q.QueryRow(ctx, `SELECT `+columns+` FROM users WHERE email = $1 AND deleted_at IS NULL`, email))
}

// LiveByID finds a live account by id.
func LiveByID(ctx context.Context, q Querier, id uuid.UUID) (User, error) {
	return scanUser(q.QueryRow(ctx, `SELECT `+columns+` FROM users WHERE id = $1 AND deleted_at IS NULL`, id))
}

// ByID finds an account by id, deleted or not.
func ByID(ctx context.Context, q Querier, id uuid.UUID) (User, error) {
	return scanUser(q.QueryRow(ctx, `SELECT `+columns+` FROM users WHERE id = $1`, id))
}

// List returns every account, live first, oldest first.
func List(ctx context.Context, q Querier) ([]User, error) {
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM users ORDER BY deleted_at IS NOT NULL, created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("users: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (User, error) { return scanUser(row) })
	if err != nil {
		return nil, fmt.Errorf("users: list: %w", err)
	}
	return out, nil
}

// Count returns how many accounts exist, deleted ones included.
func Count(ctx context.Context, q Querier) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// ListLive returns every live (not deleted) account, by id.
func ListLive(ctx context.Context, q Querier) ([]User, error) {
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM users WHERE deleted_at IS NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("users: list live: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (User, error) { return scanUser(row) })
	if err != nil {
		return nil, fmt.Errorf("users: list live: %w", err)
	}
	return out, nil
}

// ErrNotSole means the instance does not have exactly one live account.
var ErrNotSole = errors.New("users: not exactly one live account")

// SoleLive returns the only live account; ErrNotSole when there are none or more
// than one.
func SoleLive(ctx context.Context, q Querier) (User, error) {
	rows, err := q.Query(ctx, `SELECT id FROM users WHERE deleted_at IS NULL LIMIT 2`)
	if err != nil {
		return User{}, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return User{}, err
	}
	if len(ids) != 1 {
		return User{}, ErrNotSole
	}
	return LiveByID(ctx, q, ids[0])
}

// SoleAdmin returns the id of the only live admin; ErrNotSole when there are none
// or more than one.
func SoleAdmin(ctx context.Context, q Querier) (uuid.UUID, error) {
	var id uuid.UUID
	err := q.QueryRow(ctx, `
		SELECT min(id::text)::uuid FROM users WHERE role = 'admin' AND deleted_at IS NULL
		HAVING count(*) = 1`).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotSole
	}
	return id, err
}

// ErrOnboarded means the instance has an account already, so it has its first admin.
var ErrOnboarded = errors.New("users: the instance already has its first account")

// CreateFirstAdminTx creates the instance's first account, an admin, inside tx; with
// any account in place it is ErrOnboarded. Concurrent calls queue on a lock, so the
// second finds the first's account.
func CreateFirstAdminTx(ctx context.Context, tx pgx.Tx, email string) (User, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lectern.onboarding'))`); err != nil {
		return User{}, err
	}
	n, err := Count(ctx, tx)
	if err != nil {
		return User{}, err
	}
	if n > 0 {
		return User{}, ErrOnboarded
	}
	return Create(ctx, tx, email, RoleAdmin)
}

// QueueTimezone queues on b the read of the account's time zone (an IANA name), into
// *dst when the batch runs; a missing account fails the batch with ErrNotFound.
func QueueTimezone(b *pgx.Batch, id uuid.UUID, dst *string) {
	b.Queue(`SELECT timezone FROM users WHERE id = $1`, id).QueryRow(func(row pgx.Row) error {
		err := row.Scan(dst)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		return err
	})
}

// lockAdmins serializes changes that could remove the last admin.
func lockAdmins(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lectern.users.admins'))`)
	return err
}

func liveAdmins(ctx context.Context, q Querier) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND deleted_at IS NULL`).Scan(&n)
	return n, err
}

// SetRole changes a live account's role, refusing to demote the last admin.
func SetRole(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID, role string) (User, error) {
	if role != RoleUser && role != RoleAdmin {
		return User{}, ErrBadRole
	}
	var out User
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := lockAdmins(ctx, tx); err != nil {
			return err
		}
		u, err := LiveByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if u.Role == RoleAdmin && role != RoleAdmin {
			n, err := liveAdmins(ctx, tx)
			if err != nil {
				return err
			}
			if n <= 1 {
				return ErrLastAdmin
			}
		}
		out, err = scanUser(tx.QueryRow(ctx,
			`UPDATE users SET role = $2, updated_at = now() WHERE id = $1 RETURNING `+columns, id, role))
		return err
	})
	return out, err
}

// SoftDelete marks a live account deleted and closes every way back in, in one
// transaction: sessions are revoked, unused sign-in links and pairing tokens deleted,
// the messenger pairing removed. Deleting the last admin is refused.
func SoftDelete(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID) (User, error) {
	var out User
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := lockAdmins(ctx, tx); err != nil {
			return err
		}
		u, err := LiveByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if u.Role == RoleAdmin {
			n, err := liveAdmins(ctx, tx)
			if err != nil {
				return err
			}
			if n <= 1 {
				return ErrLastAdmin
			}
		}
		if out, err = scanUser(tx.QueryRow(ctx,
			`UPDATE users SET deleted_at = now(), updated_at = now() WHERE id = $1 RETURNING `+columns, id)); err != nil {
			return err
		}
		for _, stmt := range []string{
			`UPDATE user_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`,
			`DELETE FROM magic_link_tokens WHERE user_id = $1`,
			`DELETE FROM messenger_pairing_tokens WHERE user_id = $1`,
			`DELETE FROM messenger_user_pairings WHERE user_id = $1`,
		} {
			if _, err := tx.Exec(ctx, stmt, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrLastAdmin) {
		return User{}, fmt.Errorf("users: delete: %w", err)
	}
	return out, err
}

// PurgeResult says what one purge run removed.
type PurgeResult struct {
	Users         int
	AuditScrubbed int64
}

// PurgeTxFunc deletes, in the purge's transaction, what the purged users leave
// behind that foreign keys would not delete right (papers.DeletePrivateOfUsersTx:
// a private paper would otherwise lose its discoverer and become everyone's).
type PurgeTxFunc func(ctx context.Context, tx pgx.Tx, userIDs []uuid.UUID) error

// Purge hard-deletes accounts soft-deleted before now minus retention, with every row
// they own (foreign keys cascade, and leftovers, which other areas own, are deleted by
// leftoversTx), and scrubs their audit entries, in one transaction (SPEC "Events" 3).
func Purge(ctx context.Context, pool *pgxpool.Pool, now time.Time, retention time.Duration, leftoversTx PurgeTxFunc) (PurgeResult, error) {
	var res PurgeResult
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx,
			`SELECT id FROM users WHERE deleted_at IS NOT NULL AND deleted_at < $1 FOR UPDATE`, now.Add(-retention))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil || len(ids) == 0 {
			return err
		}
		if res.AuditScrubbed, err = audit.ScrubUsersTx(ctx, tx, ids); err != nil {
			return err
		}
		if err := leftoversTx(ctx, tx, ids); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM users WHERE id = ANY($1)`, ids)
		res.Users = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return PurgeResult{}, fmt.Errorf("users: purge: %w", err)
	}
	return res, nil
}

// PurgeStaleCredentials deletes sign-in links a day past expiry or use, pairing
// tokens a day past expiry, and sessions 30 days past expiry or 7 days past
// revocation: none of them can sign anyone in any more.
func PurgeStaleCredentials(ctx context.Context, pool *pgxpool.Pool, now time.Time) (int64, error) {
	var total int64
	for _, stmt := range []string{
		`DELETE FROM magic_link_tokens WHERE expires_at < $1::timestamptz - interval '1 day' OR used_at < $1::timestamptz - interval '1 day'`,
		`DELETE FROM messenger_pairing_tokens WHERE expires_at < $1::timestamptz - interval '1 day'`,
		`DELETE FROM user_sessions WHERE expires_at < $1::timestamptz - interval '30 days' OR revoked_at < $1::timestamptz - interval '7 days'`,
	} {
		tag, err := pool.Exec(ctx, stmt, now)
		if err != nil {
			return total, fmt.Errorf("users: purge stale credentials: %w", err)
		}
		total += tag.RowsAffected()
	}
	return total, nil
}

// Profile is what a user may change of their own account; nil leaves a field.
type Profile struct {
	DisplayName *string
	Timezone    *string
}

// ErrBadProfile is a display name longer than 200 characters or a time zone
// that is not an IANA name.
var ErrBadProfile = errors.New("users: bad profile")

// UpdateProfile changes a live account's display name and time zone.
func UpdateProfile(ctx context.Context, q Querier, id uuid.UUID, p Profile) (User, error) {
	var name, tz any
	if p.DisplayName != nil {
		n := strings.TrimSpace(*p.DisplayName)
		if utf8.RuneCountInString(n) > 200 {
			return User{}, fmt.Errorf("%w: the display name is longer than 200 characters", ErrBadProfile)
		}
		name = n
	}
	if p.Timezone != nil {
		z := strings.TrimSpace(*p.Timezone)
		if _, err := time.LoadLocation(z); err != nil || z == "" || z == "Local" || len(z) > 64 {
			return User{}, fmt.Errorf("%w: %q is not a time zone name such as Europe/Berlin", ErrBadProfile, z)
		}
		tz = z
	}
	return scanUser(q.QueryRow(ctx, `
		UPDATE users SET display_name = CASE WHEN $2::text IS NULL THEN display_name ELSE nullif($2::text, '') END,
		                 timezone = coalesce($3::text, timezone), updated_at = now()
		 WHERE id = $1 AND deleted_at IS NULL
		RETURNING `+columns, id, name, tz))
}
