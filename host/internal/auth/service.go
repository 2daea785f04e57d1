package auth

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/ratelimit"
)

// Lifetimes and limits of the identity area. SPEC fixes the grace window; the rest
// follow the reference implementation (docs/auth.md).
const (
	// SessionCookie is the session cookie's name (SPEC).
	SessionCookie = "service_session"
	// SessionTTL is a session's lifetime, renewed on use at most once a day.
	SessionTTL = 30 * 24 * time.Hour
	// SessionGrace is how long after expiry a session still resolves, unrenewed, so
	// reviews captured offline can reconcile (SPEC).
	SessionGrace = 24 * time.Hour
	// sessionRenewEvery is the least time between two renewals of one session.
	sessionRenewEvery = 24 * time.Hour
	// MagicLinkTTL is a sign-in link's lifetime.
	MagicLinkTTL = 15 * time.Minute
	// InviteTTL is the lifetime of the link an admin's invitation sends.
	InviteTTL = 24 * time.Hour
)

// Header names.
const (
	HeaderAPIKey      = "X-API-Key"
	HeaderOwnerUserID = "X-Owner-User-Id"
)

// Service resolves callers and runs sign-in.
type Service struct {
	pool   *pgxpool.Pool
	cfg    *config.Config
	log    *slog.Logger
	audit  *audit.Log
	mail   mail.Sender
	ip     *SourceIP
	secure bool
	now    func() time.Time

	linkPerIP    *ratelimit.Limiter
	linkPerEmail *ratelimit.Limiter
	verifyPerIP  *ratelimit.Limiter
	loginPerIP   *ratelimit.Limiter

	// background runs work that must not delay a response (sending mail), so the
	// answer's timing does not tell whether an address has an account.
	background func(func())
}

// Config is what NewService needs.
type Config struct {
	Pool   *pgxpool.Pool
	Config *config.Config
	Logger *slog.Logger
	Audit  *audit.Log
	Mail   mail.Sender
}

// NewService builds the identity service.
func NewService(c Config) *Service {
	return &Service{
		pool:  c.Pool,
		cfg:   c.Config,
		log:   c.Logger,
		audit: c.Audit,
		mail:  c.Mail,
		ip:    NewSourceIP(c.Config.TrustedProxyHosts),
		// Secure cookies in production, and wherever the public URL is HTTPS.
		secure:       c.Config.IsProduction() || strings.HasPrefix(c.Config.PublicBaseURL, "https://"),
		now:          time.Now,
		linkPerIP:    ratelimit.New("sign-in link", 5, time.Minute),
		linkPerEmail: ratelimit.New("sign-in link", 3, 15*time.Minute),
		verifyPerIP:  ratelimit.New("sign-in", 10, time.Minute),
		loginPerIP:   ratelimit.New("API-key sign-in", 10, time.Minute),
		background:   func(f func()) { go f() },
	}
}

// SourceIP exposes the service's client-address logic to other middleware.
func (s *Service) SourceIP() *SourceIP { return s.ip }

type clientIPKey struct{}

// ClientIP returns the request's client address as the resolver middleware saw it.
func ClientIP(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(clientIPKey{}).(netip.Addr)
	return a
}

// record writes an audit entry with the client address and path.
func (s *Service) record(r *http.Request, userID uuid.UUID, action string, meta map[string]any) {
	if meta == nil {
		meta = map[string]any{}
	}
	if ip := ClientIP(r.Context()); ip.IsValid() {
		meta["ip"] = ip.String()
	}
	s.audit.Record(r.Context(), userID, action, r.URL.Path, meta)
}
