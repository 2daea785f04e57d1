package audit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

type testBundle struct {
	pool *pgxpool.Pool
	log  *audit.Log
	logs *strings.Builder
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := dbtest.NewDB(t)
	logs := &strings.Builder{}
	return &testBundle{pool: pool, log: audit.New(pool, slog.New(slog.NewTextHandler(logs, nil))), logs: logs}
}

func (b *testBundle) count(t *testing.T, where string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE `+where, args...).Scan(&n))
	return n
}

// TestRecordStoresAnyInput: no resource or metadata a client can send makes the
// insert fail.
func TestRecordStoresAnyInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	user := uuid.New()
	manyKeys := map[string]any{}
	for i := range 400 {
		manyKeys[fmt.Sprintf("k%04d", i)] = i // 10 bytes each in Go's JSON, 12 in jsonb's text
	}
	cases := []struct {
		name     string
		resource string
		meta     map[string]any
	}{
		{"a two-byte character across the resource limit", strings.Repeat("a", 511) + "éé", nil},
		{"a four-byte character across the resource limit", strings.Repeat("a", 510) + "𝔸𝔸𝔸", nil},
		{"NUL and invalid UTF-8 in the resource", "/api/x\x00y\xff\xfez", nil},
		{"NUL and invalid UTF-8 in the metadata", "/api/x", map[string]any{"ip": "198.51.100.7", "agent": "a\x00b\xc3(", "k\x00": []any{"\x00"}, "list": []string{"\xff"}}},
		{"metadata under 4 KB in Go but over it as jsonb text", "/api/x", manyKeys},
		{"a NUL inside a value the cleaner does not know", "/api/x", map[string]any{"v": struct{ S string }{"a\x00b"}}},
	}
	for _, tc := range cases {
		b.log.Record(ctx, user, audit.ActionAdminConfigChange, tc.resource, tc.meta)
	}
	require.NotContains(t, b.logs.String(), "audit write failed")
	require.Equal(t, len(cases), b.count(t, "user_id = $1", user.String()), "every entry landed")

	rows, err := b.pool.Query(ctx, `SELECT resource FROM audit_log WHERE user_id = $1 ORDER BY id`, user.String())
	require.NoError(t, err)
	resources, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("a", 511)+"é", resources[0], "cut after the last whole character that fits")
	require.Equal(t, strings.Repeat("a", 510)+"𝔸𝔸", resources[1])
	require.Equal(t, "/api/xy\uFFFDz", resources[2])
	for _, r := range resources {
		require.True(t, utf8.ValidString(r))
	}
	var agent string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT metadata->>'agent' FROM audit_log WHERE user_id = $1 AND metadata ? 'agent'`, user.String()).Scan(&agent))
	require.Equal(t, "ab\uFFFD(", agent)
	require.Equal(t, 1, b.count(t, "user_id = $1 AND metadata->>'truncated' = 'true'", user.String()), "the oversized metadata became the marker")
	require.Equal(t, 1, b.count(t, "user_id = $1 AND metadata->>'unstorable' = 'true'", user.String()), "the NUL the cleaner missed lost its details, not the event")
}

// TestUnauthenticatedFloodsAreSampled: 10,000 refused attempts write a bounded
// number of rows, and the rows count every attempt.
func TestUnauthenticatedFloodsAreSampled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	audit.SetClock(b.log, func() time.Time { return now })

	sources := []string{"198.51.100.7", "203.0.113.9", "2001:db8:1:2::1", "2001:db8:1:2::ffff"} // the last two: one /64
	for i := range 10_000 {
		b.log.Record(ctx, uuid.Nil, audit.ActionAPIKeyInvalid, "/api/me", map[string]any{"ip": sources[i%len(sources)]})
	}
	// Signed-in users' events are never sampled.
	user := uuid.New()
	for range 20 {
		b.log.Record(ctx, user, audit.ActionLogout, "/api/auth/logout", map[string]any{"ip": "198.51.100.7"})
	}
	now = now.Add(2 * audit.FloodWindow)
	b.log.Record(ctx, uuid.Nil, audit.ActionAPIKeyInvalid, "/api/me", map[string]any{"ip": "198.51.100.7"}) // a new window
	b.log.Flush()

	require.Equal(t, 20, b.count(t, "user_id = $1", user.String()))
	rows := b.count(t, "action = $1", audit.ActionAPIKeyInvalid)
	require.LessOrEqual(t, rows, 3*audit.FloodBurst+3+1, "one-by-one rows per source, one summary per source, and the new window's")
	require.Equal(t, 3*audit.FloodBurst+3+1, rows)

	var attempts, written, single int
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT coalesce(sum((metadata->>'attempts')::int), 0), coalesce(sum((metadata->>'written')::int), 0)
		  FROM audit_log WHERE action = $1 AND metadata ? 'sampled'`, audit.ActionAPIKeyInvalid).Scan(&attempts, &written))
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = $1 AND NOT metadata ? 'sampled'`, audit.ActionAPIKeyInvalid).Scan(&single))
	require.Equal(t, 10_000, attempts, "the summaries count every attempt of the flood")
	require.Equal(t, single-1, written, "and say which were written one by one (all but the new window's)")

	var summary, ip string
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT metadata->>'summary', metadata->>'ip' FROM audit_log
		 WHERE action = $1 AND metadata ? 'sampled' AND metadata->>'ip' = '2001:db8:1:2::/64'`, audit.ActionAPIKeyInvalid).Scan(&summary, &ip))
	require.Contains(t, summary, "5000 auth.api_key.invalid events from 2001:db8:1:2::/64")
}

// TestTheAppRoleCannotDisableTheAuditRules runs as a role like the host's own when
// it is neither a superuser nor the log's owner: it owns the database and writes
// the log, and may run the purge's scrub, but cannot switch the rules off.
func TestTheAppRoleCannotDisableTheAuditRules(t *testing.T) {
	t.Parallel()
	super := setup(t)
	ctx := context.Background()
	role := "lectern_app_" + randomHex(t)
	var db string
	require.NoError(t, super.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db))
	_, err := super.pool.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s NOLOGIN; ALTER DATABASE %s OWNER TO %s`, role, pgx.Identifier{db}.Sanitize(), role))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = super.pool.Exec(context.Background(), fmt.Sprintf(`ALTER DATABASE %s OWNER TO session_user`, pgx.Identifier{db}.Sanitize()))
		_, _ = super.pool.Exec(context.Background(), `DROP ROLE `+role)
	})
	cfg := super.pool.Config().Copy()
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `SET ROLE `+role)
		return err
	}
	app, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(app.Close)
	appLog := audit.New(app, slog.New(slog.DiscardHandler))

	why, err := audit.Enforcement(ctx, super.pool)
	require.NoError(t, err)
	require.Contains(t, why, "superuser", "the test's own connection is told it can bypass the rules")
	why, err = audit.Enforcement(ctx, app)
	require.NoError(t, err)
	require.Empty(t, why, "the app role cannot")

	gone, kept := uuid.New(), uuid.New()
	for _, u := range []uuid.UUID{gone, kept} {
		appLog.Record(ctx, u, audit.ActionMagicLinkVerify, "/api/auth/verify", map[string]any{"ip": "198.51.100.7", "email": "x@example.org"})
	}
	require.Equal(t, 2, super.count(t, "user_id IS NOT NULL"), "the app role writes the log")

	for _, stmt := range []string{
		`ALTER TABLE audit_log DISABLE RULE audit_log_no_update`,
		`ALTER TABLE audit_log DISABLE RULE audit_log_no_delete`,
		`DROP RULE audit_log_no_update ON audit_log`,
		`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_truncate`,
		`ALTER TABLE audit_log DISABLE TRIGGER ALL`,
		`DROP TRIGGER audit_log_no_truncate ON audit_log`,
		`ALTER TABLE audit_log OWNER TO ` + role,
		`TRUNCATE audit_log`,
		`DROP TABLE audit_log`,
		`DROP TABLE audit_log CASCADE`,
		`DROP SCHEMA public CASCADE`,
		`ALTER EVENT TRIGGER audit_log_no_drop DISABLE`,
		`SET session_replication_role = replica`,
		`CREATE OR REPLACE FUNCTION audit_log_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`,
		`ALTER FUNCTION audit_log_scrub(text[]) SECURITY INVOKER`,
		`CREATE OR REPLACE FUNCTION audit_log_scrub(user_ids text[]) RETURNS bigint LANGUAGE sql AS $$ SELECT 0::bigint $$`,
	} {
		_, err := app.Exec(ctx, stmt)
		require.Error(t, err, stmt)
	}
	for _, stmt := range []string{`UPDATE audit_log SET action = 'tampered'`, `DELETE FROM audit_log`} {
		tag, err := app.Exec(ctx, stmt)
		if err == nil {
			require.Zero(t, tag.RowsAffected(), stmt)
		}
	}
	require.Equal(t, 2, super.count(t, "action = $1", audit.ActionMagicLinkVerify), "nothing changed")

	// The purge's scrub still works through the audit owner's function.
	var n int64
	err = pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
		n, err = audit.ScrubUsersTx(ctx, tx, []uuid.UUID{gone})
		return err
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, 1, super.count(t, "user_id IS NULL AND action = $1 AND NOT metadata ? 'ip' AND NOT metadata ? 'email'", audit.ActionMagicLinkVerify))
	require.Equal(t, 1, super.count(t, "user_id = $1 AND metadata->>'ip' = '198.51.100.7'", kept.String()), "others' entries keep everything")
	tag, err := super.pool.Exec(ctx, `UPDATE audit_log SET action = 'tampered'`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "the rule is on again after the scrub")
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
