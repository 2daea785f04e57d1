package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"
)

// Reason says in a clause for people why a network call failed ("the host name
// could not be found", "the server did not answer in time"), without the resolver,
// addresses or driver text that err carries. Callers log err and show the clause.
func Reason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var refused *RefusedError
	switch {
	case err == nil:
		return "nothing went wrong"
	case errors.As(err, &refused):
		return "the address is a " + refused.Why + ", which Lectern does not connect to"
	case strings.Contains(err.Error(), "netguard: refusing"):
		return "the address is not a public one, which Lectern does not connect to"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "the host name could not be found"
		}
		if dnsErr.IsTimeout {
			return "looking up the host name took too long"
		}
		return "the host name could not be looked up"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the server did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the server refused the connection"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the server dropped the connection"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "the server's TLS certificate could not be verified"
	}
	return "the server could not be reached"
}
