package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationLockKey is the pg_advisory_lock key that serializes migration runs of
// every host sharing one database.
const migrationLockKey int64 = 0x6c65637465726e // "lectern"

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migration is one numbered SQL file.
type Migration struct {
	Version  int
	Name     string // file name, e.g. 0001_init.sql
	SQL      string
	Checksum [sha256.Size]byte
}

// LoadMigrations reads NNNN_name.sql files from the root of fsys. Versions must be
// unique and start at 1 with no gaps, so that a missing file is noticed at build time
// rather than skipped in production.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("store: migration file %q: name must be NNNN_lowercase_words.sql", e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: version, Name: e.Name(), SQL: string(body), Checksum: sha256.Sum256(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("store: migration %s: expected version %04d (versions start at 1 with no gaps or repeats)", m.Name, i+1)
		}
	}
	return out, nil
}

// Migrator applies migrations to one database.
type Migrator struct {
	pool       *pgxpool.Pool
	migrations []Migration
}

// NewMigrator returns a Migrator for the given migrations, which must come from
// LoadMigrations.
func NewMigrator(pool *pgxpool.Pool, migrations []Migration) *Migrator {
	return &Migrator{pool: pool, migrations: migrations}
}

// Latest is the version of the newest migration the binary carries: the schema
// version this binary expects.
func (m *Migrator) Latest() int {
	if len(m.migrations) == 0 {
		return 0
	}
	return m.migrations[len(m.migrations)-1].Version
}

// AppliedMigration is one migration run by Migrate.
type AppliedMigration struct {
	Migration
	Duration time.Duration
}

// MigrationError names the migration file that failed and, when the database says
// where, the line in it.
type MigrationError struct {
	File string
	Line int // 0 when unknown
	Err  error
}

func (e *MigrationError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("migration %s (line %d): %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("migration %s: %v", e.File, e.Err)
}

func (e *MigrationError) Unwrap() error { return e.Err }

const createSchemaTable = `
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    bytea NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now(),
    duration_ms integer NOT NULL
)`

// Migrate applies every pending migration in order, each in its own transaction
// together with its schema_migrations row. A failing migration is rolled back and
// stops the run. Concurrent runs against one database wait for each other through an
// advisory lock, so two hosts starting at once apply each file once.
//
// Migrate refuses to run when an applied migration's file has changed since, or when
// the database carries a version this binary does not know (a downgrade).
func (m *Migrator) Migrate(ctx context.Context) ([]AppliedMigration, error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Release()

	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		return nil, fmt.Errorf("store: migrate: take lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must be released even when ctx was cancelled.
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(unlockCtx, "SELECT pg_advisory_unlock($1)", migrationLockKey)
	}()

	if _, err := conn.Exec(ctx, createSchemaTable); err != nil {
		return nil, fmt.Errorf("store: migrate: create schema_migrations: %w", err)
	}
	applied, err := appliedChecksums(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}
	if err := m.checkHistory(applied); err != nil {
		return nil, err
	}

	var done []AppliedMigration
	for _, mig := range m.migrations {
		if _, ok := applied[mig.Version]; ok {
			continue
		}
		start := time.Now()
		err := pgx.BeginFunc(ctx, conn.Conn(), func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, mig.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx,
				`INSERT INTO schema_migrations (version, name, checksum, duration_ms) VALUES ($1, $2, $3, $4)`,
				mig.Version, mig.Name, mig.Checksum[:], int(time.Since(start).Milliseconds()))
			return err
		})
		if err != nil {
			return done, &MigrationError{File: mig.Name, Line: errorLine(mig.SQL, err), Err: err}
		}
		done = append(done, AppliedMigration{Migration: mig, Duration: time.Since(start)})
	}
	return done, nil
}

func (m *Migrator) checkHistory(applied map[int][]byte) error {
	known := make(map[int]Migration, len(m.migrations))
	for _, mig := range m.migrations {
		known[mig.Version] = mig
	}
	for version, sum := range applied {
		mig, ok := known[version]
		if !ok {
			return fmt.Errorf("store: database schema version %d is newer than this binary's %d: upgrade lectern before starting it on this database", version, m.Latest())
		}
		if !bytes.Equal(sum, mig.Checksum[:]) {
			return fmt.Errorf("store: migration %s was changed after it was applied to this database; restore the released file and put the change in a new migration", mig.Name)
		}
	}
	return nil
}

func appliedChecksums(ctx context.Context, conn *pgx.Conn) (map[int][]byte, error) {
	rows, err := conn.Query(ctx, `SELECT version, checksum FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	out := map[int][]byte{}
	var version int
	var sum []byte
	_, err = pgx.ForEachRow(rows, []any{&version, &sum}, func() error {
		out[version] = append([]byte(nil), sum...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	return out, nil
}

// SchemaStatus says how a database's schema compares with this binary.
type SchemaStatus struct {
	Current int   // highest applied version; 0 on an empty database
	Latest  int   // highest version this binary carries
	Pending []int // versions not yet applied
}

// UpToDate reports whether every migration of this binary has been applied.
func (s SchemaStatus) UpToDate() bool { return len(s.Pending) == 0 && s.Current == s.Latest }

// Status reads the applied versions without changing anything.
func (m *Migrator) Status(ctx context.Context) (SchemaStatus, error) {
	st := SchemaStatus{Latest: m.Latest()}
	var exists bool
	if err := m.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return st, fmt.Errorf("store: schema status: %w", err)
	}
	applied := map[int]bool{}
	if exists {
		rows, err := m.pool.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return st, fmt.Errorf("store: schema status: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return st, fmt.Errorf("store: schema status: %w", err)
		}
		for _, v := range versions {
			applied[v] = true
			st.Current = max(st.Current, v)
		}
	}
	for _, mig := range m.migrations {
		if !applied[mig.Version] {
			st.Pending = append(st.Pending, mig.Version)
		}
	}
	return st, nil
}

// errorLine maps a PostgreSQL error position (1-based, in characters of the whole
// script) to a line number of the migration file.
func errorLine(sql string, err error) int {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Position <= 0 {
		return 0
	}
	runes := []rune(sql)
	pos := min(int(pgErr.Position), len(runes))
	return strings.Count(string(runes[:pos-1]), "\n") + 1
}
