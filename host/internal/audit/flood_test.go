package audit

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFloodOfManySourcesIsBounded: a flood from more sources than are told apart
// still writes a bounded number of rows and counts every attempt.
func TestFloodOfManySourcesIsBounded(t *testing.T) {
	t.Parallel()
	var rows, attempts int
	f := newFlood(time.Minute, floodBurst, floodMaxSources, floodBudget, time.Now, func(due []summary) {
		for _, s := range due {
			rows++
			attempts += s.count.attempts - s.count.written
		}
	})
	for i := range 10_000 {
		if f.admit(ActionMagicLinkRejected, fmt.Sprintf("198.18.%d.%d", i/256, i%256)) {
			rows++
			attempts++
		}
	}
	f.flush()
	require.Equal(t, 10_000, attempts)
	require.LessOrEqual(t, rows, floodBudget+floodMaxSources+1)
}
