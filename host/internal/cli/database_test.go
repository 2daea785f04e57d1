package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

// embeddedConfig is the configuration of `make run`: no DATABASE_URL, the private
// cluster under dataDir/pg.
func embeddedConfig(t *testing.T) *config.Config {
	t.Helper()
	// Not t.TempDir: when the tests run as root, the postgres user must be able to
	// pass through every parent folder.
	dataDir, err := os.MkdirTemp("", "lectern-approle-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dataDir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	cfg, err := config.Load(lookup(map[string]string{"LECTERN_DATA_DIR": dataDir}))
	require.NoError(t, err)
	return cfg
}

// startHost runs the host's start-up path (openDatabase, migrateDatabase) and
// returns the host's database and what it logged.
func startHost(t *testing.T, cfg *config.Config) (*database, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	db, err := openDatabase(context.Background(), cfg, log)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	_, _, err = migrateDatabase(context.Background(), db, log)
	require.NoError(t, err, "logs:\n%s", logs)
	return db, logs
}

// superuserPool connects to the embedded database as the cluster's superuser, the
// way an older version of the host did.
func superuserPool(t *testing.T, cfg *config.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://"+pgembed.SuperUser+"@/"+embeddedDatabase+
		"?sslmode=disable&host="+filepath.Join(cfg.DataDir, "pg", "run"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// TestEmbeddedHostCannotSwitchTheAuditLogOff is issue 14 item 8 on a default
// install: the host's own pool is not a superuser and does not own the audit log,
// so nothing it can send disables, drops, truncates or rewrites the log, while its
// product writes and the purge's scrub still work.
func TestEmbeddedHostCannotSwitchTheAuditLogOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := embeddedConfig(t)
	db, logs := startHost(t, cfg)
	pool := db.Pool

	var role string
	var super, createDB, createRole, bypassRLS bool
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT rolname, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls FROM pg_roles WHERE rolname = current_user`).
		Scan(&role, &super, &createDB, &createRole, &bypassRLS))
	require.Equal(t, pgembed.AppRole, role)
	require.False(t, super, "the host's role is not a superuser")
	require.False(t, createDB || createRole || bypassRLS)
	require.NotContains(t, logs.String(), "not enforced", "the start-up check finds the rules enforced")
	why, err := audit.Enforcement(ctx, pool)
	require.NoError(t, err)
	require.Empty(t, why)

	// A product write as the application's role, and an audit entry about it.
	var userID uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&userID))
	audit.New(pool, slog.New(slog.DiscardHandler)).Record(ctx, userID, "auth.login", "session",
		map[string]any{"email": "ann@example.org", "ip": "192.0.2.1"})
	entry := func() (string, string, []byte) {
		t.Helper()
		var user, action *string
		var meta []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT user_id, action, metadata FROM audit_log WHERE resource = 'session'`).
			Scan(&user, &action, &meta))
		if user == nil {
			return "", *action, meta
		}
		return *user, *action, meta
	}
	gotUser, gotAction, gotMeta := entry()
	require.Equal(t, userID.String(), gotUser)
	require.Equal(t, "auth.login", gotAction)

	for _, stmt := range []string{
		`ALTER TABLE audit_log DISABLE RULE audit_log_no_update`,
		`ALTER TABLE audit_log DISABLE RULE audit_log_no_delete`,
		`DROP RULE audit_log_no_update ON audit_log`,
		`ALTER TABLE audit_log DISABLE TRIGGER ALL`,
		`ALTER TABLE audit_log OWNER TO ` + pgembed.AppRole,
		`TRUNCATE audit_log`,
		`DROP TABLE audit_log`,
		`DROP SCHEMA public CASCADE`,
		`ALTER EVENT TRIGGER audit_log_no_drop DISABLE`,
		`CREATE OR REPLACE FUNCTION audit_log_scrub(user_ids text[]) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint'`,
		`SET session_replication_role = replica`,
	} {
		// Each in a transaction rolled back, so one that wrongly succeeds changes
		// nothing for the next.
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
			return errRollback
		})
		require.Error(t, err, stmt)
		require.NotErrorIs(t, err, errRollback, "%s succeeded as the application's role", stmt)
	}

	tag, err := pool.Exec(ctx, `UPDATE audit_log SET action = 'auth.logout', user_id = NULL`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "UPDATE is a no-op")
	tag, err = pool.Exec(ctx, `DELETE FROM audit_log`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "DELETE is a no-op")
	user, action, meta := entry()
	require.Equal(t, userID.String(), user)
	require.Equal(t, "auth.login", action)
	require.JSONEq(t, string(gotMeta), string(meta))

	// The daily purge (data.purge) as the application's role: the account deleted
	// past its retention goes, and its audit entries are scrubbed.
	_, err = pool.Exec(ctx, `UPDATE users SET deleted_at = now() - interval '31 days' WHERE id = $1`, userID)
	require.NoError(t, err)
	require.NoError(t, app.PurgeFunc(pool, audit.New(pool, slog.New(slog.DiscardHandler)), slog.New(slog.DiscardHandler))(ctx))
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM users WHERE id = $1`, userID).Scan(&left))
	require.Zero(t, left, "the purge deleted the account")
	user, action, meta = entry()
	require.Empty(t, user, "the scrub nulls the user")
	require.Equal(t, "auth.login", action, "and keeps the action")
	require.JSONEq(t, `{}`, string(meta), "and strips the PII keys")
	tag, err = pool.Exec(ctx, `UPDATE audit_log SET action = 'auth.logout'`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "the no-update rule is on again after the scrub")
}

// errRollback ends a transaction that must not commit.
var errRollback = errors.New("rolled back on purpose")

// TestEmbeddedInstallOfAnOlderVersionIsHandedOver is an embedded cluster an older
// version made, where the superuser owns every table: the next start hands the
// schema, River's tables included, to the application's role, keeps its data, and
// hands over what a later migration adds.
func TestEmbeddedInstallOfAnOlderVersionIsHandedOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := embeddedConfig(t)

	// The older version: migrations and work as the superuser.
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(cfg.DataDir, "pg"), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Remove(context.Background()) })
	require.NoError(t, cluster.EnsureDatabase(ctx, embeddedDatabase))
	old := superuserPool(t, cfg)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	_, err = store.NewMigrator(old, migs).Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, jobs.Migrate(ctx, old))
	_, err = old.Exec(ctx, `INSERT INTO users (email) VALUES ('ann@example.org')`)
	require.NoError(t, err)
	require.Equal(t, pgembed.SuperUser, tableOwner(t, old, "users"))

	// `lectern migrate --status` reads and changes nothing.
	var out, errOut bytes.Buffer
	code := Run(ctx, []string{"migrate", "--status"}, lookup(map[string]string{"LECTERN_DATA_DIR": cfg.DataDir}), &out, &errOut)
	require.Equal(t, 0, code, "stderr: %s", errOut.String())
	require.Contains(t, out.String(), "schema version")
	require.Equal(t, pgembed.SuperUser, tableOwner(t, old, "users"), "--status hands nothing over")

	db, logs := startHost(t, cfg)
	require.Contains(t, logs.String(), "handed the schema to the application's database role")
	require.Empty(t, ownedBy(t, old, pgembed.SuperUser), "the superuser keeps nothing in the schema")
	for _, table := range []string{"users", "schema_migrations", "river_job", "river_leader", "river_queue", "river_migration"} {
		require.Equal(t, pgembed.AppRole, tableOwner(t, old, table), table)
	}
	require.Equal(t, "lectern_audit", tableOwner(t, old, "audit_log"))
	var dbOwner string
	require.NoError(t, old.QueryRow(ctx, `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`).Scan(&dbOwner))
	require.Equal(t, pgembed.AppRole, dbOwner)

	var n int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM users WHERE email = 'ann@example.org'`).Scan(&n))
	require.Equal(t, 1, n, "the data an older version wrote is the application's")
	_, err = db.Pool.Exec(ctx, `INSERT INTO users (email) VALUES ('bob@example.org')`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO river_queue (name, updated_at) VALUES ('approle_test', now())`)
	require.NoError(t, err, "River's tables are the application's")
	for _, index := range river.ReindexerIndexNamesDefault() {
		// River's maintenance rebuilds these, which only the table's owner may do.
		_, err = db.Pool.Exec(ctx, "REINDEX INDEX CONCURRENTLY "+index)
		require.NoError(t, err, index)
	}

	// A second start finds nothing to hand over; one after a new table (a later
	// migration's) hands that table over.
	_, logs = startHost(t, cfg)
	require.NotContains(t, logs.String(), "handed the schema")
	_, err = old.Exec(ctx, `CREATE TABLE later_table (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY)`)
	require.NoError(t, err)
	_, logs = startHost(t, cfg)
	require.Contains(t, logs.String(), `"objects":1`)
	require.Equal(t, pgembed.AppRole, tableOwner(t, old, "later_table"))
	_, err = db.Pool.Exec(ctx, `INSERT INTO later_table DEFAULT VALUES`)
	require.NoError(t, err)
}

func tableOwner(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	var owner string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = $1`, table).Scan(&owner))
	return owner
}

// ownedBy lists the relations, types and functions of schema public that role owns.
func ownedBy(t *testing.T, pool *pgxpool.Pool, role string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'relation ' || relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relowner = to_regrole($1)
		UNION ALL
		SELECT 'type ' || typname FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typowner = to_regrole($1)
		UNION ALL
		SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND proowner = to_regrole($1)`, role)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}
