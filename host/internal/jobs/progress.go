package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"
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
	// One report of a job at a time: its event is written before the next is sent.
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rt.progress.write(ctx, r.jobID, p)
}

// maxProgressBatch bounds the events written in one statement.
const maxProgressBatch = 500

// progressReq is one event waiting to be written.
type progressReq struct {
	jobID int64
	p     Progress
	done  chan error // receives the write's outcome; buffered
}

// progressWriter writes progress events with group commit: while one batch is
// being written, the events reported meanwhile queue up and go out together in
// the next statement. A lone event is written at once; under load, many jobs'
// events share one commit instead of paying one each.
type progressWriter struct {
	pool *pgxpool.Pool
	reqs chan *progressReq
}

func newProgressWriter(pool *pgxpool.Pool) *progressWriter {
	return &progressWriter{pool: pool, reqs: make(chan *progressReq, maxProgressBatch)}
}

// write queues an event and waits until it is stored (and announced). When ctx
// ends first it returns ctx's error; the event may still be written.
func (w *progressWriter) write(ctx context.Context, jobID int64, p Progress) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jobs: report progress: %w", err)
	}
	req := &progressReq{jobID: jobID, p: p, done: make(chan error, 1)}
	select {
	case w.reqs <- req:
	case <-ctx.Done():
		return fmt.Errorf("jobs: report progress: %w", ctx.Err())
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("jobs: report progress: %w", ctx.Err())
	}
}

// run writes queued events until ctx ends.
func (w *progressWriter) run(ctx context.Context) {
	var next []*progressReq // held back from the last batch: a second event of a job
	for {
		held := next
		next = nil
		if len(held) == 0 {
			select {
			case <-ctx.Done():
				return
			case req := <-w.reqs:
				held = append(held, req)
			}
		}
		var batch []*progressReq
		inBatch := make(map[int64]bool, len(held))
		for _, req := range held {
			if inBatch[req.jobID] {
				next = append(next, req)
				continue
			}
			inBatch[req.jobID] = true
			batch = append(batch, req)
		}
	fill:
		for len(batch) < maxProgressBatch {
			select {
			case req := <-w.reqs:
				if inBatch[req.jobID] {
					next = append(next, req)
					continue
				}
				inBatch[req.jobID] = true
				batch = append(batch, req)
			default:
				break fill
			}
		}
		err := insertProgressBatch(ctx, w.pool, batch)
		for _, req := range batch {
			req.done <- err
		}
	}
}

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
