package netguard

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// BaseURLOpts says which plain-HTTP targets a model endpoint may use.
type BaseURLOpts struct {
	// GatewayHosts are host names of the self-hosted LLM gateway (the compose
	// service), which the operator configured and which are not checked at all:
	// plain HTTP on the private network is fine there. Default none.
	GatewayHosts []string
	// Resolver looks names up; nil means the system resolver.
	Resolver Resolver
}

// CheckBaseURL validates the base URL of a custom model endpoint before it is saved
// (SPEC "Cloud LLM provider settings" rule 4): it refuses credentials in the URL,
// fragments, schemes other than http and https, and every address EndpointAddr
// refuses for the URL's scheme. HTTPS is allowed for remote and private endpoints;
// plain HTTP only for loopback (local development or a local model runtime) or the
// self-hosted gateway. Prompts and excerpts go to this URL, so the message of every
// refusal names the rule.
func CheckBaseURL(ctx context.Context, raw string, o BaseURLOpts) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return fmt.Errorf("netguard: the base URL must be an absolute http(s) URL with a host")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("netguard: the base URL's scheme must be https (or http for loopback or the gateway), not %q", u.Scheme)
	case u.User != nil:
		return fmt.Errorf("netguard: the base URL must not carry credentials; the API key is stored separately")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("netguard: the base URL must not have a fragment")
	}
	host := strings.ToLower(u.Hostname())
	for _, g := range o.GatewayHosts {
		if host == strings.ToLower(g) {
			return nil // the self-hosted gateway on the private network, http or https
		}
	}
	addrs, err := lookup(ctx, o.Resolver, host)
	if err != nil {
		// The resolver's own text (its server's address) stays out of the message,
		// which is shown to the admin; it stays reachable through Unwrap for logs.
		return &unresolvableError{host: host, cause: err}
	}
	for _, a := range addrs {
		if err := EndpointAddr(u.Scheme, a); err != nil {
			var re *RefusedError
			if errors.As(err, &re) && re.Why == plainHTTPWhy {
				return fmt.Errorf("netguard: plain http is allowed only for loopback or the self-hosted gateway; use https for %s", host)
			}
			return fmt.Errorf("netguard: the base URL points at %s, a %s", re.Addr, re.Why)
		}
	}
	return nil
}

// plainHTTPWhy is the rule EndpointAddr names when plain http would leave the machine.
const plainHTTPWhy = "non-loopback address, which plain http may not reach (use https)"

// EndpointAddr says whether a model endpoint reached with scheme ("http" or
// "https") may connect to addr, with a *RefusedError when not. Public, private and
// loopback addresses are allowed over https; plain http only to loopback. Unspecified,
// link-local, cloud metadata, carrier-grade NAT, multicast and reserved addresses are
// always refused. CheckBaseURL applies it when the URL is saved and the LLM plugin's
// dialer on every connection (EndpointDialCheck), so DNS changes after the save
// cannot reach further.
func EndpointAddr(scheme string, addr netip.Addr) error {
	c, why := classify(addr)
	switch {
	case c == classRefused:
		return &RefusedError{Addr: addr.Unmap(), Why: why}
	case scheme != "https" && c != classLoopback:
		return &RefusedError{Addr: addr.Unmap(), Why: plainHTTPWhy}
	}
	return nil
}

// EndpointDialCheck returns the check a dialer (DialControl) applies to a model
// endpoint reached with scheme.
func EndpointDialCheck(scheme string) func(netip.AddrPort) error {
	return func(ap netip.AddrPort) error { return EndpointAddr(scheme, ap.Addr()) }
}
