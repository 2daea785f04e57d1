package users

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// This file holds the ways into an account: browser sessions (user_sessions) and
// single-use sign-in links (magic_link_tokens). Package auth decides when they are
// made and honoured; this package alone stores them. Tokens are stored as digests.

// NewSession is a session to store.
type NewSession struct {
	UserID    uuid.UUID
	TokenHash []byte
	ExpiresAt time.Time
	Now       time.Time
	UserAgent string
	IP        any // the client address as text, or nil when unknown
}

// StartSession stores a session and records the sign-in on the account.
func StartSession(ctx context.Context, q Querier, s NewSession) error {
	if _, err := q.Exec(ctx, `
		INSERT INTO user_sessions (user_id, token_hash, expires_at, last_seen_at, user_agent, ip)
		VALUES ($1, $2, $3, $4, $5, $6)`, s.UserID, s.TokenHash, s.ExpiresAt, s.Now, s.UserAgent, s.IP); err != nil {
		return fmt.Errorf("users: start session: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE users SET last_login_at = $2 WHERE id = $1`, s.UserID, s.Now); err != nil {
		return fmt.Errorf("users: start session: %w", err)
	}
	return nil
}

// Session is a stored session that may still resolve.
type Session struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	Role      string
	ExpiresAt time.Time
}

// SessionByToken returns the session with the token digest that is neither revoked
// nor deleted, of a live account, and expires after notBefore; ErrNotFound otherwise.
func SessionByToken(ctx context.Context, q Querier, tokenHash []byte, notBefore time.Time) (Session, error) {
	var s Session
	err := q.QueryRow(ctx, `
		SELECT s.id, s.user_id, u.role, s.expires_at
		  FROM user_sessions s
		  JOIN users u ON u.id = s.user_id
		 WHERE s.token_hash = $1
		   AND s.revoked_at IS NULL AND s.deleted_at IS NULL AND u.deleted_at IS NULL
		   AND s.expires_at > $2`, tokenHash, notBefore).
		Scan(&s.ID, &s.UserID, &s.Role, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("users: session: %w", err)
	}
	return s, nil
}

// RenewSession moves a live session's expiry to expires and marks it seen at now.
func RenewSession(ctx context.Context, q Querier, id uuid.UUID, expires, now time.Time) error {
	if _, err := q.Exec(ctx,
		`UPDATE user_sessions SET expires_at = $2, last_seen_at = $3 WHERE id = $1 AND revoked_at IS NULL`,
		id, expires, now); err != nil {
		return fmt.Errorf("users: renew session: %w", err)
	}
	return nil
}

// RevokeSession ends a session at now; an ended one stays as it was.
func RevokeSession(ctx context.Context, q Querier, id uuid.UUID, now time.Time) error {
	if _, err := q.Exec(ctx, `UPDATE user_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, now); err != nil {
		return fmt.Errorf("users: revoke session: %w", err)
	}
	return nil
}

// CreateSignInToken stores a single-use sign-in link's digest for the account.
// purpose is "sign_in" or "invite".
func CreateSignInToken(ctx context.Context, q Querier, tokenHash []byte, userID uuid.UUID, purpose string, now, expires time.Time) error {
	if _, err := q.Exec(ctx, `
		INSERT INTO magic_link_tokens (token_hash, user_id, purpose, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, tokenHash, userID, purpose, now, expires); err != nil {
		return fmt.Errorf("users: store sign-in link: %w", err)
	}
	return nil
}

// ConsumeSignInToken marks an unused, unexpired sign-in link used at now and returns
// its account's id, atomically, so a link works exactly once; ErrNotFound for an
// unknown, used or expired one.
func ConsumeSignInToken(ctx context.Context, q Querier, tokenHash []byte, now time.Time) (uuid.UUID, error) {
	var userID uuid.UUID
	err := q.QueryRow(ctx, `
		UPDATE magic_link_tokens SET used_at = $2
		 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
		RETURNING user_id`, tokenHash, now).Scan(&userID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("users: consume sign-in link: %w", err)
	}
	return userID, nil
}
