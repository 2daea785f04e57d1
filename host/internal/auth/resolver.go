package auth

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/users"
)

// Resolver is how a route establishes its caller. Every route declares exactly one.
type Resolver int

const (
	// Public routes need no identity: health, the API description, sign-in itself.
	Public Resolver = iota + 1
	// OpsKey routes need the ops key (SERVICE_API_KEY in X-API-Key) and carry no user.
	OpsKey
	// Strict is SPEC's current_user_id_strict: a session, else 401. It never reads
	// X-Owner-User-Id. The default for user-data routes.
	Strict
	// WithOwnerOverride is SPEC's current_user_id_with_owner_override: a session
	// first, else a verified X-Owner-User-Id, else no identity (the handler decides;
	// an ops-key-only caller has Caller.OpsKey set).
	WithOwnerOverride
	// StrictWithOwnerOverride is SPEC's current_user_id_strict_with_owner_override
	// (get_current_user_id): like WithOwnerOverride, but 401 when no user resolves.
	// For routes the bot calls per user.
	StrictWithOwnerOverride
	// AdminSession is Strict plus role admin (403 otherwise). The ops key is never
	// an admin, and neither is an owner override.
	AdminSession
	// InfraKey is /infra-events' own: a source address inside
	// INFRA_INGEST_ALLOWED_CIDRS (else 403) and INFRA_INGEST_KEY in
	// X-Infra-Ingest-Key (else 401). It carries no user (infrakey_http.go).
	InfraKey
)

func (r Resolver) String() string {
	switch r {
	case Public:
		return "public"
	case OpsKey:
		return "ops_key"
	case Strict:
		return "current_user_id_strict"
	case WithOwnerOverride:
		return "current_user_id_with_owner_override"
	case StrictWithOwnerOverride:
		return "current_user_id_strict_with_owner_override"
	case AdminSession:
		return "admin_session"
	case InfraKey:
		return "infra_key"
	}
	return "undeclared"
}

// Valid reports whether r is one of the declared resolvers.
func (r Resolver) Valid() bool { return r >= Public && r <= InfraKey }

var (
	errNotSignedIn = httpx.Unauthorized("not_authenticated", "Sign in to use this.")
	errAdminOnly   = httpx.Forbidden("admin_required", "Only an admin can do this.")
)

// Resolve returns the middleware that establishes the caller for a route declared
// with res, or answers 401/403 itself.
func (s *Service) Resolve(res Resolver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r = r.WithContext(context.WithValue(r.Context(), clientIPKey{}, s.ip.ClientIP(r)))
			c, apiErr := s.resolve(w, r, res)
			if apiErr != nil {
				httpx.Err(w, r, apiErr)
				return
			}
			next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), c)))
		})
	}
}

func (s *Service) resolve(w http.ResponseWriter, r *http.Request, res Resolver) (Caller, *httpx.Error) {
	switch res {
	case Public:
		return Caller{}, nil
	case OpsKey:
		present, err := s.checkOpsKey(r)
		if err != nil {
			return Caller{}, err
		}
		if !present && !s.bypass() {
			return Caller{}, httpx.Unauthorized("missing_api_key", "This route needs the ops key in X-API-Key.")
		}
		return Caller{OpsKey: true}, nil
	case Strict, AdminSession:
		c, ok, err := s.sessionCaller(w, r)
		if err != nil {
			return Caller{}, err
		}
		if !ok {
			if c, ok = s.bypassCaller(r.Context()); !ok {
				s.record(r, uuid.Nil, audit.ActionSessionMissing, map[string]any{"resolver": res.String()})
				return Caller{}, errNotSignedIn
			}
		}
		if res == AdminSession && !c.IsAdmin() {
			return Caller{}, errAdminOnly
		}
		return c, nil
	case WithOwnerOverride, StrictWithOwnerOverride:
		return s.resolveOverride(w, r, res)
	case InfraKey:
		return Caller{}, s.checkInfraKey(r)
	}
	return Caller{}, httpx.Internal(errors.New("auth: route declares no resolver"))
}

func (s *Service) resolveOverride(w http.ResponseWriter, r *http.Request, res Resolver) (Caller, *httpx.Error) {
	// Session first.
	c, ok, err := s.sessionCaller(w, r)
	if err != nil || ok {
		return c, err
	}
	if r.Header.Get(HeaderOwnerUserID) != "" {
		return s.ownerOverride(r)
	}
	present, keyErr := s.checkOpsKey(r)
	if keyErr != nil {
		return Caller{}, keyErr
	}
	if !present {
		if c, ok := s.bypassCaller(r.Context()); ok {
			return c, nil
		}
	}
	if res == WithOwnerOverride {
		return Caller{OpsKey: present}, nil
	}
	// The ops key alone carries no user: a user-data route refuses it (SPEC).
	s.record(r, uuid.Nil, audit.ActionSessionMissing, map[string]any{"resolver": res.String(), "ops_key": present})
	return Caller{}, errNotSignedIn
}

// ownerOverride honours X-Owner-User-Id only when all three guards pass (SPEC): a
// valid ops key, a source address inside OWNER_OVERRIDE_ALLOWED_CIDRS, and a live
// user. Any failed guard is a 403.
func (s *Service) ownerOverride(r *http.Request) (Caller, *httpx.Error) {
	refuse := func(guard string) (Caller, *httpx.Error) {
		s.record(r, uuid.Nil, audit.ActionOverrideRefused, map[string]any{"guard": guard})
		return Caller{}, httpx.Forbidden("owner_override_refused", "X-Owner-User-Id is not accepted for this request.")
	}
	key := r.Header.Get(HeaderAPIKey)
	if key == "" || !s.cfg.ServiceAPIKey.IsSet() || !keysEqual(key, s.cfg.ServiceAPIKey.Value()) {
		return refuse("api_key")
	}
	if !inPrefixes(ClientIP(r.Context()), s.cfg.OwnerOverrideAllowedCIDRs) {
		return refuse("source_ip")
	}
	id, err := uuid.Parse(r.Header.Get(HeaderOwnerUserID))
	if err != nil {
		return refuse("user")
	}
	u, err := users.LiveByID(r.Context(), s.pool, id)
	if errors.Is(err, users.ErrNotFound) {
		return refuse("user")
	}
	if err != nil {
		return Caller{}, httpx.Internal(err)
	}
	return Caller{UserID: u.ID, Role: u.Role, OpsKey: true, Override: true}, nil
}

// sessionCaller resolves the session cookie; ok is false when there is none that
// resolves. A renewed session gets a fresh cookie.
func (s *Service) sessionCaller(w http.ResponseWriter, r *http.Request) (Caller, bool, *httpx.Error) {
	tok := sessionToken(r)
	if tok == "" {
		return Caller{}, false, nil
	}
	c, expires, renewed, err := s.resolveSession(r.Context(), tok)
	if errors.Is(err, errNoSession) {
		return Caller{}, false, nil
	}
	if err != nil {
		return Caller{}, false, httpx.Internal(err)
	}
	if renewed {
		s.setSessionCookie(w, tok, expires)
	}
	return c, true, nil
}

// checkOpsKey reports whether X-API-Key was sent, and refuses a key that does not
// verify (401, audited).
func (s *Service) checkOpsKey(r *http.Request) (bool, *httpx.Error) {
	given := r.Header.Get(HeaderAPIKey)
	if given == "" {
		return false, nil
	}
	if !s.cfg.ServiceAPIKey.IsSet() {
		if s.bypass() {
			return true, nil
		}
		return true, httpx.Unauthorized("ops_key_not_configured", "SERVICE_API_KEY is not configured on this host.")
	}
	if !keysEqual(given, s.cfg.ServiceAPIKey.Value()) {
		s.record(r, uuid.Nil, audit.ActionAPIKeyInvalid, nil)
		return true, httpx.Unauthorized("invalid_api_key", "The X-API-Key value is not valid.")
	}
	return true, nil
}

// bypass reports whether DEV_AUTH_BYPASS is in force: only without an ops key (SPEC).
func (s *Service) bypass() bool {
	return s.cfg.DevAuthBypass && !s.cfg.ServiceAPIKey.IsSet()
}

// bypassCaller stands in for a session under DEV_AUTH_BYPASS: the single live admin,
// when there is exactly one.
func (s *Service) bypassCaller(ctx context.Context) (Caller, bool) {
	if !s.bypass() {
		return Caller{}, false
	}
	id, err := users.SoleAdmin(ctx, s.pool)
	if err != nil {
		return Caller{}, false
	}
	return Caller{UserID: id, Role: RoleAdmin, Bypass: true}, true
}
