package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/users"
)

// Me is what GET /api/me answers.
type Me struct {
	ID          uuid.UUID `json:"id"`
	Email       string    `json:"email"`
	Role        string    `json:"role"`
	DisplayName string    `json:"display_name,omitempty"`
	Timezone    string    `json:"timezone"`
}

func meOf(u users.User) Me {
	return Me{ID: u.ID, Email: u.Email, Role: u.Role, DisplayName: u.DisplayName, Timezone: u.Timezone}
}

// HandleMe answers the caller's own account.
func (s *Service) HandleMe(w http.ResponseWriter, r *http.Request) {
	c := CallerFrom(r.Context())
	u, err := users.LiveByID(r.Context(), s.pool, c.UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, meOf(u))
}

// HandleUpdateMe answers PATCH /api/me {"display_name"?, "timezone"?}: the caller
// changes their own profile. The time zone (an IANA name) is the one schedules,
// reminders and analytics use.
func (s *Service) HandleUpdateMe(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DisplayName *string `json:"display_name"`
		Timezone    *string `json:"timezone"`
	}
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	u, err := users.UpdateProfile(r.Context(), s.pool, CallerFrom(r.Context()).UserID,
		users.Profile{DisplayName: body.DisplayName, Timezone: body.Timezone})
	switch {
	case errors.Is(err, users.ErrBadProfile):
		field := "display_name"
		if strings.Contains(err.Error(), "time zone") {
			field = "timezone"
		}
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), users.ErrBadProfile.Error()), ": ")
		httpx.Err(w, r, httpx.Invalid("The profile was not saved: "+msg+".", httpx.FieldError{Field: field, Message: msg}))
		return
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, meOf(u))
}

type emailBody struct {
	Email string `json:"email"`
}

// HandleMagicLinkRequest sends a sign-in link to a live account. It always answers
// 202 with the same body whether or not the address has an account, and sends the
// mail in the background so the timing does not tell either.
func (s *Service) HandleMagicLinkRequest(w http.ResponseWriter, r *http.Request) {
	if ok, wait := s.linkPerIP.Allow(ClientIP(r.Context()).String()); !ok {
		s.linkPerIP.Refuse(w, r, wait)
		return
	}
	var body emailBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	email, err := users.NormalizeEmail(body.Email)
	if err != nil {
		httpx.Err(w, r, httpx.Invalid("The email address is not valid.",
			httpx.FieldError{Field: "email", Message: "is not an email address"}))
		return
	}
	if ok, wait := s.linkPerEmail.Allow(email); !ok {
		s.linkPerEmail.Refuse(w, r, wait)
		return
	}
	u, err := users.LiveByEmail(r.Context(), s.pool, email)
	switch {
	case errors.Is(err, users.ErrNotFound):
		s.record(r, uuid.Nil, audit.ActionMagicLinkRequest, map[string]any{"known": false})
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	default:
		s.record(r, u.ID, audit.ActionMagicLinkRequest, map[string]any{"known": true})
		ctx := context.WithoutCancel(r.Context())
		s.background(func() {
			if err := s.SendSignInLink(ctx, u, "sign_in"); err != nil {
				s.log.ErrorContext(ctx, "send sign-in link", "user_id", u.ID, "error", err)
			}
		})
	}
	httpx.JSON(w, http.StatusAccepted, map[string]string{
		"status": "accepted",
		"detail": "If this address belongs to an account, a sign-in link is on its way.",
	})
}

// SendSignInLink creates a single-use link for u and mails it. purpose "invite"
// lasts InviteTTL, "sign_in" MagicLinkTTL.
func (s *Service) SendSignInLink(ctx context.Context, u users.User, purpose string) error {
	ttl := MagicLinkTTL
	subject := "Your Lectern sign-in link"
	if purpose == "invite" {
		ttl = InviteTTL
		subject = "You are invited to Lectern"
	}
	tok, hash := newToken()
	now := s.now()
	if err := users.CreateSignInToken(ctx, s.pool, hash, u.ID, purpose, now, now.Add(ttl)); err != nil {
		return fmt.Errorf("auth: store sign-in link: %w", err)
	}
	link := s.cfg.PublicBaseURL + "/api/auth/verify?token=" + url.QueryEscape(tok)
	body := fmt.Sprintf("Open this link to sign in to Lectern:\n\n%s\n\nIt works once and expires in %s.\nIf you did not ask for it, ignore this message.\n",
		link, humanDuration(ttl))
	return s.mail.Send(ctx, mail.Message{To: u.Email, Subject: subject, Body: body,
		LogFields: map[string]string{"magic_link": link}})
}

func humanDuration(d time.Duration) string {
	if d >= time.Hour {
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d minutes", int(d.Minutes()))
}

// HandleVerify turns a sign-in link into a session: the token is consumed atomically,
// so it works exactly once. Browsers are sent on to the dashboard; API clients get
// their account as JSON.
func (s *Service) HandleVerify(w http.ResponseWriter, r *http.Request) {
	if ok, wait := s.verifyPerIP.Allow(ClientIP(r.Context()).String()); !ok {
		s.verifyPerIP.Refuse(w, r, wait)
		return
	}
	tok := r.URL.Query().Get("token")
	invalid := httpx.BadRequest("Invalid or expired sign-in link. Ask for a new one.")
	invalid.Code = "invalid_token"
	if len(tok) < 16 || len(tok) > 128 {
		s.record(r, uuid.Nil, audit.ActionMagicLinkRejected, map[string]any{"reason": "malformed"})
		httpx.Err(w, r, invalid)
		return
	}
	in, err := s.signIn(r, func(tx pgx.Tx) (users.User, error) {
		userID, err := users.ConsumeSignInToken(r.Context(), tx, hashToken(tok), s.now())
		if err != nil {
			return users.User{}, err
		}
		return users.LiveByID(r.Context(), tx, userID)
	})
	if errors.Is(err, users.ErrNotFound) {
		s.record(r, uuid.Nil, audit.ActionMagicLinkRejected, map[string]any{"reason": "unknown_used_or_expired"})
		httpx.Err(w, r, invalid)
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	s.record(r, in.user.ID, audit.ActionMagicLinkVerify, nil)
	s.setSessionCookie(w, in.token, in.expires)
	if wantsHTML(r) {
		http.Redirect(w, r, s.cfg.PublicBaseURL+"/", http.StatusSeeOther)
		return
	}
	httpx.JSON(w, http.StatusOK, meOf(in.user))
}

func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// HandleLogout revokes the caller's session and clears the cookie.
func (s *Service) HandleLogout(w http.ResponseWriter, r *http.Request) {
	c := CallerFrom(r.Context())
	if c.SessionID != uuid.Nil {
		if err := s.revokeSession(r.Context(), c.SessionID); err != nil {
			httpx.Err(w, r, httpx.Internal(err))
			return
		}
		s.record(r, c.UserID, audit.ActionLogout, nil)
	}
	s.clearSessionCookie(w)
	w.WriteHeader(http.StatusNoContent)
}

// HandleAPIKeyLogin gives the operator of a single-user install a browser session
// without SMTP: with a valid ops key in X-API-Key, and only while the instance has
// exactly one live account and it is an admin. With more accounts the ops key must
// not become anyone's session: they sign in by magic link.
func (s *Service) HandleAPIKeyLogin(w http.ResponseWriter, r *http.Request) {
	if ok, wait := s.loginPerIP.Allow(ClientIP(r.Context()).String()); !ok {
		s.loginPerIP.Refuse(w, r, wait)
		return
	}
	given := r.Header.Get(HeaderAPIKey)
	if given == "" {
		httpx.Err(w, r, httpx.Unauthorized("missing_api_key", "Send the ops key in X-API-Key."))
		return
	}
	if !s.cfg.ServiceAPIKey.IsSet() || !keysEqual(given, s.cfg.ServiceAPIKey.Value()) {
		s.record(r, uuid.Nil, audit.ActionAPIKeyInvalid, nil)
		httpx.Err(w, r, httpx.Unauthorized("invalid_api_key", "The X-API-Key value is not valid."))
		return
	}
	in, err := s.signIn(r, func(tx pgx.Tx) (users.User, error) {
		u, err := users.SoleLive(r.Context(), tx)
		if errors.Is(err, users.ErrNotSole) {
			return users.User{}, errNotSingleUser
		}
		if err == nil && u.Role != users.RoleAdmin {
			err = errNotSingleUser
		}
		return u, err
	})
	if errors.Is(err, errNotSingleUser) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "not_single_user",
			Detail: "API-key sign-in works only while the instance has exactly one account, its admin. Sign in by magic link."})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	s.record(r, in.user.ID, audit.ActionAPIKeyLogin, nil)
	s.setSessionCookie(w, in.token, in.expires)
	httpx.JSON(w, http.StatusOK, meOf(in.user))
}

var errNotSingleUser = errors.New("auth: not a single-user install")

// HandleOnboardingStatus answers GET /api/onboarding: {"needed": true} while the
// instance has no account yet, so a dashboard opens the onboarding wizard. It is
// public, like REFERENCE's setup-status probe, and says nothing more.
func (s *Service) HandleOnboardingStatus(w http.ResponseWriter, r *http.Request) {
	n, err := users.Count(r.Context(), s.pool)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]bool{"needed": n == 0})
}

// HandleOnboardingAdmin creates the first account, an admin, and signs it in. It
// works only while no account exists at all, and only from the machine itself
// (a loopback client address that no untrusted proxy passed on, SourceIP.IsLocal) or
// with the ops key, so a fresh instance reachable from the network cannot be claimed
// by a stranger.
func (s *Service) HandleOnboardingAdmin(w http.ResponseWriter, r *http.Request) {
	if ok, wait := s.loginPerIP.Allow(ClientIP(r.Context()).String()); !ok {
		s.loginPerIP.Refuse(w, r, wait)
		return
	}
	local := s.ip.IsLocal(r)
	keyed := s.cfg.ServiceAPIKey.IsSet() && keysEqual(r.Header.Get(HeaderAPIKey), s.cfg.ServiceAPIKey.Value())
	if !local && !keyed {
		httpx.Err(w, r, httpx.Forbidden("onboarding_not_local",
			"Create the first admin from the machine Lectern runs on, or send the ops key in X-API-Key."))
		return
	}
	var body emailBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	if _, err := users.NormalizeEmail(body.Email); err != nil {
		httpx.Err(w, r, httpx.Invalid("The email address is not valid.",
			httpx.FieldError{Field: "email", Message: "is not an email address"}))
		return
	}
	in, err := s.signIn(r, func(tx pgx.Tx) (users.User, error) {
		// One onboarding at a time; the second finds the first's account.
		return users.CreateFirstAdminTx(r.Context(), tx, body.Email)
	})
	if errors.Is(err, users.ErrOnboarded) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "already_onboarded",
			Detail: "This instance already has its admin. Sign in instead."})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	s.record(r, in.user.ID, audit.ActionUserCreate, map[string]any{"via": "onboarding", "role": users.RoleAdmin, "target_user_id": in.user.ID.String()})
	s.setSessionCookie(w, in.token, in.expires)
	httpx.JSON(w, http.StatusCreated, meOf(in.user))
}

// signedIn is a session just created.
type signedIn struct {
	user    users.User
	token   string
	expires time.Time
}

// signIn finds the user with who, inside one transaction that also creates their
// session, so a consumed link or a new account never exists without its session.
func (s *Service) signIn(r *http.Request, who func(tx pgx.Tx) (users.User, error)) (signedIn, error) {
	var in signedIn
	err := pgx.BeginFunc(r.Context(), s.pool, func(tx pgx.Tx) error {
		var err error
		if in.user, err = who(tx); err != nil {
			return err
		}
		in.token, in.expires, err = s.createSession(r.Context(), tx, in.user.ID, r)
		return err
	})
	return in, err
}
