// Package dbtest gives each test its own fresh PostgreSQL database, cloned from a
// template database that already carries every migration, so tests run in parallel
// against real PostgreSQL and leave nothing behind.
//
// The server comes from TEST_DATABASE_URL, which `make test` sets to one private
// cluster shared by every test package of the run (see `lectern devdb exec`). A
// package whose TestMain calls dbtest.Main also runs under a plain `go test`: with
// TEST_DATABASE_URL unset, Main starts a throwaway private cluster for that package
// and removes it when the tests end.
//
// This package is for tests only.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

// EnvURL names the variable holding the test server's connection URL. Its database
// part names the maintenance database to connect to (usually postgres).
const EnvURL = pgembed.TestURLEnv

// Main runs the package's tests. Call it from TestMain:
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv(EnvURL) != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "lectern-pgtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
		return 1
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: dir, MaxConnections: 300, Logger: quiet})
	if err != nil {
		_ = os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "dbtest: start a private PostgreSQL cluster (or set "+EnvURL+"):", err)
		return 1
	}
	defer func() {
		if err := cluster.Remove(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
		}
	}()
	os.Setenv(EnvURL, cluster.ConnString("postgres"))
	return m.Run()
}

var (
	adminOnce sync.Once
	adminPool *pgxpool.Pool
	adminErr  error

	templateOnce sync.Once
	templateName string
	templateErr  error
)

func admin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	adminOnce.Do(func() {
		raw := os.Getenv(EnvURL)
		if raw == "" {
			adminErr = fmt.Errorf("%s is not set: run the tests with `make test`, or call dbtest.Main from TestMain", EnvURL)
			return
		}
		adminPool, adminErr = pgxpool.New(context.Background(), raw)
	})
	if adminErr != nil {
		t.Fatalf("dbtest: %v", adminErr)
	}
	return adminPool
}

// NewDB returns a pool on a new database holding the full migrated schema. The
// database is dropped when the test ends.
func NewDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := newDB(t, template(t))
	return pool
}

// NewDBWithURL is NewDB that also returns the database's URL (as the server's
// superuser), for tests of code that connects by URL or runs pg_dump.
func NewDBWithURL(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	return newDB(t, template(t))
}

// NewEmptyDB returns a new database with no schema at all, and its URL, for tests of
// the migration runner and the CLI. It is dropped when the test ends.
func NewEmptyDB(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	return newDB(t, "template0")
}

func newDB(t testing.TB, fromTemplate string) (*pgxpool.Pool, string) {
	t.Helper()
	ctx := context.Background()
	adm := admin(t)
	name := "test_" + randomHex(8)
	if _, err := adm.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, pgx.Identifier{fromTemplate}.Sanitize())); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	dbURL := databaseURL(t, name)
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	cfg.AfterConnect = store.AfterConnect // as the host's pool
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("dbtest: connect: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		dropCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := adm.Exec(dropCtx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	return pool, dbURL
}

// template returns the name of a template database migrated to this binary's schema.
// The name carries a digest of the migrations, so a changed migration set builds a
// new template; an advisory lock keeps test packages running at once from building
// it twice.
func template(t testing.TB) string {
	t.Helper()
	templateOnce.Do(func() { templateName, templateErr = buildTemplate(admin(t)) })
	if templateErr != nil {
		t.Fatalf("dbtest: %v", templateErr)
	}
	return templateName
}

func buildTemplate(adm *pgxpool.Pool) (string, error) {
	ctx := context.Background()
	migs, err := store.EmbeddedMigrations()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range migs {
		h.Write(m.Checksum[:])
	}
	name := "lectern_template_" + hex.EncodeToString(h.Sum(nil))[:16]

	conn, err := adm.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7355608)"); err != nil {
		return "", err
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(7355608)") //nolint:errcheck

	var ready bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)", name).Scan(&ready)
	if err != nil || ready {
		return name, err
	}
	// A half-built template from an interrupted run is not marked as a template.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, replaceDatabase(adm.Config().ConnString(), name))
	if err != nil {
		return "", err
	}
	_, err = store.NewMigrator(pool, migs).Migrate(ctx)
	if err == nil {
		err = jobs.Migrate(ctx, pool) // River's queue tables, as the host applies them
	}
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	return name, nil
}

func databaseURL(t testing.TB, name string) string {
	t.Helper()
	return replaceDatabase(os.Getenv(EnvURL), name)
}

// replaceDatabase swaps the database of a postgres:// URL or a key=value string.
func replaceDatabase(connString, name string) string {
	if u, err := url.Parse(connString); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return connString + " dbname=" + name
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Plan returns PostgreSQL's plan for sql with args (EXPLAIN, not run), one line a
// node, for tests that hold a statement to an index.
func Plan(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `EXPLAIN `+sql, args...)
	if err != nil {
		t.Fatalf("dbtest: explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("dbtest: explain: %v", err)
	}
	return strings.Join(lines, "\n")
}
