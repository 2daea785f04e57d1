package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// parse turns a raw value (already trimmed for non-secrets) into the Go
// value of the option's kind. Every returned error's text is a rule.
func (o *option) parse(raw string) (any, []error) {
	switch o.Kind {
	case KindString:
		if o.item == nil {
			return raw, nil
		}
		v, err := o.item(raw)
		if err != nil {
			return nil, []error{err}
		}
		return v, nil
	case KindBool:
		v, err := parseBool(raw)
		if err != nil {
			return nil, []error{err}
		}
		return v, nil
	case KindInt:
		v, err := parseInt(raw, o.minInt, o.maxInt)
		if err != nil {
			return nil, []error{err}
		}
		return v, nil
	case KindDuration:
		v, err := parseDuration(raw)
		if err != nil {
			return nil, []error{err}
		}
		return v, nil
	case KindLogLevel:
		v, err := parseLogLevel(raw)
		if err != nil {
			return nil, []error{err}
		}
		return v, nil
	case KindCIDRList:
		return parseCIDRList(raw)
	case KindStringList:
		return parseStringList(raw, o.item)
	default:
		return nil, []error{fmt.Errorf("has unknown kind %d", int(o.Kind))}
	}
}

// splitList splits a comma-separated value, trimming items and dropping
// empty ones.
func splitList(raw string) []string {
	var items []string
	for item := range strings.SplitSeq(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

func parseStringList(raw string, item func(string) (string, error)) ([]string, []error) {
	items := splitList(raw)
	out := make([]string, 0, len(items))
	var errs []error
	for _, it := range items {
		if item != nil {
			v, err := item(it)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			it = v
		}
		out = append(out, it)
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

func parseBool(raw string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	default:
		return false, fmt.Errorf("must be one of true, false, 1, 0, yes, no, on, off (got %q)", raw)
	}
}

func parseInt(raw string, minInt, maxInt int) (int, error) {
	v, err := strconv.Atoi(raw)
	if err != nil {
		return 0, fmt.Errorf("must be an integer (got %q)", raw)
	}
	if maxInt > minInt && (v < minInt || v > maxInt) {
		return 0, fmt.Errorf("must be between %d and %d (got %d)", minInt, maxInt, v)
	}
	return v, nil
}

func parseDuration(raw string) (time.Duration, error) {
	v, err := time.ParseDuration(raw)
	if err != nil {
		return 0, fmt.Errorf("must be a duration such as 30s or 5m (got %q)", raw)
	}
	if v < 0 {
		return 0, fmt.Errorf("must not be negative (got %q)", raw)
	}
	return v, nil
}

func parseLogLevel(raw string) (slog.Level, error) {
	switch strings.ToLower(raw) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	default:
		return 0, fmt.Errorf("must be one of debug, info, warn, error (got %q)", raw)
	}
}

// parseCIDRList parses a comma-separated list of CIDRs and bare addresses.
// An empty list is valid and means "nothing is allowed".
func parseCIDRList(raw string) ([]netip.Prefix, []error) {
	items := splitList(raw)
	out := make([]netip.Prefix, 0, len(items))
	var errs []error
	for _, it := range items {
		p, err := parsePrefix(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

// parsePrefix parses one CIDR ("10.0.0.0/8") or bare address ("10.1.2.3",
// meaning /32 or /128). A CIDR with host bits set is refused because it
// usually hides a typo.
func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or IP address", s)
		}
		if addr.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q must not have a zone", s)
		}
		addr = addr.Unmap()
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or IP address", s)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, m)
	}
	return p, nil
}

// parseEnvironment accepts a closed list of values so that a typo such as
// "prod" fails loudly instead of silently turning the production refusals
// off.
func parseEnvironment(s string) (string, error) {
	allowedEnvironments := []string{"development", "test", "staging", environmentProduction}
	v := strings.ToLower(strings.TrimSpace(s))
	if !slices.Contains(allowedEnvironments, v) {
		return "", fmt.Errorf("must be one of %s (got %q)", strings.Join(allowedEnvironments, ", "), s)
	}
	return v, nil
}

func parseNonEmpty(s string) (string, error) {
	if s == "" {
		return "", errors.New("must not be empty")
	}
	return s, nil
}

// optional wraps an item parser so that the empty string passes unchanged.
func optional(f func(string) (string, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		if s == "" {
			return "", nil
		}
		return f(s)
	}
}

func parseListenAddr(s string) (string, error) {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("must be host:port, such as 127.0.0.1:3001 (got %q)", s)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port must be a number from 0 to 65535 (got %q)", port)
	}
	return s, nil
}

// parseHTTPURL parses an absolute http or https URL with a host and without
// user info, query or fragment. what names the thing in error text.
func parseHTTPURL(s, what string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid %s", s, what)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q must use the http or https scheme", s)
	case u.Opaque != "" || u.Hostname() == "":
		return nil, fmt.Errorf("%q must be an absolute URL with a host, such as https://lectern.example.org", s)
	case u.User != nil:
		return nil, fmt.Errorf("%q must not contain user info", s)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("%q must not contain a query", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, fmt.Errorf("%q must not contain a fragment", s)
	}
	if p := u.Port(); p != "" {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return nil, fmt.Errorf("%q has an invalid port", s)
		}
	}
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

// parsePublicBaseURL checks PUBLIC_BASE_URL and returns it without a
// trailing slash, so callers can append "/path".
func parsePublicBaseURL(s string) (string, error) {
	u, err := parseHTTPURL(s, "URL")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// parseOrigin checks one CORS origin and returns it in the form browsers
// send in the Origin header: lowercase, without a default port.
func parseOrigin(s string) (string, error) {
	if s == "*" {
		return "", errors.New(`"*" is not allowed; list the origins, or set DEV_CORS_OPEN=true outside production to allow any origin`)
	}
	u, err := parseHTTPURL(s, "origin")
	if err != nil {
		return "", err
	}
	if (u.Path != "" && u.Path != "/") || u.RawPath != "" {
		return "", fmt.Errorf("%q must be an origin scheme://host[:port] without a path", s)
	}
	host := u.Host
	if (u.Scheme == "http" && u.Port() == "80") || (u.Scheme == "https" && u.Port() == "443") {
		host = strings.TrimSuffix(host, ":"+u.Port())
	}
	return u.Scheme + "://" + host, nil
}

// isHostname reports whether s looks like a DNS or container host name:
// dot-separated non-empty labels of letters, digits, '-' and '_'.
func isHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
				return false
			}
		}
	}
	return true
}

// parseHost checks a bare host name or IP address (no scheme, no port).
func parseHost(s string) (string, error) {
	if addr, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return addr.String(), nil
	}
	if !isHostname(s) {
		return "", fmt.Errorf("%q must be a bare host name or IP address, without scheme or port", s)
	}
	return strings.ToLower(s), nil
}

// parseProxyHost checks one TRUSTED_PROXY_HOSTS item: "*", a host name, an
// IP address or a CIDR.
func parseProxyHost(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	if strings.Contains(s, "/") {
		p, err := parsePrefix(s)
		if err != nil {
			return "", err
		}
		return p.String(), nil
	}
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap().String(), nil
	}
	if !isHostname(s) {
		return "", fmt.Errorf("%q must be a host name, IP address or CIDR", s)
	}
	return strings.ToLower(s), nil
}

// parseMailAddress checks a bare e-mail address (no display name).
func parseMailAddress(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", fmt.Errorf("%q must be a bare e-mail address such as lectern@example.org (put a display name in SMTP_FROM_NAME)", s)
	}
	return s, nil
}

// parseHeaderText refuses control characters, which could inject mail
// headers.
func parseHeaderText(s string) (string, error) {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "", errors.New("must not contain control characters such as line breaks")
	}
	return s, nil
}

// entropy returns the Shannon entropy of s in bits per character, from the
// byte frequencies in s itself. Keys are normally ASCII, where bytes and
// characters coincide; counting bytes keeps binary keys read from a _FILE
// variant from being misjudged.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	if len(s) == 0 {
		return 0
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// The roles of lectern serve (LECTERN_ROLE, --role).
const (
	// RoleAll serves HTTP and works jobs: one host does everything.
	RoleAll = "all"
	// RoleAPI serves the API and the dashboard and enqueues jobs, but works
	// none and runs no periodic job.
	RoleAPI = "api"
	// RoleWorker works jobs, runs the periodic jobs and the messenger bot, and
	// serves only a health endpoint.
	RoleWorker = "worker"
)

// ParseRole accepts api, worker or all (any case, trimmed) and refuses anything
// else with the list, so that a typo never starts a host that silently works
// no jobs.
func ParseRole(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case RoleAll, RoleAPI, RoleWorker:
		return v, nil
	}
	return "", fmt.Errorf("must be api, worker or all (got %q)", s)
}
