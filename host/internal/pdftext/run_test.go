package pdftext

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tool that exits successfully after its output was read whole has succeeded,
// even when its stderr stays open past waitDelay (here held by a child it left
// behind; on a busy host, the copy of stderr not scheduled in time): the load
// test saw good PDFs failed as malformed for it.
func TestRunSucceedsWhenOnlyStderrIsCutShort(t *testing.T) {
	t.Parallel()
	var out string
	start := time.Now()
	_, err := run(t.Context(), "sh", []string{"-c", "sleep 3 >/dev/null & echo read whole"}, func(stdout io.Reader) error {
		b, err := io.ReadAll(stdout)
		out = string(b)
		return err
	})
	require.NoError(t, err)
	require.Equal(t, "read whole", strings.TrimSpace(out))
	require.Less(t, time.Since(start), 3*time.Second, "run waited for the child rather than waitDelay")
}

// A tool that fails is still an error.
func TestRunReportsAFailingTool(t *testing.T) {
	t.Parallel()
	_, err := run(t.Context(), "sh", []string{"-c", "echo broken >&2; exit 3"}, func(stdout io.Reader) error {
		_, err := io.Copy(io.Discard, stdout)
		return err
	})
	require.ErrorContains(t, err, "exit status 3")
}
