package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

// newAPIHost starts an InsertOnly service on pool, the job queue of an API host
// (lectern serve --role api), whose streams poll only once a minute: whatever
// they see sooner was pushed to them.
func newAPIHost(t *testing.T, pool *pgxpool.Pool) *jobs.Service {
	t.Helper()
	reg := jobs.NewRegistry()
	newTestKinds().register(t, reg)
	svc, err := jobs.New(t.Context(), jobs.Config{
		Pool:              pool,
		Logger:            slog.New(slog.DiscardHandler),
		Registry:          reg,
		InsertOnly:        true,
		HeartbeatInterval: 200 * time.Millisecond,
		PollInterval:      time.Minute,
		StopTimeout:       time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, svc.Start(t.Context()))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, svc.Stop(stopCtx))
	})
	return svc
}

// TestAnAPIHostStreamsAJobAWorkerHostWorks runs two hosts on one database: an
// API host (InsertOnly) and a working host. A job enqueued through the API host
// is worked by the other host alone, and a stream opened on the API host gets
// every progress event and the done marker within seconds although it polls
// once a minute: progress rows and the working host's state changes reach it
// through LISTEN/NOTIFY.
func TestAnAPIHostStreamsAJobAWorkerHostWorks(t *testing.T) {
	t.Parallel()
	worker := setup(t)
	apiSvc := newAPIHost(t, worker.pool)
	api := &testBundle{pool: worker.pool, svc: apiSvc, server: serveAPI(t, apiSvc)}
	user := userCaller(worker.userA)

	env := api.create(t, user, "test.progress", map[string]any{"n": 20, "gate": true})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/jobs/%d/stream", api.server.URL, env.ID), nil)
	require.NoError(t, err)
	req.Header.Set(callerHeader, callerJSON(t, user))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	close(worker.kinds.progressGate) // the second half is reported while the API host's client watches
	res := readStream(t, resp.Body, 0)
	require.Equal(t, seqRange(1, 20), res.seqs, "every event, in order, once")
	require.NotNil(t, res.done)
	require.Equal(t, jobs.StateSucceeded, res.done.State)

	var attemptedBy []string
	require.NoError(t, worker.pool.QueryRow(t.Context(), `SELECT attempted_by FROM river_job WHERE id = $1`, env.ID).Scan(&attemptedBy))
	require.Equal(t, []string{worker.svc.Client().ID()}, attemptedBy, "the working host ran the job, the API host did not")
}

// TestAnAPIHostAloneWorksNoJob: with no working host, a job enqueued on an API
// host stays queued.
func TestAnAPIHostAloneWorksNoJob(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	apiSvc := newAPIHost(t, pool)
	api := &testBundle{pool: pool, svc: apiSvc, server: serveAPI(t, apiSvc)}
	env := api.create(t, opsOnly, "test.fail", map[string]any{})
	// River's producers fetch within their poll interval (1 s by default); give
	// them many times that to show none exists.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		require.Equal(t, jobs.StateQueued, api.get(t, opsOnly, env.ID).State)
		time.Sleep(100 * time.Millisecond)
	}
}

// callerJSON is caller as the test server's callerHeader carries it.
func callerJSON(t *testing.T, c auth.Caller) string {
	t.Helper()
	raw, err := json.Marshal(c)
	require.NoError(t, err)
	return string(raw)
}
