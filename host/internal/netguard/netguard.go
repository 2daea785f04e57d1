// Package netguard decides which network destinations the host may reach on a user's
// or an admin's behalf: SMTP relays, model endpoints, PDF links. It refuses private,
// loopback, link-local, multicast, unspecified and reserved addresses, which would
// let a setting reach into the host's own network (SSRF).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// reserved are special-purpose ranges netip has no predicate for.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard
}

// Why says why addr is not a public unicast address, or "" when it is.
func Why(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return "not an IP address"
	case addr.IsUnspecified():
		return "unspecified address"
	case addr.IsLoopback():
		return "loopback address"
	case addr.IsLinkLocalUnicast():
		return "link-local address (this includes cloud metadata services)"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast address"
	case addr.IsPrivate():
		return "private address"
	}
	for _, p := range reserved {
		if p.Contains(addr) {
			return "reserved address"
		}
	}
	return ""
}

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrUnresolvable is CheckHost failing on a host whose name does not resolve.
var ErrUnresolvable = errors.New("netguard: the host does not resolve")

// RefusedError is CheckHost (or PublicOnly, without Host) refusing an address that
// is not public.
// Why ("loopback address") may be shown to people; Addr belongs in logs only.
type RefusedError struct {
	Host string
	Addr netip.Addr
	Why  string
}

func (e *RefusedError) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("netguard: refusing to connect to %s, a %s", e.Addr, e.Why)
	}
	return fmt.Sprintf("netguard: %s resolves to %s, a %s", e.Host, e.Addr, e.Why)
}

// CheckHost resolves host and fails when any of its addresses is not public, unless
// allowPrivate is true. A host that does not resolve fails too.
func CheckHost(ctx context.Context, r Resolver, host string, allowPrivate bool) error {
	if r == nil {
		r = net.DefaultResolver
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnresolvable, host, err)
		}
		if len(addrs) == 0 {
			return fmt.Errorf("%w: %s has no addresses", ErrUnresolvable, host)
		}
	}
	if allowPrivate {
		return nil
	}
	for _, a := range addrs {
		if why := Why(a); why != "" {
			return &RefusedError{Host: host, Addr: a, Why: why}
		}
	}
	return nil
}

// DialControl returns a net.Dialer Control function that refuses to connect to any
// address check rejects. It runs on the address actually dialed, after name
// resolution and on every redirect, so neither a redirect nor a DNS answer that
// changes between check and use (rebinding) can reach an internal address. check is
// usually PublicOnly.
func DialControl(check func(netip.AddrPort) error) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("netguard: refusing %s: %w", address, err)
		}
		return check(ap)
	}
}

// PublicOnly refuses every address that is not public unicast (see Why).
func PublicOnly(ap netip.AddrPort) error {
	if why := Why(ap.Addr()); why != "" {
		return &RefusedError{Addr: ap.Addr(), Why: why}
	}
	return nil
}
