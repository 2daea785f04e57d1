package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
)

// superuserOwned lists what the connecting role still owns in the current schema,
// in the words of the catalog, whatever its kind.
func superuserOwned(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'relation ' || c.relname FROM pg_class c
		 WHERE c.relnamespace = current_schema()::regnamespace AND c.relowner = current_user::regrole
		UNION ALL
		SELECT 'type ' || t.typname FROM pg_type t
		 WHERE t.typnamespace = current_schema()::regnamespace AND t.typowner = current_user::regrole
		UNION ALL
		SELECT 'function ' || p.proname FROM pg_proc p
		 WHERE p.pronamespace = current_schema()::regnamespace AND p.proowner = current_user::regrole
		ORDER BY 1`)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

// newRole creates role (roles are per cluster) in a fresh migrated database, and
// drops it again before the database goes.
func newRole(t *testing.T, role string) *pgxpool.Pool {
	t.Helper()
	pool := dbtest.NewDB(t)
	_, err := pool.Exec(context.Background(), "CREATE ROLE "+role+" NOLOGIN")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "REASSIGN OWNED BY "+role+" TO current_user; DROP OWNED BY "+role+"; DROP ROLE "+role)
		require.NoError(t, err)
	})
	return pool
}

// TestHandOverGivesEveryKindOfObjectButTheAuditLog migrates a database as the
// superuser, adds one object of every kind a later migration might create, and
// hands the schema to a fresh role: the role owns everything the superuser owned,
// the database included, except the audit log and its functions.
func TestHandOverGivesEveryKindOfObjectButTheAuditLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	role := "lectern_handover_" + hex.EncodeToString(b)
	pool := newRole(t, role)

	var super bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super))
	require.True(t, super, "the test database is migrated by a superuser")

	_, err := pool.Exec(ctx, `
		CREATE TABLE later_parts (id bigint GENERATED ALWAYS AS IDENTITY, at date NOT NULL) PARTITION BY RANGE (at);
		CREATE TABLE later_parts_2026 PARTITION OF later_parts FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
		CREATE TABLE later_serial (id serial PRIMARY KEY);
		CREATE SEQUENCE later_seq;
		CREATE VIEW later_view AS SELECT id FROM later_serial;
		CREATE MATERIALIZED VIEW later_matview AS SELECT 1 AS one;
		CREATE TYPE later_enum AS ENUM ('a', 'b');
		CREATE TYPE later_pair AS (a int, b int);
		CREATE TYPE later_range AS RANGE (subtype = int4);
		CREATE DOMAIN later_domain AS text CHECK (VALUE <> '');
		CREATE FUNCTION later_fn(int) RETURNS int LANGUAGE sql AS 'SELECT $1';
		CREATE PROCEDURE later_proc() LANGUAGE sql AS 'SELECT 1';
		CREATE AGGREGATE later_agg(int) (sfunc = int4pl, stype = int);`)
	require.NoError(t, err)

	n, err := store.HandOver(ctx, pool, role)
	require.NoError(t, err)
	require.Greater(t, n, 30, "the database, the schema's tables and River's")

	require.Empty(t, superuserOwned(t, pool), "the superuser keeps nothing in the schema")
	for _, q := range []string{
		`SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`,
		`SELECT tableowner FROM pg_tables WHERE tablename = 'users'`,
		`SELECT tableowner FROM pg_tables WHERE tablename = 'schema_migrations'`,
		`SELECT tableowner FROM pg_tables WHERE tablename = 'later_parts_2026'`,
		`SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'later_serial_id_seq'`,
		`SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'later_matview'`,
		`SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'later_domain'`,
		`SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = '_later_enum'`,
		`SELECT pg_get_userbyid(typowner) FROM pg_type WHERE typname = 'later_pair'`,
		`SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'later_agg'`,
		`SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'reown_legacy_rows'`,
	} {
		var owner string
		require.NoError(t, pool.QueryRow(ctx, q).Scan(&owner), q)
		require.Equal(t, role, owner, q)
	}
	var auditOwner string
	require.NoError(t, pool.QueryRow(ctx, `SELECT tableowner FROM pg_tables WHERE tablename = 'audit_log'`).Scan(&auditOwner))
	require.Equal(t, "lectern_audit", auditOwner)

	again, err := store.HandOver(ctx, pool, role)
	require.NoError(t, err)
	require.Zero(t, again, "a second run finds nothing to hand over")

	_, err = store.HandOver(ctx, pool, role+"_missing")
	require.ErrorContains(t, err, "does not exist")
}

// TestHandOverLeavesAnAuditLogTheSuperuserKept is the install where migration 0008
// could not give the log to lectern_audit: the log stays with the superuser rather
// than going to the application's role.
func TestHandOverLeavesAnAuditLogTheSuperuserKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	role := "lectern_handover_" + hex.EncodeToString(b)
	pool := newRole(t, role)
	_, err := pool.Exec(ctx, `
		ALTER TABLE audit_log OWNER TO current_user;
		ALTER FUNCTION audit_log_scrub(text[]) OWNER TO current_user;
		ALTER FUNCTION audit_log_refuse_truncate() OWNER TO current_user`)
	require.NoError(t, err)

	_, err = store.HandOver(ctx, pool, role)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		"function audit_log_refuse_truncate", "function audit_log_scrub", "relation audit_log",
		"relation audit_log_action", "relation audit_log_pkey", "relation audit_log_user",
		"relation audit_log_id_seq", "type audit_log", "type _audit_log",
	}, superuserOwned(t, pool), "only the audit log and its functions stay with the superuser")
}
