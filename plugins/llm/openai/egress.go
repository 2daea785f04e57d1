package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/lectern-research/lectern/sdk/netguard"
)

// Egress: prompts and source excerpts go to the base URL, so every connection the
// plugin opens passes the rule the host applied when the admin saved the endpoint
// (netguard.EndpointAddr), on the address actually dialed: DNS may answer
// differently at call time than at save time. Redirects to another origin are
// refused, since a 307 or 308 would resend the prompt there; redirects within the
// origin are followed, and any new connection passes the same check.

// maxRedirects bounds same-origin redirects of one request.
const maxRedirects = 5

// dialPolicy is the egress rule of one call, carried to the dialer in the
// request's context.
type dialPolicy struct {
	// scheme is the base URL's scheme: plain http may reach loopback only.
	scheme string
	// operator is true for the operator's own gateway (llm.CredOperatorEndpoint),
	// which the host does not check either.
	operator bool
}

type dialPolicyKey struct{}

func withDialPolicy(ctx context.Context, p dialPolicy) context.Context {
	return context.WithValue(ctx, dialPolicyKey{}, p)
}

// LookupFunc resolves a host name to its addresses.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// newHTTPClient returns the plugin's client: no proxy (the check must see the real
// destination), every dialed address checked against the call's policy, and
// cross-origin redirects refused. lookup resolves names; nil is the system resolver.
func newHTTPClient(lookup LookupFunc) *http.Client {
	if lookup == nil {
		lookup = systemLookup
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: controlEgress}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		return dialResolved(ctx, d, lookup, network, address)
	}
	return &http.Client{Transport: t, CheckRedirect: checkRedirect}
}

// controlEgress refuses a connection the call's policy forbids. A context without
// a policy gets the strictest one (https rules).
func controlEgress(ctx context.Context, network, address string, c syscall.RawConn) error {
	p, ok := ctx.Value(dialPolicyKey{}).(dialPolicy)
	if !ok {
		p = dialPolicy{scheme: "https"}
	}
	if p.operator {
		return nil
	}
	return netguard.DialControl(netguard.EndpointDialCheck(p.scheme))(network, address, c)
}

// dialResolved resolves address's host with lookup and dials its addresses in
// turn; the dialer's Control checks each one as it is dialed.
func dialResolved(ctx context.Context, d *net.Dialer, lookup LookupFunc, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, address)
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("the endpoint's host does not resolve: %w", err)
	}
	if len(addrs) == 0 {
		return nil, errors.New("the endpoint's host has no addresses")
	}
	var first error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// errCrossOriginRedirect is the refusal of a redirect to another origin.
var errCrossOriginRedirect = errors.New("the endpoint answered with a redirect to another host or scheme, which is not followed " +
	"(the request would carry the prompt there); set the base URL to the address the endpoint redirects to")

// checkRedirect follows a redirect within the origin of the first request only.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return errCrossOriginRedirect
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("the endpoint redirected more than %d times", maxRedirects)
	}
	return nil
}

// egressRefusal returns a one-sentence message when err is a refused connection or
// redirect, and "" otherwise. Neither is retried.
func egressRefusal(err error) string {
	var re *netguard.RefusedError
	switch {
	case errors.As(err, &re):
		return fmt.Sprintf("refused to connect to %s, a %s; model endpoints may not reach it (check the base URL and its DNS)", re.Addr, re.Why)
	case errors.Is(err, errCrossOriginRedirect):
		return errCrossOriginRedirect.Error()
	}
	return ""
}
