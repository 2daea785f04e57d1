package app

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/infraevents"
)

const testInfraKey = "9d2b7e4a1c6f0b3e8a5d2c7f4b1e6a9d0c3f8b5e"

// infraEnv is a host that takes /infra-events from the compose stack's subnet.
func infraEnv() map[string]string {
	return map[string]string{"INFRA_INGEST_KEY": testInfraKey, "INFRA_INGEST_ALLOWED_CIDRS": "10.137.241.0/24"}
}

func infraEventCount(t *testing.T, b *testBundle) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM infra_events`).Scan(&n))
	return n
}

// TestInfraEventsAuth: the source address is checked first (403), then the key in
// constant time (401); the ops key is no substitute; the address is the one the rest
// of the API trusts (X-Forwarded-For only from a trusted proxy).
func TestInfraEventsAuth(t *testing.T) {
	t.Parallel()
	env := infraEnv()
	env["TRUSTED_PROXY_HOSTS"] = "127.0.0.1" // what lectern serve adds for a dashboard on the same machine
	b := setup(t, env)
	event := map[string]any{"source": "postgres", "message": "checkpoint complete"}
	allowed, denied := "10.137.241.7:40000", "192.0.2.9:40000"
	cases := []struct {
		name    string
		remote  string
		headers map[string]string
		status  int
		code    string
	}{
		{"wrong key from an allowed address", allowed, map[string]string{auth.HeaderInfraKey: testInfraKey + "x"}, http.StatusUnauthorized, "invalid_infra_key"},
		{"no key from an allowed address", allowed, nil, http.StatusUnauthorized, "missing_infra_key"},
		{"the ops key instead", allowed, map[string]string{auth.HeaderAPIKey: testOpsKey}, http.StatusUnauthorized, "missing_infra_key"},
		{"the right key from a denied address", denied, map[string]string{auth.HeaderInfraKey: testInfraKey}, http.StatusForbidden, "source_not_allowed"},
		{"a forged X-Forwarded-For from an untrusted peer", denied,
			map[string]string{auth.HeaderInfraKey: testInfraKey, "X-Forwarded-For": "10.137.241.7"}, http.StatusForbidden, "source_not_allowed"},
		{"an allowed client behind a trusted proxy", "127.0.0.1:50000",
			map[string]string{auth.HeaderInfraKey: testInfraKey, "X-Forwarded-For": "10.137.241.7"}, http.StatusAccepted, ""},
		{"the right key from an allowed address", allowed, map[string]string{auth.HeaderInfraKey: testInfraKey}, http.StatusAccepted, ""},
	}
	want := 0
	for _, tc := range cases {
		rec := b.do(t, req{method: http.MethodPost, path: "/infra-events", body: event, remote: tc.remote, headers: tc.headers})
		require.Equal(t, tc.status, rec.Code, "%s: %s", tc.name, rec.Body.String())
		if tc.code != "" {
			require.Equal(t, tc.code, errorCode(t, rec), tc.name)
			require.NotContains(t, rec.Body.String(), testInfraKey, tc.name)
		} else {
			want++
		}
		require.Equal(t, want, infraEventCount(t, b), "%s: only accepted requests store events", tc.name)
	}
}

// TestInfraEventsDenyByDefault: without INFRA_INGEST_ALLOWED_CIDRS no address may
// post, loopback included; without INFRA_INGEST_KEY no key opens it.
func TestInfraEventsDenyByDefault(t *testing.T) {
	t.Parallel()
	event := map[string]any{"source": "caddy", "message": "started"}
	b := setup(t, map[string]string{"INFRA_INGEST_KEY": testInfraKey})
	rec := b.do(t, req{method: http.MethodPost, path: "/infra-events", body: event, remote: "127.0.0.1:4000",
		headers: map[string]string{auth.HeaderInfraKey: testInfraKey}})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())

	b = setup(t, map[string]string{"INFRA_INGEST_ALLOWED_CIDRS": "127.0.0.0/8"})
	rec = b.do(t, req{method: http.MethodPost, path: "/infra-events", body: event, remote: "127.0.0.1:4000",
		headers: map[string]string{auth.HeaderInfraKey: testInfraKey}})
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	require.Equal(t, "infra_key_not_configured", errorCode(t, rec))
	require.Equal(t, 0, infraEventCount(t, b))
}

// TestInfraEventsLimits: a body over 256 KB and a batch over 500 events get 413, a
// field over its limit 422 naming it, and nothing of a refused batch is stored.
func TestInfraEventsLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, infraEnv())
	post := func(body any) (int, string) {
		rec := b.do(t, req{method: http.MethodPost, path: "/infra-events", body: body, remote: "10.137.241.7:4000",
			headers: map[string]string{auth.HeaderInfraKey: testInfraKey}})
		return rec.Code, rec.Body.String()
	}
	ev := func(msg string) map[string]any { return map[string]any{"source": "vector", "message": msg} }

	code, body := post([]any{ev(strings.Repeat("x", 7000)), ev(strings.Repeat("y", 7000))})
	require.Equal(t, http.StatusAccepted, code, body)
	require.Equal(t, 2, infraEventCount(t, b))

	big := make([]any, 40)
	for i := range big {
		big[i] = ev(strings.Repeat("z", 7000))
	}
	code, body = post(big)
	require.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	require.Contains(t, body, "256 KB")

	many := make([]any, infraevents.MaxBatch+1)
	for i := range many {
		many[i] = ev("m")
	}
	code, body = post(many)
	require.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	require.Contains(t, body, "too_many_events")

	for _, tc := range []struct {
		name  string
		event map[string]any
		field string
	}{
		{"message too long", ev(strings.Repeat("x", infraevents.MaxMessage+1)), "events[1].message"},
		{"source too long", map[string]any{"source": strings.Repeat("s", infraevents.MaxSource+1), "message": "m"}, "events[1].source"},
		{"unknown level", map[string]any{"source": "s", "message": "m", "level": "loud"}, "events[1].level"},
		{"attrs not an object", map[string]any{"source": "s", "message": "m", "attrs": []int{1}}, "events[1].attrs"},
		{"attrs too large", map[string]any{"source": "s", "message": "m", "attrs": map[string]string{"k": strings.Repeat("a", infraevents.MaxAttrs)}}, "events[1].attrs"},
		{"no message", map[string]any{"source": "s"}, "events[1].message"},
	} {
		code, body := post([]any{ev("fine"), tc.event})
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", tc.name, body)
		require.Contains(t, body, tc.field, tc.name)
	}
	code, body = post(map[string]any{"source": "s", "message": "m", "replay_nonce": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, code, body)
	require.Equal(t, 2, infraEventCount(t, b), "refused batches store nothing")
}

// TestInfraEventsStored: what a shipper sends is what is stored, levels spelled
// the table's way, and the event's own time kept apart from the arrival.
func TestInfraEventsStored(t *testing.T) {
	t.Parallel()
	b := setup(t, infraEnv())
	rec := b.do(t, req{method: http.MethodPost, path: "/infra-events", remote: "10.137.241.7:4000",
		headers: map[string]string{auth.HeaderInfraKey: testInfraKey},
		body: []any{
			map[string]any{"source": "postgres", "level": "WARN", "message": "slow query", "time": "2026-01-02T03:04:05Z", "attrs": map[string]any{"ms": 1200}},
			map[string]any{"source": "caddy", "message": "tls renewed"},
		}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"accepted":2}`, rec.Body.String())
	var level, attrs string
	var occurred *time.Time
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT level, context::text, occurred_at FROM infra_events WHERE source = 'postgres'`).Scan(&level, &attrs, &occurred))
	require.Equal(t, "warning", level)
	require.JSONEq(t, `{"ms":1200}`, attrs)
	require.NotNil(t, occurred)
	require.True(t, occurred.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT level, occurred_at FROM infra_events WHERE source = 'caddy'`).Scan(&level, &occurred))
	require.Equal(t, "info", level)
	require.Nil(t, occurred)
}

// TestInfraEventsPurge: the daily data.purge deletes events received more than
// seven days ago and keeps the rest.
func TestInfraEventsPurge(t *testing.T) {
	t.Parallel()
	b := setup(t, infraEnv())
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, `INSERT INTO infra_events (source, level, message, received_at) VALUES
		('old', 'info', 'eight days ago', now() - interval '8 days'),
		('edge', 'info', 'six days ago', now() - interval '6 days'),
		('new', 'info', 'just now', now())`)
	require.NoError(t, err)
	require.NoError(t, PurgeFunc(b.pool, b.app.Audit, slog.New(slog.DiscardHandler))(ctx))
	rows, err := b.pool.Query(ctx, `SELECT source FROM infra_events ORDER BY source`)
	require.NoError(t, err)
	var left []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		left = append(left, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"edge", "new"}, left)
}
