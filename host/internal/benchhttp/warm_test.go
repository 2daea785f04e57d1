package benchhttp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/app"
)

// The bench waits for the host's own words: a change of the message in the app
// would otherwise leave every bench run waiting out its ten minutes.
func TestTheBenchWaitsForTheHostsMessage(t *testing.T) {
	require.Equal(t, app.LexicalIndexLoaded, lexicalIndexLoaded)
}
