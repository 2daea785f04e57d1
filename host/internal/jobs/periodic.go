package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// Kinds the service registers itself.
const (
	// KindTrainClassifier trains the Pulse classifiers, nightly or when an admin
	// or the ops key enqueues it through POST /api/jobs (SPEC Pulse 4, Endpoints
	// rule 1).
	KindTrainClassifier = "pulse.train_classifier"
	// KindPurge is the daily purge of soft-deleted users and audit PII.
	KindPurge = "data.purge"
	// KindPruneProgress deletes the progress of jobs River no longer keeps.
	KindPruneProgress = "jobs.prune_progress"
	// KindUserSchedule enqueues the per-user deliveries that are due.
	KindUserSchedule = "jobs.user_schedule"
)

// progressGrace is how old orphaned progress must be before it is pruned.
const progressGrace = time.Hour

// periodicEntry is one periodic job: when it fires, the period it fires once
// in, and its arguments.
type periodicEntry struct {
	schedule river.PeriodicSchedule
	period   time.Duration
	args     river.JobArgs
}

// periodicTable is the one table of the host's periodic jobs. Times are UTC.
func periodicTable(rt *runtime) []periodicEntry {
	const day = 24 * time.Hour
	table := []periodicEntry{
		{dailyAt{hour: 2, minute: 0}, day, PurgeArgs{}},
		{dailyAt{hour: 2, minute: 30}, day, PruneProgressArgs{}},
		{dailyAt{hour: 3, minute: 30}, day, TrainClassifierArgs{}},
	}
	for _, p := range rt.reg.periodics {
		table = append(table, periodicEntry{p.Schedule, periodOf(p.Schedule), p.Args})
	}
	if len(rt.reg.schedules) > 0 {
		every := rt.cfg.UserScheduleInterval
		table = append(table, periodicEntry{river.PeriodicInterval(every), every, UserScheduleArgs{}})
	}
	return table
}

// minUniquePeriod is the shortest period River makes a job unique by; a
// shorter interval (tests only) gets no uniqueness.
const minUniquePeriod = time.Second

// insertOpts are the options of e's periodic insert: the kind's, and unique
// within e's period (a UTC day for the daily jobs). River runs the periodic
// schedules on the elected leader only; the uniqueness covers the moments two
// hosts might both act as leader (a stalled leader whose term ran out while
// another was elected), so that a daily job still runs once that day.
func (e periodicEntry) insertOpts(rt *runtime) (*river.InsertOpts, error) {
	opts, err := rt.insertOpts(e.args.Kind(), uuid.Nil)
	if err != nil {
		return nil, err
	}
	if e.period >= minUniquePeriod {
		opts.UniqueOpts = river.UniqueOpts{ByPeriod: e.period}
	}
	return opts, nil
}

// periodicJobs is River's form of periodicTable; River runs them on the
// elected leader host only.
func periodicJobs(rt *runtime) []*river.PeriodicJob {
	table := periodicTable(rt)
	out := make([]*river.PeriodicJob, 0, len(table))
	for _, entry := range table {
		out = append(out, river.NewPeriodicJob(entry.schedule, func() (river.JobArgs, *river.InsertOpts) {
			opts, err := entry.insertOpts(rt)
			if err != nil {
				// Every kind of the table is registered by registerBuiltins.
				panic(err)
			}
			return entry.args, opts
		}, &river.PeriodicJobOpts{ID: entry.args.Kind()}))
	}
	return out
}

// Periodic is a job without an owner that runs on a schedule, on the elected
// leader host only, for example an instance-wide sync.
type Periodic struct {
	// Schedule says when; HourlyAt and DailyAt make the common ones.
	Schedule river.PeriodicSchedule
	// Args is the job; its kind must be registered.
	Args river.JobArgs
}

// HourlyAt fires at minute past every hour.
func HourlyAt(minute int) river.PeriodicSchedule { return hourlyAt{minute: minute} }

// DailyAt fires once a day at hour:minute UTC.
func DailyAt(hour, minute int) river.PeriodicSchedule { return dailyAt{hour: hour, minute: minute} }

// SchedulePeriodic adds a periodic job to the host's table. Add it before New;
// one job per kind.
func (r *Registry) SchedulePeriodic(p Periodic) error {
	if p.Schedule == nil || p.Args == nil {
		return errors.New("jobs: periodic job: a schedule and args are required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, other := range r.periodics {
		if other.Args.Kind() == p.Args.Kind() {
			return fmt.Errorf("jobs: periodic job %s: already scheduled", p.Args.Kind())
		}
	}
	r.periodics = append(r.periodics, p)
	return nil
}

// periodOf is the period a schedule fires once in (its insert is unique within
// it); 0 for a schedule of another kind, which gets no uniqueness.
func periodOf(s river.PeriodicSchedule) time.Duration {
	switch s.(type) {
	case hourlyAt:
		return time.Hour
	case dailyAt:
		return 24 * time.Hour
	}
	return 0
}

// hourlyAt is a schedule that fires at minute past every hour.
type hourlyAt struct{ minute int }

// Next returns the first :minute strictly after t.
func (h hourlyAt) Next(t time.Time) time.Time {
	t = t.UTC()
	next := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), h.minute, 0, 0, time.UTC)
	if !next.After(t) {
		next = next.Add(time.Hour)
	}
	return next
}

// dailyAt is a schedule that fires once a day at hour:minute UTC.
type dailyAt struct{ hour, minute int }

// Next returns the first hour:minute UTC strictly after t.
func (d dailyAt) Next(t time.Time) time.Time {
	t = t.UTC()
	next := time.Date(t.Year(), t.Month(), t.Day(), d.hour, d.minute, 0, 0, time.UTC)
	if !next.After(t) {
		next = next.AddDate(0, 0, 1)
	}
	return next
}

// registerBuiltins adds the service's own kinds. pulse.train_classifier and
// data.purge keep a registration the host made first (the Pulse area registers
// its real trainer under the same args type).
func registerBuiltins(reg *Registry, rt *runtime) error {
	if !reg.has(KindTrainClassifier) {
		err := Register(reg, KindSpec[TrainClassifierArgs]{
			Worker:      &trainClassifierWorker{rt: rt},
			MaxAttempts: 1,
			Timeout:     time.Hour,
			Enqueuers:   EnqueueAdmin | EnqueueOps,
		})
		if err != nil {
			return err
		}
	}
	if !reg.has(KindPurge) {
		err := Register(reg, KindSpec[PurgeArgs]{
			Worker:    &purgeWorker{rt: rt},
			Timeout:   time.Hour,
			Enqueuers: EnqueueAdmin | EnqueueOps,
		})
		if err != nil {
			return err
		}
	}
	if err := Register(reg, KindSpec[PruneProgressArgs]{Worker: &pruneProgressWorker{rt: rt}}); err != nil {
		return err
	}
	return Register(reg, KindSpec[UserScheduleArgs]{Worker: &userScheduleWorker{rt: rt}, MaxAttempts: 1})
}

// TrainClassifierArgs are the (empty) arguments of pulse.train_classifier.
type TrainClassifierArgs struct{}

// Kind implements river.JobArgs.
func (TrainClassifierArgs) Kind() string { return KindTrainClassifier }

// trainClassifierWorker stands in for the Pulse trainer until the Pulse area
// registers its own worker for TrainClassifierArgs.
type trainClassifierWorker struct {
	river.WorkerDefaults[TrainClassifierArgs]
	rt *runtime
}

// Work logs that Pulse training is not built and succeeds.
func (w *trainClassifierWorker) Work(ctx context.Context, job *river.Job[TrainClassifierArgs]) error {
	w.rt.log.InfoContext(ctx, "jobs: Pulse classifier training is not built into this version; nothing was trained",
		"job_id", job.ID, "kind", job.Kind)
	return SetResult(ctx, map[string]any{"trained": 0, "reason": "pulse_training_not_built"})
}

// PurgeArgs are the (empty) arguments of data.purge.
type PurgeArgs struct{}

// Kind implements river.JobArgs.
func (PurgeArgs) Kind() string { return KindPurge }

type purgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	rt *runtime
}

// Work runs the host's purge function.
func (w *purgeWorker) Work(ctx context.Context, job *river.Job[PurgeArgs]) error {
	if w.rt.purgeFunc == nil {
		w.rt.log.WarnContext(ctx, "jobs: data.purge has no purge function configured; nothing was purged", "job_id", job.ID)
		return nil
	}
	if err := w.rt.purgeFunc(ctx); err != nil {
		return fmt.Errorf("jobs: data.purge: %w", err)
	}
	return nil
}

// PruneProgressArgs are the (empty) arguments of jobs.prune_progress.
type PruneProgressArgs struct{}

// Kind implements river.JobArgs.
func (PruneProgressArgs) Kind() string { return KindPruneProgress }

type pruneProgressWorker struct {
	river.WorkerDefaults[PruneProgressArgs]
	rt *runtime
}

// Work deletes the progress of jobs River has deleted.
func (w *pruneProgressWorker) Work(ctx context.Context, job *river.Job[PruneProgressArgs]) error {
	n, err := pruneProgress(ctx, w.rt.pool, progressGrace)
	if err != nil {
		return err
	}
	w.rt.log.InfoContext(ctx, "jobs: pruned progress of deleted jobs", "job_id", job.ID, "rows", n)
	return SetResult(ctx, map[string]int64{"deleted": n})
}
