// Package netguard decides which network destinations Lectern may reach on a user's
// or an admin's behalf: SMTP relays, model endpoints, PDF links. It is shared by the
// host (checks when a setting is saved) and by plugins (checks on the address
// actually dialed), so both refuse exactly the same address classes.
//
// Two policies exist. PublicOnly refuses every address that is not public unicast
// (Why). Model endpoints (CheckBaseURL, EndpointDialCheck) may also be loopback or
// private, since an admin may run a model on the machine or the local network, but
// never link-local, cloud metadata, carrier-grade NAT, multicast, unspecified or
// reserved; plain http only to loopback.
//
// The package's API follows semver with the sdk module.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// metadata are cloud metadata service addresses outside link-local, which the
// checks name as such. 169.254.169.254 is link-local and refused as that.
var metadata = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::/32"),      // AWS IMDS over IPv6 (fd00:ec2::254)
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud (inside carrier-grade NAT)
}

// reserved are special-purpose ranges netip has no predicate for
// (IANA special-purpose address registries).
var reserved = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved address (\"this network\")"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved address (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved address (documentation)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved address (6to4 relay)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved address (benchmarking)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved address (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved address (documentation)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address (class E and broadcast)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved address (local-use NAT64)"},
	{netip.MustParsePrefix("100::/64"), "reserved address (discard)"},
	{netip.MustParsePrefix("2001::/23"), "reserved address (IETF protocol assignments, Teredo)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved address (documentation)"},
	{netip.MustParsePrefix("2002::/16"), "reserved address (6to4)"},
	{netip.MustParsePrefix("3fff::/20"), "reserved address (documentation)"},
	{netip.MustParsePrefix("5f00::/16"), "reserved address (segment routing)"},
}

// nat64 is the well-known NAT64 prefix: its addresses carry an IPv4 address in
// their last 32 bits, which is classified instead.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// class is the kind of an address, from the most to the least dangerous.
type class int

const (
	classPublic class = iota
	classLoopback
	classPrivate
	classRefused // never reachable: link-local, metadata, reserved, ...
)

// classify says what addr is and, unless it is public, why.
func classify(addr netip.Addr) (class, string) {
	addr = addr.Unmap()
	if nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case !addr.IsValid():
		return classRefused, "not an IP address"
	case addr.IsUnspecified():
		return classRefused, "unspecified address"
	case addr.IsLoopback():
		return classLoopback, "loopback address"
	}
	for _, p := range metadata {
		if p.Contains(addr) {
			return classRefused, "cloud metadata service address"
		}
	}
	switch {
	case addr.IsLinkLocalUnicast():
		return classRefused, "link-local address (this includes cloud metadata services)"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return classRefused, "multicast address"
	case addr.IsPrivate():
		return classPrivate, "private address"
	}
	for _, r := range reserved {
		if r.prefix.Contains(addr) {
			return classRefused, r.why
		}
	}
	return classPublic, ""
}

// Why says why addr is not a public unicast address, or "" when it is.
func Why(addr netip.Addr) string {
	_, why := classify(addr)
	return why
}

// Resolver looks up a host's addresses; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lookup returns host's addresses: host itself when it is an IP address.
func lookup(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errNoAddresses
	}
	return addrs, nil
}

var errNoAddresses = errors.New("no addresses")

// ErrUnresolvable is CheckHost or CheckBaseURL failing on a host whose name does not
// resolve. Its message names the host, never the resolver's own text.
var ErrUnresolvable = errors.New("netguard: the host does not resolve")

// CheckHost resolves host and fails when any of its addresses is not public, unless
// allowPrivate is true, with a *RefusedError. A host that does not resolve fails
// with ErrUnresolvable (the resolver's error is kept as a cause, for logs).
func CheckHost(ctx context.Context, r Resolver, host string, allowPrivate bool) error {
	addrs, err := lookup(ctx, r, host)
	if err != nil {
		return &unresolvableError{host: host, cause: err}
	}
	if allowPrivate {
		return nil
	}
	for _, a := range addrs {
		if why := Why(a); why != "" {
			return &RefusedError{Host: host, Addr: a.Unmap(), Why: why}
		}
	}
	return nil
}

// unresolvableError is ErrUnresolvable for one host; Error names the host only,
// Unwrap gives both the sentinel and the resolver's error.
type unresolvableError struct {
	host  string
	cause error
}

func (e *unresolvableError) Error() string {
	if errors.Is(e.cause, errNoAddresses) {
		return "netguard: " + e.host + " has no addresses"
	}
	return "netguard: " + e.host + " does not resolve"
}

func (e *unresolvableError) Unwrap() []error { return []error{ErrUnresolvable, e.cause} }

// RefusedError is a connection a check refused. Its message names the address and
// the rule, never a URL. Why ("loopback address") may be shown to people; Addr
// belongs in logs only.
type RefusedError struct {
	// Host is the name that resolved to Addr; empty when an address was dialed.
	Host string
	Addr netip.Addr
	// Why names the address class: "link-local address (...)".
	Why string
}

func (e *RefusedError) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("netguard: refusing to connect to %s, a %s", e.Addr, e.Why)
	}
	return fmt.Sprintf("netguard: %s resolves to %s, a %s", e.Host, e.Addr, e.Why)
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

// PublicOnly refuses every address that is not public unicast (see Why), with a
// *RefusedError.
func PublicOnly(ap netip.AddrPort) error {
	if why := Why(ap.Addr()); why != "" {
		return &RefusedError{Addr: ap.Addr().Unmap(), Why: why}
	}
	return nil
}
