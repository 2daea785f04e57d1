package store

import (
	"errors"
	"io"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means the database could not be reached or
// went away during the work: the connection was refused or broken, or the server
// is shutting down, starting up or recovering (SQLSTATE classes 08 and 57). The
// work did not happen (a transaction that lost its connection is rolled back), so
// it may be done again once the database is back: a job waits and runs again, a
// request answers 503. Any other error, a constraint or a bug, is not this.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	}
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr), pgconn.SafeToRetry(err):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx reports a connection closed under a query in words only.
	return strings.Contains(err.Error(), "conn closed")
}
