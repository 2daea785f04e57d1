package auth

import (
	"context"

	"github.com/google/uuid"
)

// Role of a user account.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Caller is who made a request, as the route's resolver established it. Handlers read
// it with CallerFrom; they never look at cookies or headers themselves.
type Caller struct {
	// UserID is the user the request acts for, or uuid.Nil when no user identity
	// resolved (an ops-key-only call on a route that allows it).
	UserID uuid.UUID
	// Role is the user's role (RoleUser or RoleAdmin) when UserID is set.
	Role string
	// SessionID is the session the identity came from; uuid.Nil for an override.
	SessionID uuid.UUID
	// OpsKey is true when the request carried a valid SERVICE_API_KEY.
	OpsKey bool
	// Override is true when UserID came from a verified X-Owner-User-Id header.
	Override bool
	// Bypass is true when DEV_AUTH_BYPASS stood in for authentication.
	Bypass bool
}

// HasUser reports whether a user identity resolved.
func (c Caller) HasUser() bool { return c.UserID != uuid.Nil }

// IsAdmin reports whether the caller is a signed-in admin. The ops key is never an
// admin, and neither is an owner override: admin authority needs the admin's session.
func (c Caller) IsAdmin() bool {
	return c.HasUser() && c.Role == RoleAdmin && (c.SessionID != uuid.Nil || c.Bypass) && !c.Override
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller of the request ctx belongs to; the zero Caller when
// none resolved.
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
