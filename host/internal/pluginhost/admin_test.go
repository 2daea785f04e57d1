package pluginhost

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

type auditRecord struct {
	Action, Resource string
	Metadata         map[string]any
	By               uuid.UUID
}

type fakeAuditor struct {
	mu      sync.Mutex
	records []auditRecord
}

func (f *fakeAuditor) Record(ctx context.Context, action, resource string, metadata map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, auditRecord{action, resource, metadata, auth.CallerFrom(ctx).UserID})
}

func (f *fakeAuditor) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.records {
		out = append(out, r.Action)
	}
	return out
}

type adminBundle struct {
	*bundle
	api     *AdminAPI
	pool    *pgxpool.Pool
	audit   *fakeAuditor
	adminID uuid.UUID
	entry   Entry
}

func setupAdmin(t *testing.T) *adminBundle {
	t.Helper()
	pool := dbtest.NewDB(t)
	var adminID uuid.UUID
	require.NoError(t, pool.QueryRow(t.Context(),
		`INSERT INTO users (email, role) VALUES ('admin@example.org', 'admin') RETURNING id`).Scan(&adminID))
	e := exampleEntry(buildExample(t))
	e.Settings = map[string]any{"corpus_size": int64(30)}
	b := setup(t, e)
	waitState(t, b.host, "example", StateRunning)
	audit := &fakeAuditor{}
	return &adminBundle{bundle: b, api: NewAdminAPI(b.host, NewStore(pool), audit), pool: pool, audit: audit, adminID: adminID, entry: e}
}

func (b *adminBundle) do(t *testing.T, caller auth.Caller, method, name, body string) *httptest.ResponseRecorder {
	t.Helper()
	target := "/api/admin/plugins"
	if name != "" {
		target += "/" + name
	}
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r = r.WithContext(auth.WithCaller(r.Context(), caller))
	if name != "" {
		r.SetPathValue("name", name)
	}
	w := httptest.NewRecorder()
	if method == http.MethodGet {
		b.api.List(w, r)
	} else {
		b.api.Update(w, r)
	}
	return w
}

func (b *adminBundle) admin() auth.Caller {
	return auth.Caller{UserID: b.adminID, Role: auth.RoleAdmin, SessionID: uuid.New()}
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &v), w.Body.String())
	return v
}

func TestAdminList(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	w := b.do(t, b.admin(), http.MethodGet, "", "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	list := decode[map[string][]map[string]any](t, w)["plugins"]
	require.Len(t, list, 1)
	p := list[0]
	require.Equal(t, "example", p["name"])
	require.Equal(t, "source", p["kind"])
	require.Equal(t, "0.1.0", p["version"])
	require.Equal(t, "running", p["state"])
	require.EqualValues(t, 0, p["restarts"])
	require.Equal(t, "", p["last_error"])
	require.Equal(t, true, p["enabled"])
	require.EqualValues(t, 1, p["protocol_version"])
	require.Equal(t, []any{"citations"}, p["capabilities"])
}

func TestAdminOnly(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	user := auth.Caller{UserID: b.adminID, Role: auth.RoleUser, SessionID: uuid.New()}
	override := b.admin()
	override.Override = true
	for _, c := range []auth.Caller{{}, user, {OpsKey: true}, override} {
		require.Equal(t, http.StatusForbidden, b.do(t, c, http.MethodGet, "", "").Code)
		require.Equal(t, http.StatusForbidden, b.do(t, c, http.MethodPatch, "example", `{"enabled":false}`).Code)
	}
	require.Empty(t, b.audit.actions())
}

func TestAdminChangesSettingsAtRunTimePersistedAndAudited(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	w := b.do(t, b.admin(), http.MethodPatch, "example", `{"settings":{"corpus_size":60,"delay":"1ms"}}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	st := decode[Status](t, w)
	require.Equal(t, map[string]any{"corpus_size": float64(60), "delay": "1ms"}, st.Settings)
	require.Equal(t, StateRunning, st.State)
	require.Zero(t, st.Restarts, "applied without a restart")

	var (
		raw []byte
		by  uuid.UUID
	)
	require.NoError(t, b.pool.QueryRow(t.Context(),
		`SELECT settings, updated_by FROM plugin_settings WHERE plugin_name = 'example'`).Scan(&raw, &by))
	require.JSONEq(t, `{"corpus_size":60,"delay":"1ms"}`, string(raw))
	require.Equal(t, b.adminID, by)
	require.Equal(t, []string{AuditPluginSettings}, b.audit.actions())
	require.Equal(t, "plugin:example", b.audit.records[0].Resource)
	require.Equal(t, []string{"corpus_size", "delay"}, b.audit.records[0].Metadata["keys"])
	require.Equal(t, b.adminID, b.audit.records[0].By)

	// null drops an override: plugins.toml's value applies again.
	w = b.do(t, b.admin(), http.MethodPatch, "example", `{"settings":{"corpus_size":null}}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, map[string]any{"corpus_size": float64(30), "delay": "1ms"}, decode[Status](t, w).Settings)
}

func TestAdminRefusals(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	tests := []struct {
		name, plugin, body string
		status             int
		code               string
	}{
		{"unknown plugin", "nope", `{"enabled":false}`, http.StatusNotFound, "not_found"},
		{"not json", "example", `{enabled`, http.StatusBadRequest, "bad_request"},
		{"unknown field", "example", `{"enabled":false,"colour":"red"}`, http.StatusBadRequest, "bad_request"},
		{"nothing to change", "example", `{}`, http.StatusUnprocessableEntity, "validation_error"},
		{"secret setting", "example", `{"settings":{"api_key":"sk-1"}}`, http.StatusUnprocessableEntity, "validation_error"},
		{"plugin refuses", "example", `{"settings":{"corpus_size":"lots"}}`, http.StatusUnprocessableEntity, "validation_error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := b.do(t, b.admin(), http.MethodPatch, tc.plugin, tc.body)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			require.Equal(t, tc.code, decode[map[string]any](t, w)["code"])
		})
	}
	var n int
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT count(*) FROM plugin_settings`).Scan(&n))
	require.Zero(t, n, "a refused change stores nothing")
	require.Empty(t, b.audit.actions())
	st, err := b.host.StatusOf("example")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"corpus_size": int64(30)}, st.Settings)
}

func TestAdminDisableEnableSurvivesRestartOfTheHost(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	w := b.do(t, b.admin(), http.MethodPatch, "example", `{"enabled":false,"settings":{"corpus_size":45}}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	waitState(t, b.host, "example", StateDisabled)
	require.ElementsMatch(t, []string{AuditPluginDisable, AuditPluginSettings}, b.audit.actions())

	// A new host (the next start of lectern) applies the stored choice.
	logs := &logBuffer{}
	h2 := New([]Entry{b.entry}, Options{
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Store: NewStore(b.pool),
		ExitPoll: 20 * time.Millisecond, BackoffMin: 50 * time.Millisecond,
	})
	require.NoError(t, h2.Start(t.Context()))
	t.Cleanup(h2.Close)
	st := waitState(t, h2, "example", StateDisabled)
	require.False(t, st.Enabled)
	require.Equal(t, float64(45), st.Settings["corpus_size"])

	w = b.do(t, b.admin(), http.MethodPatch, "example", `{"enabled":true}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	waitState(t, b.host, "example", StateRunning)
	require.Contains(t, b.audit.actions(), AuditPluginEnable)
}
