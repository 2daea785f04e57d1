package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// BaseURLOpts says which plain-HTTP targets a model endpoint may use.
type BaseURLOpts struct {
	// GatewayHosts are host names of the self-hosted LLM gateway (the compose
	// service), which may be reached over plain HTTP on the private network.
	GatewayHosts []string
	// Resolver looks names up; nil means the system resolver.
	Resolver Resolver
}

// CheckBaseURL validates the base URL of a custom model endpoint before it is saved
// (SPEC "Cloud LLM provider settings" rule 4): it refuses credentials in the URL,
// fragments, schemes other than http and https, and addresses in unsafe ranges
// (cloud metadata and other link-local, multicast, unspecified). HTTPS is allowed
// for remote endpoints; plain HTTP only for loopback (local development or a local
// model runtime) or the self-hosted gateway. Prompts and excerpts go to this URL, so
// the message of every refusal names the rule.
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
	addrs, err := resolve(ctx, o.Resolver, host)
	if err != nil {
		// The resolver's own text (its server's address) stays out: this message
		// is shown to the admin.
		return fmt.Errorf("netguard: the base URL's host %s does not resolve", host)
	}
	loopback := true
	for _, a := range addrs {
		a = a.Unmap()
		switch {
		case a.IsUnspecified():
			return fmt.Errorf("netguard: the base URL points at an unspecified address (%s)", a)
		case a.IsLinkLocalUnicast():
			return fmt.Errorf("netguard: the base URL points at a link-local address (%s), where cloud metadata services live", a)
		case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
			return fmt.Errorf("netguard: the base URL points at a multicast address (%s)", a)
		}
		if !a.IsLoopback() {
			loopback = false
		}
	}
	if u.Scheme == "http" && !loopback {
		return fmt.Errorf("netguard: plain http is allowed only for loopback or the self-hosted gateway; use https for %s", host)
	}
	return nil
}

func resolve(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no addresses")
	}
	return addrs, err
}
