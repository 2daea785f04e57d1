package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/admin"
	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/llmsettings"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/projects"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const testOpsKey = "k3y-f0r-tests-9a8b7c6d5e4f3a2b1c0d"

type testBundle struct {
	router *chi.Mux
	routes []Route
	pool   *pgxpool.Pool
	logs   *strings.Builder
}

func setup(t *testing.T, env map[string]string, pool *pgxpool.Pool) *testBundle {
	t.Helper()
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	require.NoError(t, err)
	if pool == nil {
		pool = dbtest.NewDB(t)
	}
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	logs := &strings.Builder{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	auditLog := audit.New(pool, logger)
	authSvc := auth.NewService(auth.Config{Pool: pool, Config: cfg, Logger: logger, Audit: auditLog, Mail: mail.New(cfg, logger)})
	keys, err := secrets.NewKeyring("", "")
	require.NoError(t, err)
	r, routes := NewHandler(Deps{
		Config:   cfg,
		Logger:   logger,
		Pool:     pool,
		Migrator: store.NewMigrator(pool, migs),
		Version:  "test",
		Auth:     authSvc,
		Admin:    admin.New(pool, authSvc, auditLog, logger),
		Settings: userconfig.NewAPI(userconfig.New(pool, keys), cfg, nil, logger),
		Papers:   papers.NewAPI(papers.New(pool), nil),
		Projects: projects.NewAPI(pool, papers.New(pool)),
		Search:   search.NewAPI(search.New(pool, func() []search.Named { return nil })),
		Learning: learning.NewAPI(learning.New(pool), papers.New(pool)),
		Passages: retrieve.NewAPI(retrieve.New(pool, nil, nil)),
		LLM: llmsettings.NewAPI(llmgw.New(llmgw.Config{Settings: userconfig.New(pool, keys), Logger: logger}),
			userconfig.New(pool, keys), auditLog, logger, nil),
	})
	return &testBundle{router: r, routes: routes, pool: pool, logs: logs}
}

func (b *testBundle) do(t *testing.T, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, req)
	return rec
}

type errorBody struct {
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
	Exception string `json:"exception"`
}

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) errorBody {
	t.Helper()
	require.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	var body errorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	require.NotEmpty(t, body.Code)
	require.NotEmpty(t, body.Detail)
	require.Equal(t, rec.Header().Get(HeaderRequestID), body.RequestID)
	return body
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)

	rec := b.do(t, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"status":"ok","version":"test"}`, rec.Body.String())

	rec = b.do(t, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var ready readiness
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ready))
	require.Equal(t, "ready", ready.Status)
	require.Equal(t, ready.SchemaLatest, ready.SchemaVersion)
	require.Positive(t, ready.SchemaVersion)
}

func TestReadinessWithPendingMigrations(t *testing.T) {
	t.Parallel()
	empty, _ := dbtest.NewEmptyDB(t)
	b := setup(t, nil, empty)

	rec := b.do(t, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	var ready readiness
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ready))
	require.Equal(t, "not_ready", ready.Status)
	require.Equal(t, "migrations pending", ready.Detail)
	require.Zero(t, ready.SchemaVersion)
}

func TestReadinessWithDatabaseDown(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	b := setup(t, nil, pool)
	pool.Close()

	rec := b.do(t, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Contains(t, rec.Body.String(), `"database":"unreachable"`)
	// Liveness does not depend on the database.
	require.Equal(t, http.StatusOK, b.do(t, httptest.NewRequest(http.MethodGet, "/healthz", nil)).Code)
}

func TestMetricsNeedTheOpsKey(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)

	cases := []struct {
		name     string
		env      map[string]string
		key      string
		wantCode int
		wantErr  string
	}{
		{"no key sent", map[string]string{"SERVICE_API_KEY": testOpsKey}, "", 401, "missing_api_key"},
		{"wrong key", map[string]string{"SERVICE_API_KEY": testOpsKey}, testOpsKey + "x", 401, "invalid_api_key"},
		{"prefix of the key", map[string]string{"SERVICE_API_KEY": testOpsKey}, testOpsKey[:20], 401, "invalid_api_key"},
		{"right key", map[string]string{"SERVICE_API_KEY": testOpsKey}, testOpsKey, 200, ""},
		{"no key configured", nil, "anything", 401, "ops_key_not_configured"},
		{"no key configured, DEV_AUTH_BYPASS", map[string]string{"DEV_AUTH_BYPASS": "true"}, "", 200, ""},
		{"key configured beats DEV_AUTH_BYPASS", map[string]string{"SERVICE_API_KEY": testOpsKey, "DEV_AUTH_BYPASS": "true", "DEV_CRYPTO_RELAXED": "true"}, "", 401, "missing_api_key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.env, pool)
			b.do(t, httptest.NewRequest(http.MethodGet, "/healthz", nil))

			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.key != "" {
				req.Header.Set(HeaderAPIKey, tc.key)
			}
			rec := b.do(t, req)
			require.Equal(t, tc.wantCode, rec.Code, rec.Body.String())
			if tc.wantErr != "" {
				require.Equal(t, tc.wantErr, decodeError(t, rec).Code)
				return
			}
			body := rec.Body.String()
			require.Contains(t, body, `lectern_http_requests_total{method="GET",route="/healthz",status="200"} 1`)
			require.Contains(t, body, `lectern_http_request_duration_seconds_bucket{method="GET",route="/healthz",le="0.005"}`)
			require.Contains(t, body, `lectern_db_pool_connections{state="idle"}`)
			require.Contains(t, body, `lectern_db_pool_max_connections`)
			require.Contains(t, body, `go_goroutines`)
		})
	}
}

func TestUnknownRoutesAnswerWithTheErrorBody(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)

	rec := b.do(t, httptest.NewRequest(http.MethodGet, "/api/nothing-here", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "not_found", decodeError(t, rec).Code)

	rec = b.do(t, httptest.NewRequest(http.MethodDelete, "/healthz", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "method_not_allowed", decodeError(t, rec).Code)
}

func TestPanicsBecomeInternalErrors(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	for _, detail := range []bool{false, true} {
		t.Run(map[bool]string{false: "detail hidden", true: "DEV_ERROR_DETAIL"}[detail], func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			if detail {
				env["DEV_ERROR_DETAIL"] = "true"
			}
			b := setup(t, env, pool)
			b.router.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("secret internals") })

			rec := b.do(t, httptest.NewRequest(http.MethodGet, "/boom", nil))
			require.Equal(t, http.StatusInternalServerError, rec.Code)
			body := decodeError(t, rec)
			require.Equal(t, "internal_error", body.Code)
			require.Equal(t, "An internal error occurred.", body.Detail)
			if detail {
				require.Equal(t, "panic: secret internals", body.Exception)
			} else {
				require.Empty(t, body.Exception)
				require.NotContains(t, rec.Body.String(), "secret internals")
			}
			require.Contains(t, b.logs.String(), `"msg":"panic in handler"`)
		})
	}
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)

	req := httptest.NewRequest(http.MethodGet, "/healthz?token=one-time-secret", nil)
	req.Header.Set(HeaderRequestID, "proxy-1234.abc")
	rec := b.do(t, req)
	require.Equal(t, "proxy-1234.abc", rec.Header().Get(HeaderRequestID), "a well-formed incoming id is kept")

	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(b.logs.String())), &line))
	require.Equal(t, "proxy-1234.abc", line["request_id"])
	require.Equal(t, "/healthz", line["path"])
	require.Equal(t, float64(200), line["status"])
	require.NotContains(t, b.logs.String(), "one-time-secret", "query strings are never logged")

	req = httptest.NewRequest(http.MethodGet, "/healthz", nil)
	req.Header.Set(HeaderRequestID, "bad id\nwith newline")
	rec = b.do(t, req)
	require.Len(t, rec.Header().Get(HeaderRequestID), 36, "a malformed id is replaced by a UUID")
}

func TestCORS(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	preflight := func(b *testBundle, origin string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodOptions, "/api/openapi.json", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", http.MethodGet)
		return b.do(t, req)
	}

	t.Run("allowlist", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"CORS_ORIGINS": "https://lectern.example.org"}, pool)
		rec := preflight(b, "https://lectern.example.org")
		require.Equal(t, "https://lectern.example.org", rec.Header().Get("Access-Control-Allow-Origin"))
		require.Equal(t, "true", rec.Header().Get("Access-Control-Allow-Credentials"))
		rec = preflight(b, "https://evil.example.com")
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))
	})

	t.Run("nothing configured allows no origin", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, pool)
		require.Empty(t, preflight(b, "https://evil.example.com").Header().Get("Access-Control-Allow-Origin"))
	})

	t.Run("DEV_CORS_OPEN", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]string{"DEV_CORS_OPEN": "true"}, pool)
		rec := preflight(b, "https://anywhere.example.com")
		require.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"))
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Credentials"))
	})
}

// TestClientAbortsAreNotServerErrors: a client that gives up on a slow request
// (here a query the database is still running) is logged at info and counted as
// 499, never as a 5xx in /metrics, and the log has no error line for it.
func TestClientAbortsAreNotServerErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"SERVICE_API_KEY": testOpsKey}, nil)
	started := make(chan struct{})
	b.router.Get("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		_, err := b.pool.Exec(r.Context(), `SELECT pg_sleep(10)`)
		httpx.Err(w, r, err)
	})
	served := make(chan struct{}) // the router (its log line and metrics included) is done
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.router.ServeHTTP(w, r)
		close(served)
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	require.NoError(t, err)
	go func() {
		<-started
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err = srv.Client().Do(req)
	require.ErrorIs(t, err, context.Canceled)

	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return after its client left")
	}
	req = httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set(HeaderAPIKey, testOpsKey)
	body := b.do(t, req).Body.String()
	require.Contains(t, body, `lectern_http_requests_total{method="GET",route="/slow",status="499"} 1`)
	require.NotRegexp(t, `lectern_http_requests_total\{[^}]*status="5\d\d"\}`, body)
	require.NotContains(t, b.logs.String(), `"level":"ERROR"`)
	require.Contains(t, b.logs.String(), `"status":499`)
}
