package enrich

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// Args are the arguments of a paper.enrich job. The job runs for its owner, who is
// also named here so that one user's queued job for a paper absorbs their next
// request for it without touching another user's.
type Args struct {
	PaperID uuid.UUID `json:"paper_id"`
	UserID  uuid.UUID `json:"user_id"`
}

// Kind names the job.
func (Args) Kind() string { return "paper.enrich" }

// InsertOpts make a request for a paper that already waits or runs for the same
// user answer with that job instead of a second one.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
}

// DefaultRetries is how long the job waits before each new try while the sources
// cannot be reached: three more tries over about an hour, then the PDF's fields
// stay, marked unverified, until the paper is updated from the sources again.
var DefaultRetries = []time.Duration{time.Minute, 10 * time.Minute, time.Hour}

// Worker runs paper.enrich.
type Worker struct {
	river.WorkerDefaults[Args]
	Service *Service
	// Retries are the waits before each new try (see DefaultRetries, the default).
	Retries []time.Duration
}

// Work enriches the paper for the job's owner. Unreachable sources snooze the job
// (a snooze is not a failure: no error is logged or shown) until Retries run out;
// the job then ends well, its result saying the sources could not be reached.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	out, err := w.Service.Enrich(ctx, jobs.OwnerOf(job.JobRow), job.Args.PaperID)
	if errors.Is(err, ErrSourcesUnreachable) {
		if wait, ok := w.retryWait(snoozes(job.Metadata)); ok {
			_ = jobs.SetResult(ctx, map[string]any{"paper_id": out.PaperID, "outcome": out.Outcome,
				"next_try_in_seconds": int(wait.Seconds())})
			return river.JobSnooze(wait)
		}
		err = nil
	}
	if err != nil {
		return err
	}
	return jobs.SetResult(ctx, out)
}

// retryWait is the wait before the next try after n snoozes, and false when the
// tries are used up.
func (w *Worker) retryWait(n int) (time.Duration, bool) {
	retries := w.Retries
	if retries == nil {
		retries = DefaultRetries
	}
	if n < 0 || n >= len(retries) {
		return 0, false
	}
	return retries[n], true
}

// snoozes is how often River snoozed the job so far (its metadata "snoozes").
func snoozes(metadata []byte) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(metadata, &m)
	return m.Snoozes
}

// Queue is the job queue paper.enrich runs on: its own, so lookups that wait on
// slow sources never hold up the reading of PDFs or the answers.
const Queue = "enrich"

// RegisterJobs adds paper.enrich to reg. It is internal: the host enqueues it
// after reading a PDF (EnqueueTx) and for the paper page's button (the API).
func RegisterJobs(reg *jobs.Registry, w *Worker) error {
	return jobs.Register(reg, jobs.KindSpec[Args]{
		Worker:      w,
		Queue:       Queue,
		MaxAttempts: 3,
		Timeout:     5 * time.Minute,
	})
}

// Enqueuer inserts jobs; jobs.Service is one.
type Enqueuer interface {
	EnqueueTx(ctx context.Context, tx pgx.Tx, owner uuid.UUID, args river.JobArgs) (*jobs.Envelope, error)
	Enqueue(ctx context.Context, owner uuid.UUID, args river.JobArgs) (*jobs.Envelope, error)
}

// EnqueueTxFunc returns the function ingest calls in the transaction that stores
// a paper's text: the paper's enrichment is enqueued with it for the reader, so it
// is never lost. A job without an owner enqueues nothing.
func EnqueueTxFunc(q Enqueuer) func(ctx context.Context, tx pgx.Tx, paperID, owner uuid.UUID) error {
	return func(ctx context.Context, tx pgx.Tx, paperID, owner uuid.UUID) error {
		if owner == uuid.Nil {
			return nil
		}
		_, err := q.EnqueueTx(ctx, tx, owner, Args{PaperID: paperID, UserID: owner})
		return err
	}
}
