package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

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
	if err := users.StartSession(ctx, q, users.NewSession{UserID: userID, TokenHash: hash, ExpiresAt: expires,
		Now: s.now(), UserAgent: ua, IP: ip}); err != nil {
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
	sess, err := users.SessionByToken(ctx, s.pool, hashToken(token), now.Add(-SessionGrace))
	if errors.Is(err, users.ErrNotFound) {
		return Caller{}, time.Time{}, false, errNoSession
	}
	if err != nil {
		return Caller{}, time.Time{}, false, fmt.Errorf("auth: resolve session: %w", err)
	}
	c.SessionID, c.UserID, c.Role, expires = sess.ID, sess.UserID, sess.Role, sess.ExpiresAt
	// Renew only a session that has not expired: one in its grace window keeps its
	// expiry, so the grace never extends itself.
	if expires.After(now) && expires.Sub(now) < SessionTTL-sessionRenewEvery {
		expires = now.Add(SessionTTL)
		if err := users.RenewSession(ctx, s.pool, c.SessionID, expires, now); err != nil {
			return Caller{}, time.Time{}, false, fmt.Errorf("auth: renew session: %w", err)
		}
		renewed = true
	}
	return c, expires, renewed, nil
}

// revokeSession ends a session at once.
func (s *Service) revokeSession(ctx context.Context, id uuid.UUID) error {
	if err := users.RevokeSession(ctx, s.pool, id, s.now()); err != nil {
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
