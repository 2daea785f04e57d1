package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/users"
)

// errNoSession means the cookie is missing or names no usable session.
var errNoSession = errors.New("auth: no valid session")

// createSession stores a new session for userID and returns the cookie value.
func (s *Service) createSession(ctx context.Context, q users.Querier, userID uuid.UUID, r *http.Request) (string, time.Time, error) {
	tok, hash := newToken()
	expires := s.now().Add(SessionTTL)
	var ip any
	if a := ClientIP(r.Context()); a.IsValid() {
		ip = a.String()
	}
	ua := r.UserAgent()
	if len(ua) > 512 {
		ua = ua[:512]
	}
	_, err := q.Exec(ctx, `
		INSERT INTO user_sessions (user_id, token_hash, expires_at, last_seen_at, user_agent, ip)
		VALUES ($1, $2, $3, $4, $5, $6)`, userID, hash, expires, s.now(), ua, ip)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("auth: create session: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE users SET last_login_at = $2 WHERE id = $1`, userID, s.now()); err != nil {
		return "", time.Time{}, fmt.Errorf("auth: create session: %w", err)
	}
	return tok, expires, nil
}

// resolveSession returns the caller of a session cookie value (SPEC "Session
// validity"): a session up to SessionGrace past its expiry still resolves, without
// renewal; a revoked session, a deleted session or one of a deleted user never does.
// A live session is renewed at most once a day; renewed reports whether it was.
func (s *Service) resolveSession(ctx context.Context, token string) (c Caller, expires time.Time, renewed bool, err error) {
	if token == "" || len(token) > 128 {
		return Caller{}, time.Time{}, false, errNoSession
	}
	now := s.now()
	err = s.pool.QueryRow(ctx, `
		SELECT s.id, s.user_id, u.role, s.expires_at
		  FROM user_sessions s
		  JOIN users u ON u.id = s.user_id
		 WHERE s.token_hash = $1
		   AND s.revoked_at IS NULL AND s.deleted_at IS NULL AND u.deleted_at IS NULL
		   AND s.expires_at > $2`, hashToken(token), now.Add(-SessionGrace)).
		Scan(&c.SessionID, &c.UserID, &c.Role, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Caller{}, time.Time{}, false, errNoSession
	}
	if err != nil {
		return Caller{}, time.Time{}, false, fmt.Errorf("auth: resolve session: %w", err)
	}
	// Renew only a session that has not expired: one in its grace window keeps its
	// expiry, so the grace never extends itself.
	if expires.After(now) && expires.Sub(now) < SessionTTL-sessionRenewEvery {
		expires = now.Add(SessionTTL)
		if _, err := s.pool.Exec(ctx,
			`UPDATE user_sessions SET expires_at = $2, last_seen_at = $3 WHERE id = $1 AND revoked_at IS NULL`,
			c.SessionID, expires, now); err != nil {
			return Caller{}, time.Time{}, false, fmt.Errorf("auth: renew session: %w", err)
		}
		renewed = true
	}
	return c, expires, renewed, nil
}

// revokeSession ends a session at once.
func (s *Service) revokeSession(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `UPDATE user_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, s.now())
	if err != nil {
		return fmt.Errorf("auth: revoke session: %w", err)
	}
	return nil
}

// setSessionCookie writes the session cookie: HttpOnly, SameSite=Lax, Secure in
// production and behind HTTPS.
func (s *Service) setSessionCookie(w http.ResponseWriter, token string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name:     SessionCookie,
		Value:    token,
		Path:     "/",
		Expires:  expires,
		MaxAge:   int(time.Until(expires).Seconds()),
		HttpOnly: true,
		Secure:   s.secure,
		SameSite: http.SameSiteLaxMode,
	})
}

func (s *Service) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
}

func sessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}
