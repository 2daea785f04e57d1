package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// A request whose database went away is a dependency down, said in a sentence,
// not an internal error.
func TestInternalOfALostDatabaseIs503(t *testing.T) {
	t.Parallel()
	lost := Internal(fmt.Errorf("learning: review batch: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}))
	require.Equal(t, http.StatusServiceUnavailable, lost.Status)
	require.Equal(t, "unavailable", lost.Code)
	require.Equal(t, "The database could not be reached, so nothing was changed; try again in a moment.", lost.Detail)

	bug := Internal(errors.New("learning: nil card"))
	require.Equal(t, http.StatusInternalServerError, bug.Status)
	require.Equal(t, "internal_error", bug.Code)
}
