package refsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// KindSyncInstance is the sync of the group libraries an admin set up for the
// whole instance.
const KindSyncInstance = "refmanager.sync_instance"

// SyncInstanceArgs are refmanager.sync_instance's (empty) arguments. The job has
// no owner: what it brings belongs to the instance.
type SyncInstanceArgs struct{}

// Kind implements river.JobArgs.
func (SyncInstanceArgs) Kind() string { return KindSyncInstance }

type syncInstanceWorker struct {
	river.WorkerDefaults[SyncInstanceArgs]
	syncer *Syncer
}

func (w *syncInstanceWorker) Work(ctx context.Context, job *river.Job[SyncInstanceArgs]) error {
	_ = jobs.ReportProgress(ctx, 0, 1, "reading what changed in the instance's Zotero group libraries")
	reps, err := w.syncer.RunInstance(ctx)
	if errors.Is(err, ErrInstanceNotConfigured) {
		// The hourly schedule runs whether or not an admin set anything up.
		return jobs.SetResult(ctx, map[string]any{"libraries": []Report{}, "configured": false})
	}
	if err != nil {
		return publicError(err)
	}
	added := 0
	for _, r := range reps {
		added += r.Added
	}
	_ = jobs.ReportProgress(ctx, 1, 1, fmt.Sprintf("%d new papers from %d group libraries", added, len(reps)))
	return jobs.SetResult(ctx, map[string]any{"libraries": reps, "configured": true})
}

// instanceSyncMinute is the minute past each hour the instance's sync runs
// (apart from the users' syncs at :17, so the two do not meet Zotero together).
const instanceSyncMinute = 47

// RegisterInstanceJobs adds refmanager.sync_instance: hourly, and whenever an
// admin or the ops key asks for it; one at a time.
func RegisterInstanceJobs(reg *jobs.Registry, s *Syncer) error {
	err := jobs.Register(reg, jobs.KindSpec[SyncInstanceArgs]{
		Worker:      &syncInstanceWorker{syncer: s},
		MaxAttempts: 3,
		Timeout:     30 * time.Minute,
		Enqueuers:   jobs.EnqueueAdmin | jobs.EnqueueOps,
		OnePerOwner: true,
	})
	if err != nil {
		return err
	}
	return reg.SchedulePeriodic(jobs.Periodic{Schedule: jobs.HourlyAt(instanceSyncMinute), Args: SyncInstanceArgs{}})
}
