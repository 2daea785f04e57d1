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

// SyncArgs are refmanager.sync's arguments: none when a user asks for a sync;
// the hourly schedule names the user and the local date and hour, so that each
// hour's insert is unique. The job's owner is whose library it syncs.
type SyncArgs struct {
	User uuid.UUID `json:"user,omitzero"`
	Date string    `json:"date,omitempty"`
	Hour int       `json:"hour,omitempty"`
}

// Kind implements river.JobArgs.
func (SyncArgs) Kind() string { return KindSync }

type syncWorker struct {
	river.WorkerDefaults[SyncArgs]
	syncer   *Syncer
	projects Projects
}

// Projects lists a user's projects with the papers linked to them.
type Projects func(ctx context.Context, userID uuid.UUID) ([]ProjectPapers, error)

func (w *syncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	owner := jobs.OwnerOf(job.JobRow)
	if owner == uuid.Nil {
		return jobs.NewPublicError("no_owner", "refmanager.sync syncs one user's library; enqueue it as that user.", nil)
	}
	if job.Args.User != uuid.Nil && job.Args.User != owner {
		return jobs.NewPublicError("bad_user", "refmanager.sync syncs its owner's library only.", nil)
	}
	_ = jobs.ReportProgress(ctx, 0, 1, "reading what changed in Zotero")
	c, err := w.syncer.open(ctx, owner)
	if err != nil {
		return publicError(err)
	}
	rep, err := w.syncer.runOpen(ctx, owner, c)
	if err != nil {
		return publicError(err)
	}
	_ = jobs.ReportProgress(ctx, 1, 2, fmt.Sprintf("%d added, %d updated, %d removed; filing project papers", rep.Added, rep.Updated, rep.Removed))
	result := map[string]any{"pull": rep}
	if w.projects != nil {
		projects, err := w.projects(ctx, owner)
		if err != nil {
			return err
		}
		pushed, err := w.syncer.pushOpen(ctx, owner, c, projects)
		if err != nil {
			return publicError(err)
		}
		result["push"] = pushed
	}
	_ = jobs.ReportProgress(ctx, 2, 2, "done")
	return jobs.SetResult(ctx, result)
}

// publicError says what went wrong in words a user can act on; the failures of
// the user's own setup are not retried.
func publicError(err error) error {
	switch {
	case errors.Is(err, ErrNotConfigured):
		return river.JobCancel(jobs.NewPublicError("not_configured", ErrNotConfigured.Error(), err))
	case errors.Is(err, ErrNoPlugin):
		return river.JobCancel(jobs.NewPublicError("no_plugin", "The Zotero plugin is not running on this host; an admin can enable it under Plugins.", err))
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

// syncMinute is the minute past each hour the scheduled syncs run.
const syncMinute = 17

// RegisterJobs adds refmanager.sync, both ways: it brings the library in, then
// files each project's papers into the project's collection (projects lists
// them; nil pushes nothing). It runs hourly for every user who set a key (users
// lists them), and whenever a user asks for it (the "sync now" button); one runs
// per user at a time, so a sync still running when the next hour comes is not
// doubled.
func RegisterJobs(reg *jobs.Registry, s *Syncer, users func(ctx context.Context) (map[uuid.UUID]bool, error), projects Projects) error {
	err := jobs.Register(reg, jobs.KindSpec[SyncArgs]{
		Worker:      &syncWorker{syncer: s, projects: projects},
		MaxAttempts: 3,
		Timeout:     pushTimeout + 30*time.Minute,
		Enqueuers:   jobs.EnqueueUser,
		OnePerOwner: true,
	})
	if err != nil || users == nil {
		return err
	}
	for hour := range 24 {
		err := reg.ScheduleUserDaily(jobs.UserDaily{
			Name: fmt.Sprintf("%s %02d:%02d", KindSync, hour, syncMinute), Hour: hour, Minute: syncMinute,
			ArgsFunc: func(user uuid.UUID, date string) river.JobArgs { return SyncArgs{User: user, Date: date, Hour: hour} },
			Only:     users,
		})
		if err != nil {
			return err
		}
	}
	return nil
}
