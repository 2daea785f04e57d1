package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// TestJobsOfAStoppedProcessAreGivenBack: a job left "running" by a process that
// died (no session holds its liveness lock) is given back to the queue at once and
// finishes, with the reason in its errors; a job of a process that still holds its
// lock is left alone however long it runs, until that process goes too.
func TestJobsOfAStoppedProcessAreGivenBack(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{configure: func(cfg *jobs.Config, _ *jobs.Registry) {
		cfg.RescueInterval = 100 * time.Millisecond
	}})
	ctx := context.Background()

	// A live process: its liveness lock is held on a session of its own.
	live, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = live.Close(context.Background()) })
	_, err = live.Exec(ctx, `SELECT pg_advisory_lock(hashtext('lectern.jobs.instance'), hashtext('lectern_live_1'))`)
	require.NoError(t, err)

	running := func(client string) int64 {
		var id int64
		require.NoError(t, b.pool.QueryRow(ctx, `
			INSERT INTO river_job (kind, args, state, attempt, max_attempts, attempted_at, attempted_by, queue, priority, metadata)
			VALUES ('test.validated', '{}', 'running', 1, 1, now(), ARRAY[$1], 'default', 1, '{}')
			RETURNING id`, client).Scan(&id))
		return id
	}
	state := func(id int64) (s string, errs int) {
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT state, coalesce(cardinality(errors), 0) FROM river_job WHERE id = $1`, id).Scan(&s, &errs))
		return s, errs
	}
	dead, alive := running("lectern_dead_1"), running("lectern_live_1")

	require.Eventually(t, func() bool { s, _ := state(dead); return s == "completed" }, 30*time.Second, 20*time.Millisecond,
		"the dead process's job is given back and runs")
	var reason string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT errors[1]->>'error' FROM river_job WHERE id = $1`, dead).Scan(&reason))
	require.Contains(t, reason, "The process running this job stopped")

	time.Sleep(time.Second) // ten rescue rounds
	s, errs := state(alive)
	require.Equal(t, "running", s, "a live process's job is not taken from it")
	require.Zero(t, errs)

	require.NoError(t, live.Close(ctx)) // the live process dies
	require.Eventually(t, func() bool { s, _ := state(alive); return s == "completed" }, 30*time.Second, 20*time.Millisecond,
		"once its process is gone, its job is given back too")
	var attempts int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT attempt FROM river_job WHERE id = $1`, alive).Scan(&attempts))
	require.Equal(t, 2, attempts, "run once more, not twice")
	var maxAttempts int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT max_attempts FROM river_job WHERE id = $1`, alive).Scan(&maxAttempts))
	require.Equal(t, 2, maxAttempts, "the abandoned attempt, its only one, did not count against the job")
}
