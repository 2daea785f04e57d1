package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

func TestCreateRunsJobAndReportsEnvelope(t *testing.T) {
	t.Parallel()
	b := setup(t)

	status, body := b.do(t, userCaller(b.userA), http.MethodPost, "/api/jobs",
		map[string]any{"kind": "test.progress", "args": map[string]any{"n": 3}})
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	var created jobs.Envelope
	require.NoError(t, json.Unmarshal(body, &created))
	require.Equal(t, "test.progress", created.Kind)
	require.Equal(t, jobs.StateQueued, created.State)
	require.Equal(t, jobs.DefaultMaxAttempts, created.MaxAttempts)
	require.JSONEq(t, `{"n":3,"gate":false}`, string(created.Args))

	env := b.waitState(t, userCaller(b.userA), created.ID, jobs.StateSucceeded)
	require.Equal(t, 1, env.Attempt)
	require.NotNil(t, env.Progress)
	require.Equal(t, int64(3), env.Progress.Seq)
	require.Equal(t, int64(3), env.Progress.Current)
	require.Equal(t, int64(3), env.Progress.Total)
	require.Equal(t, "step 3", env.Progress.Message)
	require.JSONEq(t, `{"steps":3}`, string(env.Result))
	require.Nil(t, env.Error)
	require.NotNil(t, env.StartedAt)
	require.NotNil(t, env.FinishedAt)

	// The raw body carries the documented names.
	_, raw := b.do(t, userCaller(b.userA), http.MethodGet, fmt.Sprintf("/api/jobs/%d", created.ID), nil)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, name := range []string{"id", "kind", "state", "cancel_requested", "progress", "attempt", "max_attempts",
		"args", "result", "error", "created_at", "scheduled_at", "started_at", "finished_at"} {
		require.Contains(t, fields, name)
	}
}

func TestOtherUsersJobIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	env := b.create(t, userCaller(b.userA), "test.block", nil)
	<-b.kinds.blockStarted

	others := map[string]auth.Caller{
		"user B":                   userCaller(b.userB),
		"ops key for user B":       overrideCaller(b.userB),
		"ops key alone":            opsOnly,
		"admin (not the owner)":    adminCaller(b.admin),
		"ops key as admin's owner": overrideCaller(b.admin),
	}
	for name, c := range others {
		t.Run(name, func(t *testing.T) {
			for _, req := range []struct{ method, path string }{
				{http.MethodGet, fmt.Sprintf("/api/jobs/%d", env.ID)},
				{http.MethodGet, fmt.Sprintf("/api/jobs/%d/stream", env.ID)},
				{http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID)},
			} {
				status, body := b.do(t, c, req.method, req.path, nil)
				require.Equal(t, http.StatusNotFound, status, "%s %s: %s", req.method, req.path, body)
				require.Equal(t, "not_found", decodeError(t, body).Code)
			}
			status, body := b.do(t, c, http.MethodGet, "/api/jobs", nil)
			require.Equal(t, http.StatusOK, status)
			var list jobs.ListResponse
			require.NoError(t, json.Unmarshal(body, &list))
			for _, j := range list.Jobs {
				require.NotEqual(t, env.ID, j.ID, "another user's job is not listed")
			}
		})
	}

	// The failed cancel attempts left A's job running; A still sees it.
	require.Equal(t, jobs.StateRunning, b.get(t, userCaller(b.userA), env.ID).State)
	// The ops key acting for A sees A's job.
	require.Equal(t, env.ID, b.get(t, overrideCaller(b.userA), env.ID).ID)
}

func TestAnonymousCallerIsUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	env := b.create(t, userCaller(b.userA), "test.progress", map[string]any{"n": 1})
	for _, req := range []struct{ method, path string }{
		{http.MethodPost, "/api/jobs"},
		{http.MethodGet, "/api/jobs"},
		{http.MethodGet, fmt.Sprintf("/api/jobs/%d", env.ID)},
		{http.MethodGet, fmt.Sprintf("/api/jobs/%d/stream", env.ID)},
		{http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID)},
	} {
		status, body := b.do(t, anonymous, req.method, req.path, `{"kind":"test.progress"}`)
		require.Equal(t, http.StatusUnauthorized, status, "%s %s", req.method, req.path)
		require.Equal(t, "authentication_required", decodeError(t, body).Code)
	}
}

func TestCreateRejectsBadRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)

	cases := []struct {
		name       string
		caller     auth.Caller
		body       string
		status     int
		code       string
		detailHas  []string
		fieldNames []string
	}{
		{
			name: "unknown kind names the known ones", caller: user,
			body:   `{"kind": "ingest.nope"}`,
			status: http.StatusBadRequest, code: "unknown_job_kind",
			detailHas: []string{`"ingest.nope"`, "pulse.train_classifier", "data.purge", "test.progress"},
		},
		{
			name: "malformed JSON", caller: user, body: `{"kind": `,
			status: http.StatusBadRequest, code: "bad_request",
		},
		{
			name: "unknown top-level field", caller: user, body: `{"kind": "test.progress", "payload": {}}`,
			status: http.StatusUnprocessableEntity, code: "validation_error", detailHas: []string{"payload"}, fieldNames: []string{"payload"},
		},
		{
			name: "missing kind", caller: user, body: `{"args": {}}`,
			status: http.StatusUnprocessableEntity, code: "validation_error", fieldNames: []string{"kind"},
		},
		{
			name: "args fail validation", caller: user, body: `{"kind": "test.validated", "args": {"count": 99}}`,
			status: http.StatusUnprocessableEntity, code: "validation_error",
			fieldNames: []string{"args.paper_id", "args.count"},
		},
		{
			name: "args of the wrong type", caller: user, body: `{"kind": "test.validated", "args": {"paper_id": 7, "count": 1}}`,
			status: http.StatusUnprocessableEntity, code: "validation_error", fieldNames: []string{"args.paper_id"},
		},
		{
			name: "unknown argument", caller: user, body: `{"kind": "test.validated", "args": {"paper_id": "p", "count": 1, "user_id": "x"}}`,
			status: http.StatusUnprocessableEntity, code: "validation_error", fieldNames: []string{"args.user_id"},
		},
		{
			name: "args not an object", caller: user, body: `{"kind": "test.validated", "args": [1]}`,
			status: http.StatusUnprocessableEntity, code: "validation_error", fieldNames: []string{"args"},
		},
		{
			name: "admin kind for a user", caller: user, body: `{"kind": "test.admin_only"}`,
			status: http.StatusForbidden, code: "job_kind_forbidden",
		},
		{
			name: "internal kind", caller: adminCaller(b.admin), body: `{"kind": "jobs.prune_progress"}`,
			status: http.StatusForbidden, code: "job_kind_forbidden", detailHas: []string{"host only"},
		},
		{
			name: "user kind for the ops key alone", caller: opsOnly, body: `{"kind": "test.progress"}`,
			status: http.StatusForbidden, code: "job_kind_forbidden",
		},
		{
			name: "Pulse training for a user", caller: user, body: `{"kind": "pulse.train_classifier"}`,
			status: http.StatusForbidden, code: "job_kind_forbidden",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := b.do(t, tc.caller, http.MethodPost, "/api/jobs", tc.body)
			require.Equal(t, tc.status, status, "%s", body)
			e := decodeError(t, body)
			require.Equal(t, tc.code, e.Code)
			for _, s := range tc.detailHas {
				require.Contains(t, e.Detail, s)
			}
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
			require.ElementsMatch(t, tc.fieldNames, got)
		})
	}

	status, body := b.do(t, user, http.MethodPost, "/api/jobs", `{"kind": "test.validated", "args": {"paper_id": "p", "count": 2}}`)
	require.Equal(t, http.StatusAccepted, status, "valid args are accepted: %s", body)
}

func TestTrainClassifierForcedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("admin", func(t *testing.T) {
		t.Parallel()
		env := b.create(t, adminCaller(b.admin), jobs.KindTrainClassifier, nil)
		done := b.waitState(t, adminCaller(b.admin), env.ID, jobs.StateSucceeded)
		require.JSONEq(t, `{"trained":0,"reason":"pulse_training_not_built"}`, string(done.Result))
	})
	t.Run("ops key alone makes a system job", func(t *testing.T) {
		t.Parallel()
		env := b.create(t, opsOnly, jobs.KindTrainClassifier, map[string]any{})
		b.waitState(t, opsOnly, env.ID, jobs.StateSucceeded)
		// A system job is visible to the ops key and admins, not to users.
		b.get(t, adminCaller(b.admin), env.ID)
		status, _ := b.do(t, userCaller(b.userA), http.MethodGet, fmt.Sprintf("/api/jobs/%d", env.ID), nil)
		require.Equal(t, http.StatusNotFound, status)
	})
}

func TestCancelQueuedJobIsImmediate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The held queue's only worker is busy with a first job, so the second one
	// is queued for as long as the test needs, whatever the scheduler does.
	busy := b.create(t, userCaller(b.userA), "test.held", nil)
	require.Equal(t, busy.ID, <-b.kinds.heldStarted)
	env := b.create(t, userCaller(b.userA), "test.held", nil)
	require.Equal(t, jobs.StateQueued, env.State)

	status, body := b.do(t, userCaller(b.userA), http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID), nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var cancelled jobs.Envelope
	require.NoError(t, json.Unmarshal(body, &cancelled))
	require.Equal(t, jobs.StateCancelled, cancelled.State, "the answer already says cancelled")
	require.NotNil(t, cancelled.FinishedAt)
	require.Equal(t, jobs.StateCancelled, b.get(t, userCaller(b.userA), env.ID).State)

	status, body = b.do(t, userCaller(b.userA), http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID), nil)
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "job_finished", decodeError(t, body).Code)
}

func TestCancelRunningJobEndsCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.block", nil)
	require.Equal(t, env.ID, <-b.kinds.blockStarted)

	status, body := b.do(t, user, http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID), nil)
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	var requested jobs.Envelope
	require.NoError(t, json.Unmarshal(body, &requested))
	require.Equal(t, jobs.StateRunning, requested.State)
	require.True(t, requested.CancelRequested)

	// SPEC/issue: a cancelled running job ends as cancelled within 2 seconds.
	done := b.waitStateWithin(t, user, env.ID, jobs.StateCancelled, 2*time.Second)
	require.False(t, done.CancelRequested)
	require.Nil(t, done.Error, "a cancel is not an error")
}

func TestFinalFailureIsSanitizedRecordedAndHooked(t *testing.T) {
	t.Parallel()
	var kinds *testKinds
	b := setup(t, setupOpts{configure: func(cfg *jobs.Config, _ *jobs.Registry) {
		cfg.FailureFunc = func(ctx context.Context, ev jobs.FailureEvent) { kinds.failureHook(ctx, ev) }
	}})
	kinds = b.kinds
	user := userCaller(b.userA)

	cases := []struct {
		name   string
		public bool
		want   jobs.ErrorInfo
	}{
		{"public error", true, jobs.ErrorInfo{Code: "pdf_unreadable", Message: "The PDF could not be read."}},
		{"internal error", false, jobs.ErrorInfo{Code: jobs.CodeJobFailed, Message: "Job failed"}},
	}
	for _, tc := range cases {
		env := b.create(t, user, "test.fail", map[string]any{"public": tc.public})
		failed := b.waitState(t, user, env.ID, jobs.StateFailed)
		require.Equal(t, &tc.want, failed.Error, tc.name)
		_, raw := b.do(t, user, http.MethodGet, fmt.Sprintf("/api/jobs/%d", env.ID), nil)
		require.NotContains(t, string(raw), "secret internals", "%s: the cause never reaches the owner", tc.name)

		var level, category, source, message string
		var ctxJSON []byte
		require.NoError(t, b.pool.QueryRow(context.Background(), `
			SELECT level, category, source, message, context FROM system_events
			 WHERE user_id = $1 AND (context->>'job_id')::bigint = $2`, b.userA, env.ID).
			Scan(&level, &category, &source, &message, &ctxJSON), tc.name)
		require.Equal(t, "error", level)
		require.Equal(t, "job", category)
		require.Equal(t, "jobs", source)
		require.Contains(t, message, tc.want.Message)
		require.NotContains(t, message, "secret internals")
		require.JSONEq(t, fmt.Sprintf(`{"job_id":%d,"kind":"test.fail","attempt":1,"error_code":%q}`, env.ID, tc.want.Code), string(ctxJSON))
	}

	kinds.mu.Lock()
	defer kinds.mu.Unlock()
	require.Len(t, kinds.failures, 2)
	for _, ev := range kinds.failures {
		require.Equal(t, b.userA, ev.UserID)
		require.Equal(t, "test.fail", ev.Kind)
	}

	// A system job's failure is logged only: no owner to tell.
	env := b.create(t, opsOnly, "test.fail", nil)
	b.waitState(t, opsOnly, env.ID, jobs.StateFailed)
	require.Len(t, kinds.failures, 2)
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	var ids []int64
	for range 3 {
		ids = append(ids, b.create(t, user, "test.progress", map[string]any{"n": 1}).ID)
	}
	for _, id := range ids {
		b.waitState(t, user, id, jobs.StateSucceeded)
	}
	blocked := b.create(t, user, "test.block", nil)
	<-b.kinds.blockStarted
	b.create(t, userCaller(b.userB), "test.progress", map[string]any{"n": 1})

	list := func(query string) jobs.ListResponse {
		t.Helper()
		status, body := b.do(t, user, http.MethodGet, "/api/jobs"+query, nil)
		require.Equal(t, http.StatusOK, status, "%s", body)
		var l jobs.ListResponse
		require.NoError(t, json.Unmarshal(body, &l))
		return l
	}
	idsOf := func(l jobs.ListResponse) []int64 {
		var out []int64
		for _, e := range l.Jobs {
			out = append(out, e.ID)
		}
		return out
	}

	all := list("")
	require.Equal(t, []int64{blocked.ID, ids[2], ids[1], ids[0]}, idsOf(all), "own jobs, newest first")
	require.Nil(t, all.NextCursor)

	require.Equal(t, []int64{blocked.ID}, idsOf(list("?state=running")))
	require.Equal(t, []int64{blocked.ID}, idsOf(list("?state=active")))
	require.Equal(t, []int64{ids[2], ids[1], ids[0]}, idsOf(list("?state=succeeded,failed")))
	require.Equal(t, []int64{blocked.ID}, idsOf(list("?kind=test.block")))
	require.Empty(t, list("?kind=test.block&state=succeeded").Jobs)

	page1 := list("?limit=2")
	require.Equal(t, []int64{blocked.ID, ids[2]}, idsOf(page1))
	require.NotNil(t, page1.NextCursor)
	page2 := list("?limit=2&cursor=" + *page1.NextCursor)
	require.Equal(t, []int64{ids[1], ids[0]}, idsOf(page2))
	require.NotNil(t, page2.NextCursor, "a full page offers a next cursor")
	require.Empty(t, list("?limit=2&cursor="+*page2.NextCursor).Jobs)

	for _, query := range []string{"?state=bogus", "?kind=nope.nope", "?limit=0", "?limit=201", "?limit=x", "?cursor=%21%21"} {
		status, body := b.do(t, user, http.MethodGet, "/api/jobs"+query, nil)
		require.Equal(t, http.StatusUnprocessableEntity, status, "%s: %s", query, body)
	}
}

func TestMalformedJobIDIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/api/jobs/abc", "/api/jobs/0", "/api/jobs/-4", "/api/jobs/99999999"} {
		status, _ := b.do(t, userCaller(b.userA), http.MethodGet, path, nil)
		require.Equal(t, http.StatusNotFound, status, path)
	}
}

func TestEnqueueFromHostCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	env, err := b.svc.Enqueue(ctx, b.userA, progressArgs{N: 2})
	require.NoError(t, err)
	require.Equal(t, jobs.StateSucceeded, b.waitState(t, userCaller(b.userA), env.ID, jobs.StateSucceeded).State)

	// In the caller's transaction: the job exists only once it commits.
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	env, err = b.svc.EnqueueTx(ctx, tx, b.userA, progressArgs{N: 1})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	status, _ := b.do(t, userCaller(b.userA), http.MethodGet, fmt.Sprintf("/api/jobs/%d", env.ID), nil)
	require.Equal(t, http.StatusNotFound, status, "a rolled-back enqueue leaves no job")

	_, err = b.svc.Enqueue(ctx, uuid.Nil, unregisteredArgs{})
	require.ErrorIs(t, err, jobs.ErrUnknownKind)
	require.True(t, strings.Contains(err.Error(), "test.unregistered"))
}

type unregisteredArgs struct{}

func (unregisteredArgs) Kind() string { return "test.unregistered" }

func TestPurgeRunsPurgeFunc(t *testing.T) {
	t.Parallel()
	calls := make(chan struct{}, 1)
	b := setup(t, setupOpts{configure: func(cfg *jobs.Config, _ *jobs.Registry) {
		cfg.PurgeFunc = func(ctx context.Context) error {
			calls <- struct{}{}
			return ctx.Err()
		}
	}})
	env := b.create(t, opsOnly, jobs.KindPurge, nil)
	b.waitState(t, opsOnly, env.ID, jobs.StateSucceeded)
	require.Len(t, calls, 1)
}

func TestNewRefusesUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewEmptyDB(t)
	_, err := jobs.New(context.Background(), jobs.Config{Pool: pool})
	require.ErrorContains(t, err, "not migrated")

	require.NoError(t, jobs.Migrate(context.Background(), pool))
	require.NoError(t, jobs.Migrate(context.Background(), pool), "a second run is a no-op")
	var exists bool
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT to_regclass('river_job') IS NOT NULL`).Scan(&exists))
	require.True(t, exists)
}
