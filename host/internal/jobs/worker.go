package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lectern-research/lectern/host/internal/store"
)

// Public error codes of the envelope.
const (
	// CodeJobFailed is the code of a failure whose cause is not for the owner's eyes.
	CodeJobFailed = "job_failed"
	// CodeJobTimeout is the code of an attempt that ran past its kind's timeout.
	CodeJobTimeout = "job_timeout"
)

// PublicError is a job failure whose message the job's owner may read: the
// envelope shows Code and Message, while Err (the cause) only reaches the log and
// River's attempt errors. Any other error a worker returns shows as the generic
// "Job failed".
type PublicError struct {
	// Code is a stable machine code; CodeJobFailed when empty.
	Code string
	// Message is a sentence for the owner, free of internals.
	Message string
	// Err is the cause, for operators.
	Err error
}

// NewPublicError returns a PublicError with the given code, message and cause.
func NewPublicError(code, message string, cause error) *PublicError {
	return &PublicError{Code: code, Message: message, Err: cause}
}

// Error implements error: the message and the cause, for logs.
func (e *PublicError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *PublicError) Unwrap() error { return e.Err }

// ErrorInfo is the sanitized error of the envelope.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

var genericFailure = ErrorInfo{Code: CodeJobFailed, Message: "Job failed"}

// output is what the envelope layer stores on the job row (River metadata
// "output") at the end of every attempt that has something to say.
type output struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ErrorInfo      `json:"error,omitempty"`
}

// run is the state of one attempt, reachable from the worker's context.
type run struct {
	rt    *runtime
	jobID int64

	mu     sync.Mutex // serializes progress reports of this attempt
	result json.RawMessage
}

type runKey struct{}

func runFrom(ctx context.Context) (*run, bool) {
	r, ok := ctx.Value(runKey{}).(*run)
	return r, ok
}

// ErrNotInJob is returned by ReportProgress and SetResult outside a job's Work.
var ErrNotInJob = errors.New("jobs: not called from a registered job's Work")

// SetResult records v (JSON-encoded) as the job's result, shown in the envelope.
// A later call replaces an earlier one. Keep results small: they live on the job
// row.
func SetResult(ctx context.Context, v any) error {
	r, ok := runFrom(ctx)
	if !ok {
		return ErrNotInJob
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("jobs: encode result: %w", err)
	}
	r.mu.Lock()
	r.result = b
	r.mu.Unlock()
	return nil
}

// envelopeWorker wraps a kind's worker with the envelope layer: progress and
// result reporting through the context, the sanitized error, and the failure hook.
type envelopeWorker[T river.JobArgs] struct {
	inner river.Worker[T]
	kind  string
	rt    *runtime
}

// Middleware is the wrapped worker's.
func (w *envelopeWorker[T]) Middleware(job *rivertype.JobRow) []rivertype.WorkerMiddleware {
	return w.inner.Middleware(job)
}

// NextRetry is the wrapped worker's.
func (w *envelopeWorker[T]) NextRetry(job *river.Job[T]) time.Time { return w.inner.NextRetry(job) }

// Timeout is the wrapped worker's, else the kind's.
func (w *envelopeWorker[T]) Timeout(job *river.Job[T]) time.Duration {
	if d := w.inner.Timeout(job); d != 0 {
		return d
	}
	if k, ok := w.rt.reg.lookup(w.kind); ok {
		return k.timeout
	}
	return DefaultTimeout
}

// Work runs the wrapped worker with the attempt's state in ctx, then stores its
// output and reports a final failure.
func (w *envelopeWorker[T]) Work(ctx context.Context, job *river.Job[T]) (err error) {
	r := &run{rt: w.rt, jobID: job.ID}
	ctx = context.WithValue(ctx, runKey{}, r)
	w.rt.hub.wake(job.ID) // streams on this host see the job start without waiting for a poll
	defer func() {
		if p := recover(); p != nil {
			w.rt.finish(ctx, job.JobRow, r, fmt.Errorf("panic: %v", p))
			panic(p) // River records the panic and its trace
		}
	}()
	err = w.inner.Work(ctx, job)
	if databaseLost(ctx, job.JobRow, err) {
		w.rt.log.WarnContext(ctx, "jobs: the database went away during the job; it runs again shortly",
			"job_id", job.ID, "kind", job.Kind, "error", err)
		err = river.JobSnooze(databaseSnooze)
	}
	w.rt.finish(ctx, job.JobRow, r, err)
	return err
}

// A job that failed because the database went away (a restart, a failover) did
// not fail: its transactions were rolled back, and it runs again databaseSnooze
// later, without using up an attempt (a snooze), up to maxDatabaseSnoozes times;
// after that the error counts as an attempt's failure like any other. The bound
// keeps an error taken for a lost database by mistake from looping.
const (
	databaseSnooze     = 2 * time.Second
	maxDatabaseSnoozes = 5
)

// databaseLost reports whether the attempt's err is a lost database
// (store.Unavailable) that may still be snoozed.
func databaseLost(ctx context.Context, row *rivertype.JobRow, err error) bool {
	if err == nil || ctx.Err() != nil || !store.Unavailable(err) {
		return false
	}
	var meta struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(row.Metadata, &meta)
	return meta.Snoozes < maxDatabaseSnoozes
}

// finish stores the attempt's output and, when the attempt was the job's last
// and it failed, reports the failure.
func (rt *runtime) finish(ctx context.Context, row *rivertype.JobRow, r *run, err error) {
	r.mu.Lock()
	out := output{Result: r.result, Error: publicError(ctx, err)}
	r.mu.Unlock()
	// An earlier attempt may have left an error behind: overwrite it.
	if out.Result != nil || out.Error != nil || row.Attempt > 1 {
		if recErr := river.RecordOutput(ctx, out); recErr != nil {
			rt.log.WarnContext(ctx, "jobs: record job output", "job_id", row.ID, "kind", row.Kind, "error", recErr)
		}
	}
	if finalFailure(ctx, row, err) {
		info := genericFailure
		if out.Error != nil {
			info = *out.Error
		}
		rt.failed(ctx, row, info)
	}
}

// publicError is the sanitized form of a worker's error, or nil when the attempt
// succeeded, was cancelled, snoozed, or stopped by a shutdown.
func publicError(ctx context.Context, err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	var pub *PublicError
	var cancelErr *rivertype.JobCancelError
	hasPublic := errors.As(err, &pub) && pub.Message != ""
	// A worker that cancels its job with river.JobCancel may give the owner a reason.
	if !countsAsFailure(ctx, err) && !(hasPublic && errors.As(err, &cancelErr)) {
		return nil
	}
	if hasPublic {
		code := pub.Code
		if code == "" {
			code = CodeJobFailed
		}
		return &ErrorInfo{Code: code, Message: pub.Message}
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return &ErrorInfo{Code: CodeJobTimeout, Message: "The job ran longer than its time limit."}
	}
	info := genericFailure
	return &info
}

// countsAsFailure reports whether River will count err as a failed attempt,
// rather than a cancel, a snooze, or a shutdown that puts the job back.
func countsAsFailure(ctx context.Context, err error) bool {
	var cancelErr *rivertype.JobCancelError
	var snoozeErr *rivertype.JobSnoozeError
	switch {
	case errors.As(err, &cancelErr), errors.As(err, &snoozeErr):
		return false
	case errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely):
		return false
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) && errors.Is(err, context.Canceled):
		return false // the client is stopping; River makes the job available again
	}
	return true
}

// finalFailure reports whether err ends the job as failed: River discards it.
func finalFailure(ctx context.Context, row *rivertype.JobRow, err error) bool {
	return err != nil && countsAsFailure(ctx, err) && row.Attempt >= row.MaxAttempts
}

// FailureEvent describes a job that failed for good.
type FailureEvent struct {
	JobID   int64
	Kind    string
	UserID  uuid.UUID // the owner; FailureFunc is only called for owned jobs
	Attempt int
	Error   ErrorInfo // the sanitized error, as the envelope shows it
	At      time.Time
}

// FailureFunc is told about every owned job that fails for good, after the
// failure is written to system_events. The messenger plugs in here to alert the
// owner's paired chat. It runs in the worker, so it must return quickly (enqueue
// a delivery job rather than deliver); ctx outlives the job's own cancellation.
type FailureFunc func(ctx context.Context, ev FailureEvent)

// failed records a final failure for the job's owner: a system_events row, then
// the failure hook. System jobs (no owner) are only logged.
func (rt *runtime) failed(ctx context.Context, row *rivertype.JobRow, info ErrorInfo) {
	owner := ownerOf(row.Metadata)
	rt.log.WarnContext(ctx, "jobs: job failed", "job_id", row.ID, "kind", row.Kind,
		"attempt", row.Attempt, "owner", owner, "code", info.Code)
	if owner == uuid.Nil {
		return
	}
	// The job's context may be done (a timeout); the record must still be written.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ev := FailureEvent{JobID: row.ID, Kind: row.Kind, UserID: owner, Attempt: row.Attempt, Error: info, At: time.Now()}
	if err := insertFailureEvent(wctx, rt.pool, ev); err != nil {
		rt.log.ErrorContext(ctx, "jobs: record job failure", "job_id", row.ID, "error", err)
	}
	if rt.failureFunc != nil {
		rt.failureFunc(wctx, ev)
	}
}
