package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

type briefingArgs struct {
	UserID    uuid.UUID `json:"user_id"`
	LocalDate string    `json:"local_date"`
}

func (briefingArgs) Kind() string { return "test.briefing" }

func TestUserScheduleEnqueuesOncePerLocalDay(t *testing.T) {
	t.Parallel()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	// Five minutes ago in Tokyo: due there, and not in UTC or New York.
	fire := time.Now().Add(-5 * time.Minute).In(tokyo)

	b := setup(t, setupOpts{configure: func(cfg *jobs.Config, reg *jobs.Registry) {
		cfg.UserScheduleInterval = time.Hour // the test runs the dispatcher itself
		require.NoError(t, jobs.Register(reg, jobs.KindSpec[briefingArgs]{
			Worker: river.WorkFunc(func(context.Context, *river.Job[briefingArgs]) error { return nil })}))
		require.NoError(t, reg.ScheduleUserDaily(jobs.UserDaily{
			Name: "briefing", Hour: fire.Hour(), Minute: fire.Minute(),
			ArgsFunc: func(user uuid.UUID, localDate string) river.JobArgs {
				return briefingArgs{UserID: user, LocalDate: localDate}
			},
		}))
	}})
	ctx := context.Background()
	tokyoUser := createUser(t, b.pool, "tokyo", "user", "Asia/Tokyo")
	createUser(t, b.pool, "newyork", "user", "America/New_York")
	deleted := createUser(t, b.pool, "gone", "user", "Asia/Tokyo")
	_, err = b.pool.Exec(ctx, `UPDATE users SET deleted_at = now() WHERE id = $1`, deleted)
	require.NoError(t, err)

	for range 2 { // a second check the same day enqueues nothing new
		env, err := b.svc.Enqueue(ctx, uuid.Nil, jobs.UserScheduleArgs{})
		require.NoError(t, err)
		b.waitState(t, opsOnly, env.ID, jobs.StateSucceeded)
	}

	rows, err := b.svc.Client().JobList(ctx, river.NewJobListParams().Kinds("test.briefing"))
	require.NoError(t, err)
	require.Len(t, rows.Jobs, 1, "one delivery: the live Tokyo user, once")
	var args briefingArgs
	require.NoError(t, json.Unmarshal(rows.Jobs[0].EncodedArgs, &args))
	require.Equal(t, briefingArgs{UserID: tokyoUser, LocalDate: fire.Format("2006-01-02")}, args)

	// The delivery belongs to its user.
	require.Equal(t, "test.briefing", b.get(t, userCaller(tokyoUser), rows.Jobs[0].ID).Kind)
}
