package pdftext

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tool that exits well after writing all its output, while something it left
// behind still holds its stderr past the wait delay, has succeeded: Wait's
// ErrWaitDelay there once failed good uploads for good as malformed under load.
// A tool that fails still fails.
func TestRunTakesAWaitDelayAfterSuccessForSuccess(t *testing.T) {
	t.Parallel()
	var out string
	read := func(r io.Reader) error {
		b, err := io.ReadAll(r)
		out = string(b)
		return err
	}
	start := time.Now()
	_, err := run(context.Background(), "sh", []string{"-c", "sleep 3 >/dev/null & printf ok"}, read)
	require.NoError(t, err)
	require.Equal(t, "ok", out)
	require.Less(t, time.Since(start), 3*time.Second, "the delay, not the straggler, bounds the wait")

	_, err = run(context.Background(), "sh", []string{"-c", "sleep 3 >/dev/null & printf ok; exit 3"}, read)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "a failing tool still fails")
}
