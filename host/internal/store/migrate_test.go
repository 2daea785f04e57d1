package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// specTables are the records SPEC.md "Resources and their fields" names, plus the
// corpus and learning tables later areas build on.
var specTables = []string{
	"users", "magic_link_tokens", "user_sessions", "user_config", "papers", "user_library",
	"paper_user_state", "paper_recommendations", "daily_log", "projects", "tasks",
	"milestones", "system_events", "pulse_source_health", "paper_extractions",
	"paper_entities", "paper_notes", "pulse_models", "audit_log",
	"messenger_pairing_tokens", "messenger_user_pairings", "job_progress",
	// corpus and learning
	"paper_chunks", "chunk_embeddings", "paper_citations", "entities",
	"entity_relationships", "decks", "cards", "review_logs", "project_papers",
}

func migrate(t *testing.T, pool *pgxpool.Pool) []store.AppliedMigration {
	t.Helper()
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	applied, err := store.NewMigrator(pool, migs).Migrate(context.Background())
	require.NoError(t, err)
	return applied
}

func TestMigrateEmptyDatabaseTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := dbtest.NewEmptyDB(t)

	first := migrate(t, pool)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	require.Len(t, first, len(migs), "every migration applies on an empty database")

	for _, table := range specTables {
		var exists bool
		require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists))
		require.True(t, exists, "table %s", table)
	}

	before := schemaFingerprint(t, pool)
	second := migrate(t, pool)
	require.Empty(t, second, "a second run applies nothing")
	require.Equal(t, before, schemaFingerprint(t, pool), "a second run changes nothing")

	st, err := store.NewMigrator(pool, migs).Status(ctx)
	require.NoError(t, err)
	require.True(t, st.UpToDate())
	require.Equal(t, len(migs), st.Current)
}

// schemaFingerprint lists columns, constraints, indexes, rules and triggers, plus the
// migration history, so that any change to the schema shows.
func schemaFingerprint(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT 'col ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		  FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL
		SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
		  FROM pg_constraint WHERE connamespace = 'public'::regnamespace
		UNION ALL
		SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL
		SELECT 'rule ' || tablename || ' ' || rulename || ' ' || definition FROM pg_rules WHERE schemaname = 'public'
		UNION ALL
		SELECT 'trg ' || tgrelid::regclass || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal
		UNION ALL
		SELECT 'mig ' || version || ' ' || name || ' ' || encode(checksum, 'hex') || ' ' || applied_at FROM schema_migrations
		ORDER BY 1`)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

func TestFailingMigrationRollsBackAndNamesTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := dbtest.NewEmptyDB(t)

	fsys := fstest.MapFS{
		"0001_first.sql":  {Data: []byte("CREATE TABLE first_table (id int);\n")},
		"0002_broken.sql": {Data: []byte("CREATE TABLE half_made (id int);\n\nINSERT INTO no_such_table VALUES (1);\n")},
	}
	migs, err := store.LoadMigrations(fsys)
	require.NoError(t, err)
	applied, err := store.NewMigrator(pool, migs).Migrate(ctx)
	require.Len(t, applied, 1, "the good migration before the broken one stays applied")

	var migErr *store.MigrationError
	require.ErrorAs(t, err, &migErr)
	require.Equal(t, "0002_broken.sql", migErr.File)
	require.Equal(t, 3, migErr.Line, "the line of the failing statement")
	require.Contains(t, err.Error(), "0002_broken.sql")
	require.Contains(t, err.Error(), "no_such_table")

	var halfMade bool
	require.NoError(t, pool.QueryRow(ctx, "SELECT to_regclass('half_made') IS NOT NULL").Scan(&halfMade))
	require.False(t, halfMade, "the failed migration's earlier statements are rolled back")
	var recorded int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&recorded))
	require.Equal(t, 1, recorded)
}

func TestMigrateRefusesChangedOrUnknownHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("changed file", func(t *testing.T) {
		t.Parallel()
		pool, _ := dbtest.NewEmptyDB(t)
		orig := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (id int);")}}
		migs, err := store.LoadMigrations(orig)
		require.NoError(t, err)
		_, err = store.NewMigrator(pool, migs).Migrate(ctx)
		require.NoError(t, err)

		edited := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE a (id bigint);")}}
		migs, err = store.LoadMigrations(edited)
		require.NoError(t, err)
		_, err = store.NewMigrator(pool, migs).Migrate(ctx)
		require.ErrorContains(t, err, "0001_a.sql was changed after it was applied")
	})

	t.Run("newer database", func(t *testing.T) {
		t.Parallel()
		pool, _ := dbtest.NewEmptyDB(t)
		two := fstest.MapFS{
			"0001_a.sql": {Data: []byte("CREATE TABLE a (id int);")},
			"0002_b.sql": {Data: []byte("CREATE TABLE b (id int);")},
		}
		migs, err := store.LoadMigrations(two)
		require.NoError(t, err)
		_, err = store.NewMigrator(pool, migs).Migrate(ctx)
		require.NoError(t, err)

		migs, err = store.LoadMigrations(fstest.MapFS{"0001_a.sql": two["0001_a.sql"]})
		require.NoError(t, err)
		_, err = store.NewMigrator(pool, migs).Migrate(ctx)
		require.ErrorContains(t, err, "schema version 2 is newer than this binary's 1")
	})
}

func TestLoadMigrationsValidatesNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"gap", fstest.MapFS{"0001_a.sql": {}, "0003_c.sql": {}}, "expected version 0002"},
		{"repeat", fstest.MapFS{"0001_a.sql": {}, "0001_b.sql": {}}, "expected version 0002"},
		{"bad name", fstest.MapFS{"1_a.sql": {}}, "name must be NNNN_lowercase_words.sql"},
		{"not starting at one", fstest.MapFS{"0002_a.sql": {}}, "expected version 0001"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := store.LoadMigrations(tc.fsys)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestConcurrentMigrationsApplyEachFileOnce(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.NewEmptyDB(t)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)

	errs := make(chan error, 3)
	counts := make(chan int, 3)
	for range 3 {
		go func() {
			applied, err := store.NewMigrator(pool, migs).Migrate(context.Background())
			errs <- err
			counts <- len(applied)
		}()
	}
	total := 0
	for range 3 {
		require.NoError(t, <-errs)
		total += <-counts
	}
	require.Equal(t, len(migs), total)
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewDB(t)

	_, err := pool.Exec(ctx, `INSERT INTO audit_log (user_id, action, resource, metadata)
		VALUES ('u1', 'auth.magic_link.request', '/api/auth/magic-link', '{"ip": "127.0.0.1"}')`)
	require.NoError(t, err)

	tag, err := pool.Exec(ctx, `UPDATE audit_log SET action = 'tampered', metadata = '{}'`)
	require.NoError(t, err)
	require.EqualValues(t, 0, tag.RowsAffected(), "UPDATE affects no row")

	tag, err = pool.Exec(ctx, `DELETE FROM audit_log`)
	require.NoError(t, err)
	require.EqualValues(t, 0, tag.RowsAffected(), "DELETE affects no row")

	var action, ip string
	require.NoError(t, pool.QueryRow(ctx, `SELECT action, metadata->>'ip' FROM audit_log`).Scan(&action, &ip))
	require.Equal(t, "auth.magic_link.request", action)
	require.Equal(t, "127.0.0.1", ip)

	_, err = pool.Exec(ctx, `TRUNCATE audit_log`)
	require.ErrorContains(t, err, "append-only")

	big := `{"blob": "` + strings.Repeat("x", 4100) + `"}`
	_, err = pool.Exec(ctx, `INSERT INTO audit_log (action, metadata) VALUES ('admin.test', $1)`, big)
	requireCheckViolation(t, err)

	// The purge's sanctioned path: disable the rule inside one transaction.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `ALTER TABLE audit_log DISABLE RULE audit_log_no_update`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE audit_log SET user_id = NULL, metadata = metadata - 'ip' WHERE user_id = 'u1'`)
		if err != nil {
			return err
		}
		require.EqualValues(t, 1, tag.RowsAffected())
		_, err = tx.Exec(ctx, `ALTER TABLE audit_log ENABLE RULE audit_log_no_update`)
		return err
	})
	require.NoError(t, err)
	tag, err = pool.Exec(ctx, `UPDATE audit_log SET action = 'tampered'`)
	require.NoError(t, err)
	require.EqualValues(t, 0, tag.RowsAffected(), "the rule is back after the purge transaction")
}

// TestEveryProductRowIsOwned fails when a table gains a nullable user_id. The two
// exceptions are SPEC's own: system-scoped user_config rows, and audit_log whose
// user_id is free text that the purge nulls.
func TestEveryProductRowIsOwned(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	rows, err := pool.Query(context.Background(), `
		SELECT table_name FROM information_schema.columns
		 WHERE table_schema = 'public' AND column_name = 'user_id' AND is_nullable = 'YES'
		 ORDER BY 1`)
	require.NoError(t, err)
	nullable, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"audit_log", "user_config"}, nullable)
}

func TestChildRowsCannotCrossOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewDB(t)
	alice := createUser(t, pool, "alice@example.org", "user")
	bob := createUser(t, pool, "bob@example.org", "user")

	var project string
	require.NoError(t, pool.QueryRow(ctx,
		`INSERT INTO projects (user_id, name) VALUES ($1, 'thesis') RETURNING id`, alice).Scan(&project))

	_, err := pool.Exec(ctx, `INSERT INTO tasks (user_id, project_id, title) VALUES ($1, $2, 'read')`, bob, project)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "23503", pgErr.Code, "foreign key violation: Bob's task cannot hang off Alice's project")

	_, err = pool.Exec(ctx, `INSERT INTO tasks (user_id, project_id, title) VALUES ($1, $2, 'read')`, alice, project)
	require.NoError(t, err)
}

func TestReownLegacyRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	setup := func(t *testing.T, admins int) (*pgxpool.Pool, []string) {
		pool := dbtest.NewDB(t)
		var ids []string
		for i := range admins {
			ids = append(ids, createUser(t, pool, fmt.Sprintf("admin%d@example.org", i), "admin"))
		}
		createUser(t, pool, "member@example.org", "user")
		_, err := pool.Exec(ctx, `INSERT INTO user_config (user_id, scope, key, value) VALUES
			(NULL, 'user', 'zotero.user_id', '"12345"'),
			(NULL, 'user', 'reading.daily_goal', '3'),
			(NULL, 'system', 'messenger.bot_token', '"system-row"')`)
		require.NoError(t, err)
		return pool, ids
	}
	for _, admins := range []int{0, 2} {
		t.Run(fmt.Sprintf("does nothing with %d admins", admins), func(t *testing.T) {
			t.Parallel()
			pool, _ := setup(t, admins)
			n, err := store.ReownLegacyRows(ctx, pool)
			require.NoError(t, err)
			require.Zero(t, n)
			var nullOwned int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM user_config WHERE user_id IS NULL`).Scan(&nullOwned))
			require.Equal(t, 3, nullOwned, "every legacy and system row keeps its NULL owner")
		})
	}

	t.Run("one admin takes the legacy rows", func(t *testing.T) {
		t.Parallel()
		pool, ids := setup(t, 1)
		admin := ids[0]
		// The admin already has their own daily goal: it wins over the legacy row.
		_, err := pool.Exec(ctx, `INSERT INTO user_config (user_id, key, value) VALUES ($1, 'reading.daily_goal', '5')`, admin)
		require.NoError(t, err)

		n, err := store.ReownLegacyRows(ctx, pool)
		require.NoError(t, err)
		require.Equal(t, 1, n)

		var owner string
		require.NoError(t, pool.QueryRow(ctx, `SELECT user_id::text FROM user_config WHERE key = 'zotero.user_id'`).Scan(&owner))
		require.Equal(t, admin, owner)
		var systemOwned bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT user_id IS NULL FROM user_config WHERE key = 'messenger.bot_token'`).Scan(&systemOwned))
		require.True(t, systemOwned, "system-scoped rows stay NULL-owned")
		var goal string
		require.NoError(t, pool.QueryRow(ctx, `SELECT value::text FROM user_config WHERE key = 'reading.daily_goal' AND user_id = $1`, admin).Scan(&goal))
		require.Equal(t, "5", goal, "the admin's own row is kept")

		n, err = store.ReownLegacyRows(ctx, pool)
		require.NoError(t, err)
		require.Zero(t, n, "a second run changes nothing")
	})
}

func TestSystemScopedConfigCannotHaveAnOwner(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	admin := createUser(t, pool, "root@example.org", "admin")
	_, err := pool.Exec(context.Background(),
		`INSERT INTO user_config (user_id, scope, key, value) VALUES ($1, 'system', 'messenger.bot_token', '"x"')`, admin)
	requireCheckViolation(t, err)
}

func createUser(t *testing.T, pool *pgxpool.Pool, email, role string) string {
	t.Helper()
	var id string
	require.NoError(t, pool.QueryRow(context.Background(),
		`INSERT INTO users (email, role) VALUES ($1, $2) RETURNING id::text`, email, role).Scan(&id))
	return id
}

func requireCheckViolation(t *testing.T, err error) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "want a PostgreSQL error, got %v", err)
	require.Equal(t, "23514", pgErr.Code, "check violation, got %s", pgErr.Message)
}

// TestSharedPapersLoseCallersLinks: before 0009, POST /api/papers/{id}/ingest wrote
// the caller's own link into a shared paper's metadata; the migration drops such a
// link from every shared paper and keeps a private paper's, and the digest stays.
func TestSharedPapersLoseCallersLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := dbtest.NewEmptyDB(t)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	var before []store.Migration
	for _, m := range migs {
		if m.Version < 9 {
			before = append(before, m)
		}
	}
	_, err = store.NewMigrator(pool, before).Migrate(ctx)
	require.NoError(t, err)

	owner := createUser(t, pool, "owner@example.org", "user")
	insert := func(title, visibility string, discoveredBy any, pdfURL, link string) string {
		var id string
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility, discovered_by, pdf_url, metadata)
			VALUES ($1, 'arxiv', $2, $3, nullif($4, ''), jsonb_build_object('download',
			        jsonb_build_object('url', $5::text, 'sha256', 'ab12', 'bytes', 10)))
			RETURNING id::text`, title, visibility, discoveredBy, pdfURL, link).Scan(&id))
		return id
	}
	public := insert("Public, a caller's link", "public", owner, "https://arxiv.org/pdf/1", "https://evil.example/x.pdf")
	feed := insert("Instance-level, a caller's link", "private", nil, "", "https://evil.example/y.pdf")
	own := insert("Public, its own link", "public", owner, "https://arxiv.org/pdf/2", "https://arxiv.org/pdf/2")
	private := insert("Private version", "private", owner, "", "https://mine.example/z.pdf")

	migrate(t, pool)

	link := func(id string) (url *string, sum string) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT metadata->'download'->>'url', metadata->'download'->>'sha256'
			FROM papers WHERE id = $1`, id).Scan(&url, &sum))
		return url, sum
	}
	for _, id := range []string{public, feed} {
		url, sum := link(id)
		require.Nil(t, url, "a shared paper keeps no caller's link")
		require.Equal(t, "ab12", sum, "the digest stays, so the file is still known to be in use")
	}
	for id, want := range map[string]string{own: "https://arxiv.org/pdf/2", private: "https://mine.example/z.pdf"} {
		url, _ := link(id)
		require.NotNil(t, url)
		require.Equal(t, want, *url)
	}
}
