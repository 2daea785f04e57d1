package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// periodicRegistry is a registry with one per-user schedule, so that the
// periodic table holds jobs.user_schedule too.
func periodicRegistry(t *testing.T) *jobs.Registry {
	t.Helper()
	reg := jobs.NewRegistry()
	require.NoError(t, jobs.RegisterTestNoop(reg))
	require.NoError(t, reg.ScheduleUserDaily(jobs.UserDaily{Name: "test", Hour: 0, Minute: 0,
		ArgsFunc: func(uuid.UUID, string) river.JobArgs { return jobs.TestNoopArgs{} }}))
	return reg
}

// TestPeriodicJobsInsertOncePerPeriod: two hosts that both act as the leader in
// one period (a stalled leader and its successor) insert each periodic job
// once: the second insert is skipped as a duplicate.
func TestPeriodicJobsInsertOncePerPeriod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := testPool(t)
	svc, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: periodicRegistry(t),
		UserScheduleInterval: time.Hour})
	require.NoError(t, err)

	first, err := jobs.InsertPeriodic(ctx, svc)
	require.NoError(t, err)
	second, err := jobs.InsertPeriodic(ctx, svc)
	require.NoError(t, err)
	kinds := []string{jobs.KindPurge, jobs.KindPruneProgress, jobs.KindTrainClassifier, jobs.KindUserSchedule}
	require.Len(t, first, len(kinds))
	for _, kind := range kinds {
		require.False(t, first[kind], "%s: the first leader inserts it", kind)
		require.True(t, second[kind], "%s: a second leader in the same period inserts nothing", kind)
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, kind).Scan(&n))
		require.Equal(t, 1, n, kind)
	}
}

// TestTwoWorkingHostsFireAPeriodicJobOncePerPeriod starts two working hosts on
// one database with jobs.user_schedule every second, and counts its runs: one
// per period at most (River runs the schedules on the elected leader alone),
// where two hosts firing each would make about twice as many.
func TestTwoWorkingHostsFireAPeriodicJobOncePerPeriod(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := testPool(t)
	const every = time.Second
	begin := time.Now()
	for range 2 {
		svc, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: periodicRegistry(t),
			UserScheduleInterval: every, StopTimeout: time.Second})
		require.NoError(t, err)
		require.NoError(t, svc.Start(ctx))
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, svc.Stop(stopCtx))
		})
	}
	count := func() int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, jobs.KindUserSchedule).Scan(&n))
		return n
	}
	// Wait for 5 runs (generous deadline for a loaded machine), then compare
	// the count with the periods that have passed.
	deadline := time.Now().Add(30 * time.Second)
	for count() < 5 {
		require.True(t, time.Now().Before(deadline), "the periodic job did not run 5 times in 30 s (%d)", count())
		time.Sleep(50 * time.Millisecond)
	}
	n, periods := count(), int(time.Since(begin)/every)
	require.LessOrEqual(t, n, periods+1, "%d runs in %d periods: the hosts fired it twice", n, periods)
}
