package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// maxProgressMessage is the longest progress message stored (job_progress.message).
const maxProgressMessage = 2000

// Progress is one progress report of a running job.
type Progress struct {
	// Current is how much is done, in the job's own unit.
	Current int64 `json:"current"`
	// Total is how much there is to do; 0 when unknown.
	Total int64 `json:"total"`
	// Message says what the job is doing, for people. At most 2000 characters
	// are kept.
	Message string `json:"message,omitempty"`
	// Data is optional kind-specific JSON (for example the paper being read).
	Data json.RawMessage `json:"data,omitempty"`
}

// ProgressEvent is a stored progress report: the envelope's progress and the data
// of a stream's progress event.
type ProgressEvent struct {
	Progress
	// Seq numbers a job's events from 1 without gaps; it is the SSE event id.
	Seq int64 `json:"seq"`
	// At is when the report was written.
	At time.Time `json:"at"`
}

// ReportProgress records a progress event of the job ctx belongs to. The event is
// written to job_progress and pushed to every stream of the job. Call it from a
// registered worker's Work with the context Work received.
func ReportProgress(ctx context.Context, current, total int64, message string) error {
	return Report(ctx, Progress{Current: current, Total: total, Message: message})
}

// Report records p as the next progress event of the job ctx belongs to; see
// ReportProgress.
func Report(ctx context.Context, p Progress) error {
	r, ok := runFrom(ctx)
	if !ok {
		return ErrNotInJob
	}
	if len(p.Message) > maxProgressMessage {
		p.Message = truncate(p.Message, maxProgressMessage)
	}
	if len(p.Data) > 0 && !json.Valid(p.Data) {
		return fmt.Errorf("jobs: report progress: data is not valid JSON")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := insertProgress(ctx, r.rt.pool, r.jobID, p); err != nil {
		return err
	}
	return nil
}

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
