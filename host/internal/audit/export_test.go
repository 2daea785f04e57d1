package audit

import "time"

// Sampling parameters, for the external tests.
const (
	FloodWindow = floodWindow
	FloodBurst  = floodBurst
)

// SetClock replaces the clock of l's flood sampling.
func SetClock(l *Log, now func() time.Time) { l.flood.now = now }
