package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// KindTestNoop is a job that does nothing but leave a trace of each run. The host
// registers it only when LECTERN_TEST_JOBS is true, for tests that drive real
// lectern serve processes (the scale-out test, docs/operations.md "Scaling
// out"); a production host never has it.
const KindTestNoop = "test.noop"

// Progress messages of a test.noop run. An attempt writes MessageTestStarted as
// it begins, and MessageTestFinished in the transaction that completes the job,
// so the finished rows count the runs that completed: exactly one per job when
// no job ran twice.
const (
	MessageTestStarted  = "started"
	MessageTestFinished = "finished"
)

// maxTestNoopSleep bounds TestNoopArgs.SleepMS; the kind's timeout is above it.
const maxTestNoopSleep = 5 * time.Second

// TestNoopArgs are the arguments of test.noop.
type TestNoopArgs struct {
	// SleepMS is how long the run waits between its two traces, 0 to 5000.
	SleepMS int `json:"sleep_ms"`
}

// Kind implements river.JobArgs.
func (TestNoopArgs) Kind() string { return KindTestNoop }

// ValidateArgs keeps the sleep within the kind's timeout.
func (a TestNoopArgs) ValidateArgs() error {
	if a.SleepMS < 0 || time.Duration(a.SleepMS)*time.Millisecond > maxTestNoopSleep {
		return &FieldError{Field: "sleep_ms", Message: fmt.Sprintf("must be from 0 to %d", maxTestNoopSleep.Milliseconds())}
	}
	return nil
}

// TestNoopTrace is the data of a test.noop progress event: which process ran
// which attempt.
type TestNoopTrace struct {
	PID     int `json:"pid"`
	Attempt int `json:"attempt"`
}

// RegisterTestNoop adds test.noop, which the ops key and admins may enqueue.
func RegisterTestNoop(reg *Registry) error {
	return Register(reg, KindSpec[TestNoopArgs]{
		Worker:    &testNoopWorker{},
		Timeout:   maxTestNoopSleep + 2*time.Second,
		Enqueuers: EnqueueAdmin | EnqueueOps,
	})
}

type testNoopWorker struct {
	river.WorkerDefaults[TestNoopArgs]
}

// Work reports that it started, waits, and then completes the job in the same
// transaction that stores its finished trace.
func (w *testNoopWorker) Work(ctx context.Context, job *river.Job[TestNoopArgs]) error {
	r, ok := runFrom(ctx)
	if !ok {
		return ErrNotInJob
	}
	trace, err := json.Marshal(TestNoopTrace{PID: os.Getpid(), Attempt: job.Attempt})
	if err != nil {
		return fmt.Errorf("jobs: test.noop: %w", err)
	}
	if err := Report(ctx, Progress{Message: MessageTestStarted, Data: trace}); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(job.Args.SleepMS) * time.Millisecond):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return pgx.BeginFunc(ctx, r.rt.pool, func(tx pgx.Tx) error {
		finished := &progressReq{jobID: job.ID, p: Progress{Message: MessageTestFinished, Data: trace}}
		if err := insertProgressBatch(ctx, tx, []*progressReq{finished}); err != nil {
			return err
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("jobs: test.noop: complete: %w", err)
		}
		return nil
	})
}
