package pluginhost

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// FuzzAdminUpdate sends arbitrary bodies to PATCH /api/admin/plugins/{name}, the
// one JSON route FuzzJSONRoutes (package app) leaves out because its world runs
// no plugin host: here a real host runs the example source, and the change is
// stored in a real database. Nothing a client sends may answer 5xx or quote the
// decoder's or the driver's words.
func FuzzAdminUpdate(f *testing.F) {
	for _, s := range []string{
		`{"enabled":true}`, `{"settings":{"corpus_size":40}}`, `{"settings":{"corpus_size":null}}`,
		`{"enabled":false,"settings":{"corpus_size":"x"}}`, `{"settings":{"api_key":"s"}}`, `{}`, `[]`,
		`{"enabled":true,"settings":{"a\u0000b":"c\u0000"}}`, `{"settings":{"corpus_size":1e999}}`,
		`{"enabled":true,"unknown":1}`, "{\"settings\":{\"x\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	pool := dbtest.NewDB(f)
	var adminID uuid.UUID
	if err := pool.QueryRow(context.Background(),
		`INSERT INTO users (email, role) VALUES ('admin@example.org', 'admin') RETURNING id`).Scan(&adminID); err != nil {
		f.Fatal(err)
	}
	e := exampleEntry(buildExample(f))
	e.Settings = map[string]any{"corpus_size": int64(30)}
	h := New([]Entry{e}, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), HealthInterval: time.Second,
		ExitPoll: 20 * time.Millisecond, BackoffMin: 50 * time.Millisecond, BackoffMax: time.Second})
	if err := h.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer h.Close()
	api := NewAdminAPI(h, NewStore(pool), &fakeAuditor{})
	caller := auth.Caller{UserID: adminID, Role: auth.RoleAdmin, SessionID: uuid.New()}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPatch, "/api/admin/plugins/example", strings.NewReader(string(body)))
		ctx, cancel := context.WithTimeout(auth.WithCaller(r.Context(), caller), 30*time.Second)
		defer cancel()
		r = r.WithContext(ctx)
		r.SetPathValue("name", "example")
		w := httptest.NewRecorder()
		api.Update(w, r)
		if w.Code >= 500 {
			t.Fatalf("%q answered %d: %s", body, w.Code, w.Body.String())
		}
		for _, raw := range []string{"SQLSTATE", "json: ", "Go struct", "Go value", "invalid byte sequence", "rpc error"} {
			if strings.Contains(w.Body.String(), raw) {
				t.Fatalf("%q answered with raw error text %q: %s", body, raw, w.Body.String())
			}
		}
	})
}
