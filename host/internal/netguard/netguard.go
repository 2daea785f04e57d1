// Package netguard is the host's name for the SDK's network guard
// (github.com/lectern-research/lectern/sdk/netguard), which decides which network
// destinations the host may reach on a user's or an admin's behalf: SMTP relays,
// model endpoints, PDF links. There is one implementation, in the SDK, because the
// LLM plugin applies the same model-endpoint rule on every connection it dials that
// the host applies when the endpoint is saved; plugins may import only the SDK.
package netguard

import (
	"context"
	"net/netip"
	"syscall"

	"github.com/lectern-research/lectern/sdk/netguard"
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver = netguard.Resolver

// BaseURLOpts says which plain-HTTP targets a model endpoint may use.
type BaseURLOpts = netguard.BaseURLOpts

// RefusedError is a connection a check refused.
type RefusedError = netguard.RefusedError

// ErrUnresolvable is a check failing on a host whose name does not resolve.
var ErrUnresolvable = netguard.ErrUnresolvable

// Why says why addr is not a public unicast address, or "" when it is.
func Why(addr netip.Addr) string { return netguard.Why(addr) }

// CheckHost resolves host and fails when any of its addresses is not public, unless
// allowPrivate is true. A host that does not resolve fails too.
func CheckHost(ctx context.Context, r Resolver, host string, allowPrivate bool) error {
	return netguard.CheckHost(ctx, r, host, allowPrivate)
}

// CheckBaseURL validates the base URL of a custom model endpoint before it is saved
// (see the SDK's netguard.CheckBaseURL for the rule).
func CheckBaseURL(ctx context.Context, raw string, o BaseURLOpts) error {
	return netguard.CheckBaseURL(ctx, raw, o)
}

// DialControl returns a net.Dialer Control function that refuses to connect to any
// address check rejects (see the SDK's netguard.DialControl).
func DialControl(check func(netip.AddrPort) error) func(network, address string, c syscall.RawConn) error {
	return netguard.DialControl(check)
}

// PublicOnly refuses every address that is not public unicast (see Why).
func PublicOnly(ap netip.AddrPort) error { return netguard.PublicOnly(ap) }

// EndpointDialCheck returns the check a dialer (DialControl) applies to every
// address of a model endpoint reached with scheme (see the SDK's
// netguard.EndpointAddr): the rule CheckBaseURL applies when it is saved.
func EndpointDialCheck(scheme string) func(netip.AddrPort) error {
	return netguard.EndpointDialCheck(scheme)
}
