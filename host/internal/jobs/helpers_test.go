package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// stateDeadline bounds every wait for a job to reach a state.
const stateDeadline = 5 * time.Second

// Callers of the tests.
var (
	anonymous = auth.Caller{}
	opsOnly   = auth.Caller{OpsKey: true}
)

func userCaller(id uuid.UUID) auth.Caller {
	return auth.Caller{UserID: id, Role: auth.RoleUser, SessionID: uuid.New()}
}

func adminCaller(id uuid.UUID) auth.Caller {
	return auth.Caller{UserID: id, Role: auth.RoleAdmin, SessionID: uuid.New()}
}

func overrideCaller(id uuid.UUID) auth.Caller {
	return auth.Caller{UserID: id, Role: auth.RoleUser, OpsKey: true, Override: true}
}

// testBundle is one test's database, running service and HTTP server.
type testBundle struct {
	pool   *pgxpool.Pool
	svc    *jobs.Service
	server *httptest.Server
	userA  uuid.UUID
	userB  uuid.UUID
	admin  uuid.UUID
	kinds  *testKinds
}

// setupOpts adjust setup.
type setupOpts struct {
	configure func(cfg *jobs.Config, reg *jobs.Registry)
}

// callers are passed to the test server in this header and put in the request
// context by a tiny middleware, the way the host's resolvers do.
const callerHeader = "X-Test-Caller"

func setup(t testing.TB, opts ...setupOpts) *testBundle {
	t.Helper()
	ctx := context.Background()
	pool := testPool(t)

	b := &testBundle{pool: pool, kinds: newTestKinds()}
	b.userA = createUser(t, pool, "a", "user", "UTC")
	b.userB = createUser(t, pool, "b", "user", "UTC")
	b.admin = createUser(t, pool, "root", "admin", "UTC")

	reg := jobs.NewRegistry()
	b.kinds.register(t, reg)
	cfg := jobs.Config{
		Pool:              pool,
		Logger:            slog.New(slog.DiscardHandler),
		Registry:          reg,
		QueueWorkers:      map[string]int{heldQueue: 1},
		HeartbeatInterval: 200 * time.Millisecond,
		PollInterval:      500 * time.Millisecond,
		StopTimeout:       time.Second,
	}
	for _, o := range opts {
		if o.configure != nil {
			o.configure(&cfg, reg)
		}
	}
	svc, err := jobs.New(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, svc.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, svc.Stop(stopCtx))
	})
	b.svc = svc

	b.server = serveAPI(t, svc)
	return b
}

// serveAPI serves svc's job API on a test server; callers come in callerHeader.
func serveAPI(t testing.TB, svc *jobs.Service) *httptest.Server {
	t.Helper()
	api := svc.API()
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var c auth.Caller
			if raw := r.Header.Get(callerHeader); raw != "" {
				if err := json.Unmarshal([]byte(raw), &c); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
			}
			next.ServeHTTP(w, r.WithContext(auth.WithCaller(r.Context(), c)))
		})
	})
	r.Post("/api/jobs", api.Create)
	r.Get("/api/jobs", api.List)
	r.Get("/api/jobs/{id}", api.Get)
	r.Post("/api/jobs/{id}/cancel", api.Cancel)
	r.Get("/api/jobs/{id}/stream", api.Stream)
	server := httptest.NewServer(r)
	t.Cleanup(server.Close)
	return server
}

// testPool returns a pool on a fresh migrated database, large enough for River,
// the listener and parallel requests.
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	base := dbtest.NewDB(t)
	cfg := base.Config().Copy()
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	// Idempotent: the template already carries River's tables.
	require.NoError(t, jobs.Migrate(ctx, pool))
	return pool
}

func createUser(t testing.TB, pool *pgxpool.Pool, name, role, tz string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, pool.QueryRow(context.Background(),
		`INSERT INTO users (email, role, timezone) VALUES ($1, $2, $3) RETURNING id`,
		name+"-"+uuid.NewString()[:8]+"@example.org", role, tz).Scan(&id))
	return id
}

// do sends a request as caller and returns the status and body.
func (b *testBundle) do(t testing.TB, c auth.Caller, method, path string, body any) (int, []byte) {
	t.Helper()
	resp := b.send(t, c, method, path, body, nil)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

func (b *testBundle) send(t testing.TB, c auth.Caller, method, path string, body any, header http.Header) *http.Response {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.server.URL+path, rd)
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if c != anonymous {
		raw, err := json.Marshal(c)
		require.NoError(t, err)
		req.Header.Set(callerHeader, string(raw))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// create enqueues kind with args as caller and returns the envelope.
func (b *testBundle) create(t testing.TB, c auth.Caller, kind string, args any) jobs.Envelope {
	t.Helper()
	status, body := b.do(t, c, http.MethodPost, "/api/jobs", map[string]any{"kind": kind, "args": args})
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	var env jobs.Envelope
	require.NoError(t, json.Unmarshal(body, &env))
	return env
}

// get returns the envelope of id as caller sees it.
func (b *testBundle) get(t testing.TB, c auth.Caller, id int64) jobs.Envelope {
	t.Helper()
	status, body := b.do(t, c, http.MethodGet, fmt.Sprintf("/api/jobs/%d", id), nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var env jobs.Envelope
	require.NoError(t, json.Unmarshal(body, &env))
	return env
}

// waitState polls the job until it is in want, failing after stateDeadline.
func (b *testBundle) waitState(t testing.TB, c auth.Caller, id int64, want jobs.State) jobs.Envelope {
	t.Helper()
	return b.waitStateWithin(t, c, id, want, stateDeadline)
}

// waitStateWithin polls the job until it is in want, failing after d.
func (b *testBundle) waitStateWithin(t testing.TB, c auth.Caller, id int64, want jobs.State, d time.Duration) jobs.Envelope {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		env := b.get(t, c, id)
		if env.State == want {
			return env
		}
		if time.Now().After(deadline) {
			require.Failf(t, "job did not reach its state", "job %d is %s, want %s", id, env.State, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// apiError is the error body of the API.
type apiError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Fields []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"fields"`
}

func decodeError(t testing.TB, body []byte) apiError {
	t.Helper()
	var e apiError
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	return e
}

// ---------------------------------------------------------------------------
// Test kinds
// ---------------------------------------------------------------------------

// testKinds are the kinds the tests run, with channels to steer them.
type testKinds struct {
	// progress jobs report half their events, then wait for a value on
	// progressGate (if Gate is set), then report the rest.
	progressGate chan struct{}
	// blockStarted receives the id of each block job once it runs.
	blockStarted chan int64
	// heldStarted receives the id of each held job once it runs. The held
	// queue has one worker, so while a held job runs the next one stays queued.
	heldStarted chan int64
	// soloStarted receives the id of each solo job once it runs.
	soloStarted chan int64

	mu       sync.Mutex
	failures []jobs.FailureEvent
}

func newTestKinds() *testKinds {
	return &testKinds{progressGate: make(chan struct{}), blockStarted: make(chan int64, 10), heldStarted: make(chan int64, 10),
		soloStarted: make(chan int64, 10)}
}

func (k *testKinds) register(t testing.TB, reg *jobs.Registry) {
	t.Helper()
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[progressArgs]{
		Worker: &progressWorker{gate: k.progressGate}, Enqueuers: jobs.EnqueueUser}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[blockArgs]{
		Worker: &blocker[blockArgs]{started: k.blockStarted}, Enqueuers: jobs.EnqueueUser}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[heldArgs]{
		Worker: &blocker[heldArgs]{started: k.heldStarted}, Queue: heldQueue, Enqueuers: jobs.EnqueueUser}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[failArgs]{
		Worker: &failWorker{}, MaxAttempts: 1, Enqueuers: jobs.EnqueueUser | jobs.EnqueueOps}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[validatedArgs]{
		Worker:    river.WorkFunc(func(context.Context, *river.Job[validatedArgs]) error { return nil }),
		Enqueuers: jobs.EnqueueUser}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[adminArgs]{
		Worker:    river.WorkFunc(func(context.Context, *river.Job[adminArgs]) error { return nil }),
		Enqueuers: jobs.EnqueueAdmin}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[soloArgs]{
		Worker: &blocker[soloArgs]{started: k.soloStarted}, Enqueuers: jobs.EnqueueUser, OnePerOwner: true}))
	require.NoError(t, jobs.Register(reg, jobs.KindSpec[internalArgs]{
		Worker: river.WorkFunc(func(context.Context, *river.Job[internalArgs]) error { return nil })}))
}

func (k *testKinds) failureHook(_ context.Context, ev jobs.FailureEvent) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failures = append(k.failures, ev)
}

type progressArgs struct {
	N    int  `json:"n"`
	Gate bool `json:"gate"`
}

func (progressArgs) Kind() string { return "test.progress" }

type progressWorker struct {
	river.WorkerDefaults[progressArgs]
	gate chan struct{}
}

func (w *progressWorker) Work(ctx context.Context, job *river.Job[progressArgs]) error {
	n := int64(job.Args.N)
	for i := int64(1); i <= n; i++ {
		if job.Args.Gate && i == n/2+1 {
			select {
			case <-w.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := jobs.ReportProgress(ctx, i, n, fmt.Sprintf("step %d", i)); err != nil {
			return err
		}
	}
	return jobs.SetResult(ctx, map[string]int64{"steps": n})
}

type blockArgs struct{}

func (blockArgs) Kind() string { return "test.block" }

// blocker signals its job's id on started, then runs until the job is cancelled
// or the service stops.
type blocker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	started chan int64
}

func (w *blocker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	w.started <- job.ID
	<-ctx.Done()
	return ctx.Err()
}

// heldQueue is worked by a single worker (see setup).
const heldQueue = "held"

type heldArgs struct{}

// soloArgs is a kind of which each owner may have one at a time.
type soloArgs struct{}

func (soloArgs) Kind() string { return "test.solo" }

func (heldArgs) Kind() string { return "test.held" }

type failArgs struct {
	Public bool `json:"public"`
}

func (failArgs) Kind() string { return "test.fail" }

type failWorker struct {
	river.WorkerDefaults[failArgs]
}

func (w *failWorker) Work(_ context.Context, job *river.Job[failArgs]) error {
	cause := fmt.Errorf("dial tcp 10.0.0.7:5432: secret internals")
	if job.Args.Public {
		return jobs.NewPublicError("pdf_unreadable", "The PDF could not be read.", cause)
	}
	return cause
}

type validatedArgs struct {
	PaperID string `json:"paper_id"`
	Count   int    `json:"count"`
}

func (validatedArgs) Kind() string { return "test.validated" }

func (a validatedArgs) ValidateArgs() error {
	var errs []error
	if a.PaperID == "" {
		errs = append(errs, &jobs.FieldError{Field: "paper_id", Message: "is required"})
	}
	if a.Count < 1 || a.Count > 50 {
		errs = append(errs, &jobs.FieldError{Field: "count", Message: "must be from 1 to 50"})
	}
	return errors.Join(errs...)
}

type adminArgs struct{}

func (adminArgs) Kind() string { return "test.admin_only" }

type internalArgs struct{}

func (internalArgs) Kind() string { return "test.internal" }
