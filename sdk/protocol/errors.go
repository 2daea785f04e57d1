package protocol

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies a plugin error. The codes cross the gRPC boundary as status codes
// plus an error detail, so the host sees the same Code the plugin returned.
type Code string

// The error codes.
const (
	// CodeUnavailable: the upstream service (or the plugin itself) is down or
	// unreachable; retrying later may work.
	CodeUnavailable Code = "unavailable"
	// CodeRateLimited: the upstream refused because of a rate limit; retry after
	// Error.RetryAfter.
	CodeRateLimited Code = "rate_limited"
	// CodeBadRequest: the request cannot succeed as it is.
	CodeBadRequest Code = "bad_request"
	// CodeUnauthorized: credentials are missing or were rejected.
	CodeUnauthorized Code = "unauthorized"
	// CodeNotFound: the thing asked for does not exist.
	CodeNotFound Code = "not_found"
	// CodeUnsupported: the plugin does not offer this optional call.
	CodeUnsupported Code = "unsupported"
	// CodeInternal: anything else; a bug in the plugin.
	CodeInternal Code = "internal"
)

// Error is a typed plugin error. Compare with errors.Is against the sentinels
// (ErrNotFound, ...), which match any Error of the same Code:
//
//	if errors.Is(err, protocol.ErrRateLimited) { ... }
type Error struct {
	// Code classifies the error.
	Code Code
	// Message says what went wrong, for logs and operators. It must not contain
	// credentials.
	Message string
	// RetryAfter is how long to wait before retrying; set with CodeRateLimited,
	// zero when unknown.
	RetryAfter time.Duration
	// Cause is the underlying error on the side that created the Error. It does
	// not cross the gRPC boundary.
	Cause error
}

// Error renders "not_found: no paper with doi 10.1/x".
func (e *Error) Error() string {
	msg := string(e.Code)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Cause != nil && e.Message == "" {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is an *Error with the same Code and either no Message
// (a sentinel) or the same Message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is. Never return them with extra detail changed; build a new
// Error with the helpers below instead.
var (
	// ErrUnavailable matches every CodeUnavailable error.
	ErrUnavailable = &Error{Code: CodeUnavailable}
	// ErrRateLimited matches every CodeRateLimited error.
	ErrRateLimited = &Error{Code: CodeRateLimited}
	// ErrBadRequest matches every CodeBadRequest error.
	ErrBadRequest = &Error{Code: CodeBadRequest}
	// ErrUnauthorized matches every CodeUnauthorized error.
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrNotFound matches every CodeNotFound error.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrUnsupported matches every CodeUnsupported error.
	ErrUnsupported = &Error{Code: CodeUnsupported}
	// ErrInternal matches every CodeInternal error.
	ErrInternal = &Error{Code: CodeInternal}
)

// Unavailable returns a CodeUnavailable error wrapping cause (which may be nil).
func Unavailable(cause error, format string, args ...any) *Error {
	return &Error{Code: CodeUnavailable, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// RateLimited returns a CodeRateLimited error; retryAfter may be zero when the
// upstream did not say.
func RateLimited(retryAfter time.Duration, format string, args ...any) *Error {
	return &Error{Code: CodeRateLimited, Message: fmt.Sprintf(format, args...), RetryAfter: retryAfter}
}

// BadRequest returns a CodeBadRequest error.
func BadRequest(format string, args ...any) *Error {
	return &Error{Code: CodeBadRequest, Message: fmt.Sprintf(format, args...)}
}

// Unauthorized returns a CodeUnauthorized error.
func Unauthorized(format string, args ...any) *Error {
	return &Error{Code: CodeUnauthorized, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a CodeNotFound error.
func NotFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// Unsupported returns a CodeUnsupported error.
func Unsupported(format string, args ...any) *Error {
	return &Error{Code: CodeUnsupported, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the Code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
