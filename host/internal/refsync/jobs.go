package refsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// KindSync is one user's sync of their reference-manager library.
const KindSync = "refmanager.sync"

// SyncArgs are refmanager.sync's arguments: none; the job's owner is whose
// library it syncs.
type SyncArgs struct{}

// Kind implements river.JobArgs.
func (SyncArgs) Kind() string { return KindSync }

type syncWorker struct {
	river.WorkerDefaults[SyncArgs]
	syncer *Syncer
}

func (w *syncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	owner := jobs.OwnerOf(job.JobRow)
	if owner == uuid.Nil {
		return jobs.NewPublicError("no_owner", "refmanager.sync syncs one user's library; enqueue it as that user.", nil)
	}
	_ = jobs.ReportProgress(ctx, 0, 1, "reading what changed in Zotero")
	rep, err := w.syncer.Run(ctx, owner)
	if err != nil {
		return publicError(err)
	}
	_ = jobs.ReportProgress(ctx, 1, 1, fmt.Sprintf("%d added, %d updated, %d removed", rep.Added, rep.Updated, rep.Removed))
	return jobs.SetResult(ctx, rep)
}

// publicError says what went wrong in words a user can act on; the failures of
// the user's own setup are not retried.
func publicError(err error) error {
	switch {
	case errors.Is(err, ErrNotConfigured):
		return river.JobCancel(jobs.NewPublicError("not_configured", ErrNotConfigured.Error(), err))
	case protocol.CodeOf(err) == protocol.CodeUnauthorized:
		return river.JobCancel(jobs.NewPublicError("key_refused",
			"Zotero refused your API key: check it in Settings, Integrations, and that it may read your library.", err))
	case protocol.CodeOf(err) == protocol.CodeRateLimited:
		return jobs.NewPublicError("rate_limited", "Zotero asked us to slow down; the sync will try again shortly.", err)
	case protocol.CodeOf(err) == protocol.CodeUnavailable:
		return jobs.NewPublicError("unavailable", "Zotero could not be reached; the sync will try again shortly.", err)
	}
	return err
}

// RegisterJobs adds refmanager.sync: a user enqueues it for themselves (the
// "sync now" button); one runs per user at a time.
func RegisterJobs(reg *jobs.Registry, s *Syncer) error {
	return jobs.Register(reg, jobs.KindSpec[SyncArgs]{
		Worker:      &syncWorker{syncer: s},
		MaxAttempts: 3,
		Timeout:     30 * time.Minute,
		Enqueuers:   jobs.EnqueueUser,
		OnePerOwner: true,
	})
}
