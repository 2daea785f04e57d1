package pulse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// KindNightly makes one user's deck.
const KindNightly = "pulse.nightly"

// NightlyArgs are the arguments of pulse.nightly: the local date of the deck,
// empty for today in the owner's time zone (a deck asked for by hand), and the
// user the schedule made it for (so that its unique-by-arguments insert is per
// user; the job's owner is who it runs for).
type NightlyArgs struct {
	Date string    `json:"date,omitempty"`
	User uuid.UUID `json:"user,omitzero"`
}

// Kind implements river.JobArgs.
func (NightlyArgs) Kind() string { return KindNightly }

// Today returns the user's local date (their users.timezone).
type Today func(ctx context.Context, userID uuid.UUID) (string, error)

type nightlyWorker struct {
	river.WorkerDefaults[NightlyArgs]
	gen   *Generator
	train func(ctx context.Context, owner uuid.UUID) error
	today Today
}

func (w *nightlyWorker) Work(ctx context.Context, job *river.Job[NightlyArgs]) error {
	owner := jobs.OwnerOf(job.JobRow)
	if owner == uuid.Nil {
		return jobs.NewPublicError("no_owner", "pulse.nightly makes one user's deck; enqueue it as that user.", nil)
	}
	if job.Args.User != uuid.Nil && job.Args.User != owner {
		return jobs.NewPublicError("bad_user", "pulse.nightly makes its owner's deck only.", nil)
	}
	date := job.Args.Date
	if date == "" {
		var err error
		if date, err = w.today(ctx, owner); err != nil {
			return err
		}
	} else if _, err := time.Parse(time.DateOnly, date); err != nil {
		return jobs.NewPublicError("bad_date", "The deck's date must be YYYY-MM-DD.", err)
	}
	_ = jobs.ReportProgress(ctx, 0, 1, "finding and scoring new papers")
	d, err := w.gen.Run(ctx, owner, date)
	if err != nil {
		return err
	}
	// The classifier learns from the thumbs of the day before.
	if w.train != nil {
		if err := w.train(ctx, owner); err != nil && !errors.Is(err, jobs.ErrAlreadyActive) {
			w.gen.log().WarnContext(ctx, "pulse: enqueue the classifier's training", "user", owner, "error", err)
		}
	}
	_ = jobs.ReportProgress(ctx, 1, 1, fmt.Sprintf("%d papers in the deck", len(d.Cards)))
	return jobs.SetResult(ctx, map[string]any{"deck_date": d.Date, "cards": len(d.Cards), "stale": d.Stale,
		"degraded_reason": d.DegradedReason})
}

type trainWorker struct {
	river.WorkerDefaults[jobs.TrainClassifierArgs]
	trainer *Trainer
}

// Work trains the owner's classifier; with no owner (the nightly run, or the ops
// key alone), every user's with enough thumbs.
func (w *trainWorker) Work(ctx context.Context, job *river.Job[jobs.TrainClassifierArgs]) error {
	owner := jobs.OwnerOf(job.JobRow)
	if owner != uuid.Nil {
		res, err := w.trainer.Train(ctx, owner)
		if err != nil {
			return err
		}
		return jobs.SetResult(ctx, res)
	}
	users, err := w.trainer.Store.UsersWithFeedback(ctx)
	if err != nil {
		return err
	}
	trained, skipped := 0, 0
	for i, u := range users {
		_ = jobs.ReportProgress(ctx, int64(i), int64(len(users)), "training the classifiers")
		res, err := w.trainer.Train(ctx, u)
		if err != nil {
			return err
		}
		if res.Trained {
			trained++
		} else {
			skipped++
		}
	}
	return jobs.SetResult(ctx, map[string]any{"trained": trained, "skipped": skipped})
}

// RegisterJobs adds Pulse's kinds to reg: pulse.nightly, scheduled per user at
// the hour they chose (default 06:00 local) and enqueued by a user for
// themselves to make today's deck now; and the real pulse.train_classifier,
// which a user may enqueue for themselves and an admin or the ops key for all.
// Neither runs twice at once for one owner.
func RegisterJobs(reg *jobs.Registry, gen *Generator, trainer *Trainer, today Today, enqueue func(ctx context.Context, owner uuid.UUID, args river.JobArgs) error) error {
	err := jobs.Register(reg, jobs.KindSpec[jobs.TrainClassifierArgs]{
		Worker:      &trainWorker{trainer: trainer},
		MaxAttempts: 1,
		Timeout:     time.Hour,
		Enqueuers:   jobs.EnqueueUser | jobs.EnqueueAdmin | jobs.EnqueueOps,
		OnePerOwner: true,
	})
	if err != nil {
		return err
	}
	train := func(ctx context.Context, owner uuid.UUID) error {
		if enqueue == nil {
			return nil
		}
		return enqueue(ctx, owner, jobs.TrainClassifierArgs{})
	}
	err = jobs.Register(reg, jobs.KindSpec[NightlyArgs]{
		Worker:      &nightlyWorker{gen: gen, train: train, today: today},
		MaxAttempts: 2,
		Timeout:     30 * time.Minute,
		Enqueuers:   jobs.EnqueueUser,
		OnePerOwner: true,
	})
	if err != nil {
		return err
	}
	return reg.ScheduleUserDaily(jobs.UserDaily{
		Name: KindNightly, Hour: DefaultHour,
		ArgsFunc: func(user uuid.UUID, date string) river.JobArgs { return NightlyArgs{Date: date, User: user} },
		Times:    gen.Store.Hours,
	})
}
