package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A serving host loads its lexical index in the background after a start and says
// so once it has: operators read how long the warm-up took, and make bench-http
// waits for that line before it measures anything.
func TestStartLogsWhenTheLexicalIndexHasLoaded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.startJobs(t)
	require.Eventually(t, func() bool { return loggedLoad(t, b.logs.String()) }, 30*time.Second, 50*time.Millisecond,
		"no %q line in the host's log", LexicalIndexLoaded)
}

// loggedLoad says whether logs hold the load's line, with how long it took.
func loggedLoad(t *testing.T, logs string) bool {
	for line := range strings.Lines(logs) {
		var entry struct {
			Msg     string   `json:"msg"`
			Seconds *float64 `json:"seconds"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != LexicalIndexLoaded {
			continue
		}
		require.NotNil(t, entry.Seconds, "the line says how long the load took: %s", line)
		return true
	}
	return false
}
