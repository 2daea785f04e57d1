package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	_ "time/tzdata" // users' timezones must resolve on hosts without a zoneinfo database

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// userScheduleGrace is how late a per-user delivery may still be enqueued (for
// example after a restart across its time); older ones are skipped.
const userScheduleGrace = time.Hour

// localDateLayout is the form of the local date handed to UserDaily.ArgsFunc.
const localDateLayout = "2006-01-02"

// UserDaily is a per-user delivery that runs once a day at a local time in each
// live user's timezone (users.timezone), for example a morning briefing.
type UserDaily struct {
	// Name identifies the schedule; unique.
	Name string
	// Hour (0-23) and Minute (0-59) are the local time of day.
	Hour, Minute int
	// Weekdays limits the schedule to these local weekdays; empty means every day.
	Weekdays []time.Weekday
	// ArgsFunc builds the job of one user for one local date (YYYY-MM-DD). The
	// args must carry both the user and the date: the insert is unique by args,
	// which makes each delivery happen once however often the schedule is checked.
	// The job is owned by the user.
	ArgsFunc func(userID uuid.UUID, localDate string) river.JobArgs
	// Times, when set, gives the users who chose their own local time of day
	// for this schedule (read once per check); the others get Hour and Minute.
	Times func(ctx context.Context) (map[uuid.UUID]TimeOfDay, error)
	// Only, when set, gives the users the schedule is for (read once per check),
	// for example those who set up an integration; the others get no run.
	Only func(ctx context.Context) (map[uuid.UUID]bool, error)
}

// TimeOfDay is a local time of day.
type TimeOfDay struct{ Hour, Minute int }

// at is s at the time of day tod.
func (s UserDaily) at(tod TimeOfDay) UserDaily {
	if tod.Hour < 0 || tod.Hour > 23 || tod.Minute < 0 || tod.Minute > 59 {
		return s
	}
	s.Hour, s.Minute = tod.Hour, tod.Minute
	return s
}

// ScheduleUserDaily adds a per-user daily schedule. Register the kind its
// ArgsFunc returns too. Add schedules before New.
func (r *Registry) ScheduleUserDaily(s UserDaily) error {
	switch {
	case s.Name == "":
		return errors.New("jobs: user schedule: a name is required")
	case s.Hour < 0 || s.Hour > 23 || s.Minute < 0 || s.Minute > 59:
		return fmt.Errorf("jobs: user schedule %s: %02d:%02d is not a time of day", s.Name, s.Hour, s.Minute)
	case s.ArgsFunc == nil:
		return fmt.Errorf("jobs: user schedule %s: ArgsFunc is required", s.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, other := range r.schedules {
		if other.Name == s.Name {
			return fmt.Errorf("jobs: user schedule %s: already added", s.Name)
		}
	}
	s.Weekdays = slices.Clone(s.Weekdays)
	r.schedules = append(r.schedules, s)
	return nil
}

// dueDate returns the local date of the run of s that is due at now in loc: its
// local time has passed, less than grace ago. Today's and yesterday's runs are
// considered, so a run just before local midnight is not lost.
func (s UserDaily) dueDate(now time.Time, loc *time.Location, grace time.Duration) (string, bool) {
	local := now.In(loc)
	for back := range 2 {
		day := local.AddDate(0, 0, -back)
		fire := time.Date(day.Year(), day.Month(), day.Day(), s.Hour, s.Minute, 0, 0, loc)
		if fire.After(now) || now.Sub(fire) >= grace {
			continue
		}
		if len(s.Weekdays) > 0 && !slices.Contains(s.Weekdays, fire.Weekday()) {
			continue
		}
		return fire.Format(localDateLayout), true
	}
	return "", false
}

// delivery is one per-user run that is due.
type delivery struct {
	schedule  *UserDaily
	user      uuid.UUID
	localDate string
}

// dueDeliveries lists the runs of schedules due at now for users. A user whose
// timezone does not load follows UTC; badZone is told about it.
func dueDeliveries(now time.Time, users []userZone, schedules []UserDaily, times []map[uuid.UUID]TimeOfDay, grace time.Duration,
	badZone func(user uuid.UUID, zone string)) []delivery {
	zones := map[string]*time.Location{}
	var out []delivery
	for _, u := range users {
		loc, ok := zones[u.Timezone]
		if !ok {
			var err error
			loc, err = time.LoadLocation(u.Timezone)
			if err != nil {
				if badZone != nil {
					badZone(u.ID, u.Timezone)
				}
				loc = time.UTC
			}
			zones[u.Timezone] = loc
		}
		for i := range schedules {
			s := schedules[i]
			if i < len(times) {
				if tod, ok := times[i][u.ID]; ok {
					s = s.at(tod)
				}
			}
			if date, due := s.dueDate(now, loc, grace); due {
				out = append(out, delivery{schedule: &schedules[i], user: u.ID, localDate: date})
			}
		}
	}
	return out
}

// onlyTheirs drops the runs of schedules with Only for users not in it. When Only
// fails, that schedule runs for nobody this once (it is for a few users; running
// it for all would be wrong, late is not).
func (w *userScheduleWorker) onlyTheirs(ctx context.Context, due []delivery) []delivery {
	only := map[*UserDaily]map[uuid.UUID]bool{}
	for i := range w.rt.reg.schedules {
		s := &w.rt.reg.schedules[i]
		if s.Only == nil {
			continue
		}
		users, err := s.Only(ctx)
		if err != nil {
			w.rt.log.ErrorContext(ctx, "jobs: read the users of a schedule", "schedule", s.Name, "error", err)
			users = map[uuid.UUID]bool{}
		}
		only[s] = users
	}
	return keepOnly(due, only)
}

// keepOnly keeps the deliveries whose schedule has no user list in only, or
// whose user is in it.
func keepOnly(due []delivery, only map[*UserDaily]map[uuid.UUID]bool) []delivery {
	return slices.DeleteFunc(due, func(d delivery) bool {
		users, limited := only[d.schedule]
		return limited && !users[d.user]
	})
}

// UserScheduleArgs are the (empty) arguments of jobs.user_schedule.
type UserScheduleArgs struct{}

// Kind implements river.JobArgs.
func (UserScheduleArgs) Kind() string { return KindUserSchedule }

type userScheduleWorker struct {
	river.WorkerDefaults[UserScheduleArgs]
	rt *runtime
}

// insertBatch bounds one InsertMany of deliveries.
const insertBatch = 500

// Work enqueues the per-user deliveries due now.
func (w *userScheduleWorker) Work(ctx context.Context, job *river.Job[UserScheduleArgs]) error {
	users, err := liveUsers(ctx, w.rt.pool)
	if err != nil {
		return err
	}
	times := make([]map[uuid.UUID]TimeOfDay, len(w.rt.reg.schedules))
	for i, s := range w.rt.reg.schedules {
		if s.Times == nil {
			continue
		}
		if times[i], err = s.Times(ctx); err != nil {
			// Their own times unknown this once, users get the default time.
			w.rt.log.ErrorContext(ctx, "jobs: read users' times of a schedule", "schedule", s.Name, "error", err)
		}
	}
	due := dueDeliveries(time.Now(), users, w.rt.reg.schedules, times, userScheduleGrace, func(user uuid.UUID, zone string) {
		w.rt.log.WarnContext(ctx, "jobs: user timezone does not load; using UTC", "user_id", user, "timezone", zone)
	})
	due = w.onlyTheirs(ctx, due)
	params := make([]river.InsertManyParams, 0, len(due))
	for _, d := range due {
		args := d.schedule.ArgsFunc(d.user, d.localDate)
		opts, err := w.rt.insertOpts(args.Kind(), d.user)
		if err != nil {
			return fmt.Errorf("jobs: user schedule %s: %w", d.schedule.Name, err)
		}
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true}
		params = append(params, river.InsertManyParams{Args: args, InsertOpts: opts})
	}
	inserted := 0
	for chunk := range slices.Chunk(params, insertBatch) {
		res, err := w.rt.client.InsertMany(ctx, chunk)
		if err != nil {
			return fmt.Errorf("jobs: user schedule: enqueue deliveries: %w", err)
		}
		for _, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				inserted++
			}
		}
	}
	if inserted > 0 {
		w.rt.log.InfoContext(ctx, "jobs: enqueued per-user deliveries", "job_id", job.ID, "count", inserted)
	}
	return nil
}
