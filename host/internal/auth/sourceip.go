package auth

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// SourceIP finds a request's client address (SPEC "Source IP trust"): the socket
// peer, rewritten from X-Forwarded-For only when the peer is a trusted proxy listed in
// TRUSTED_PROXY_HOSTS (host names, IP addresses or CIDRs; "*" trusts every peer and is
// refused in production).
type SourceIP struct {
	any      bool
	prefixes []netip.Prefix
	names    []string
	lookup   func(ctx context.Context, host string) ([]netip.Addr, error)

	mu       sync.Mutex
	resolved map[string]resolvedName
}

type resolvedName struct {
	addrs []netip.Addr
	at    time.Time
}

// nameTTL is how long a trusted proxy's resolved addresses are reused.
const nameTTL = 30 * time.Second

// NewSourceIP parses TRUSTED_PROXY_HOSTS entries. Host names are resolved when a
// request needs them, and the answer is kept for 30 seconds.
func NewSourceIP(trusted []string) *SourceIP {
	s := &SourceIP{resolved: map[string]resolvedName{}}
	s.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	for _, t := range trusted {
		switch {
		case t == "*":
			s.any = true
		case strings.Contains(t, "/"):
			if p, err := netip.ParsePrefix(t); err == nil {
				s.prefixes = append(s.prefixes, p.Masked())
			}
		default:
			if a, err := netip.ParseAddr(t); err == nil {
				s.prefixes = append(s.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			} else {
				s.names = append(s.names, strings.ToLower(t))
			}
		}
	}
	return s
}

// ClientIP returns the request's client address. An unparsable peer, or an
// X-Forwarded-For hop that is not a bare IP address ("ip:port", "unix:...", an empty
// entry, garbage), yields the zero Addr: the request is then treated as coming from
// that hop, which no allowlist contains and which is never loopback. (Answering the
// previous hop instead would answer the trusted proxy itself.)
func (s *SourceIP) ClientIP(r *http.Request) netip.Addr {
	peer := parseHostPort(r.RemoteAddr)
	if !peer.IsValid() || !s.trusted(r.Context(), peer) {
		return peer
	}
	// Walk X-Forwarded-For from the right: the last hop not added by a trusted proxy
	// is the client. Entries left of it could be forged by the client.
	hops := forwardedHops(r)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}
		}
		client = a.Unmap()
		if !s.trusted(r.Context(), client) {
			return client
		}
	}
	return client
}

// IsLocal reports whether r comes from this machine: its client address is
// loopback, and no proxy this host does not trust passed it on. A loopback peer that
// sends forwarding headers without being a trusted proxy is a proxy on this machine
// speaking for someone else (a reverse proxy or a standalone dashboard left out of
// TRUSTED_PROXY_HOSTS), so its request is not local.
func (s *SourceIP) IsLocal(r *http.Request) bool {
	if !s.ClientIP(r).IsLoopback() {
		return false
	}
	if s.trusted(r.Context(), parseHostPort(r.RemoteAddr)) {
		return true
	}
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"} {
		if len(r.Header.Values(h)) > 0 {
			return false
		}
	}
	return true
}

// forwardedHops is every X-Forwarded-For entry, left to right, across all the
// header's lines.
func forwardedHops(r *http.Request) []string {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	return hops
}

func (s *SourceIP) trusted(ctx context.Context, a netip.Addr) bool {
	if s.any {
		return true
	}
	for _, p := range s.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	for _, name := range s.names {
		for _, ra := range s.resolve(ctx, name) {
			if ra == a {
				return true
			}
		}
	}
	return false
}

func (s *SourceIP) resolve(ctx context.Context, name string) []netip.Addr {
	s.mu.Lock()
	r, ok := s.resolved[name]
	s.mu.Unlock()
	if ok && time.Since(r.at) < nameTTL {
		return r.addrs
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	addrs, _ := s.lookup(ctx, name)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	s.mu.Lock()
	s.resolved[name] = resolvedName{addrs: addrs, at: time.Now()}
	s.mu.Unlock()
	return addrs
}

func parseHostPort(hostport string) netip.Addr {
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(hostport); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

// inPrefixes reports whether a lies in any of prefixes.
func inPrefixes(a netip.Addr, prefixes []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
