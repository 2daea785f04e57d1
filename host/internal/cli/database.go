package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

// embeddedDatabase is the database the embedded cluster serves Lectern from.
const embeddedDatabase = "lectern"

// database is the host's connection to its database.
type database struct {
	// Pool is what the host works with: serve's handlers, River, import, rotate.
	Pool *pgxpool.Pool

	// migrateURL, when set, connects as the role that runs the migrations (the
	// embedded cluster's superuser), which then hands the schema to appRole. Unset
	// with DATABASE_URL: Pool's own role migrates.
	migrateURL string
	appRole    string

	close func()
}

// Close closes the pool and stops the embedded cluster when this process started
// it and nobody else uses it.
func (db *database) Close() { db.close() }

// migrationPool returns a pool connected as the role that runs the migrations, and
// the func that closes it: a short-lived superuser pool on the embedded cluster, the
// host's own pool otherwise.
func (db *database) migrationPool(ctx context.Context) (*pgxpool.Pool, func(), error) {
	if db.migrateURL == "" {
		return db.Pool, func() {}, nil
	}
	pool, err := store.Open(ctx, db.migrateURL)
	if err != nil {
		return nil, nil, err
	}
	return pool, pool.Close, nil
}

// openDatabase connects to DATABASE_URL, or, when it is unset, starts the private
// cluster under LECTERN_DATA_DIR/pg (openEmbedded). The database's Close closes the
// pool and stops the cluster only when this call started it and nobody else uses it
// (pgembed.Cluster.Release): `lectern import` beside `make run` leaves the server up.
func openDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger) (*database, error) {
	if cfg.DatabaseURL.IsSet() {
		pool, err := store.Open(ctx, cfg.DatabaseURL.Value())
		if err != nil {
			return nil, err
		}
		return &database{Pool: pool, close: pool.Close}, nil
	}

	cluster, err := pgembed.Start(ctx, pgembed.Options{
		Dir:     filepath.Join(cfg.DataDir, "pg"),
		Durable: true,
		Install: true,
		Logger:  log,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded database (set DATABASE_URL to use your own): %w", err)
	}
	stop := func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := cluster.Release(stopCtx); err != nil {
			log.Error("stop embedded database", "error", err)
		}
	}
	db, err := openEmbedded(ctx, cluster, embeddedDatabase)
	if err != nil {
		stop()
		return nil, err
	}
	db.close = func() { db.Pool.Close(); stop() }
	return db, nil
}

// openEmbedded connects to database name of an embedded cluster, creating it and
// the application's role when missing. The host's pool connects as that role
// (pgembed.AppRole), which is not a superuser; migrateDatabase migrates as the
// superuser and then hands the schema to it. The returned database's Close only
// closes the pool.
func openEmbedded(ctx context.Context, cluster *pgembed.Cluster, name string) (*database, error) {
	if err := cluster.EnsureDatabase(ctx, name); err != nil {
		return nil, err
	}
	if err := cluster.EnsureAppRole(ctx); err != nil {
		return nil, err
	}
	pool, err := store.Open(ctx, cluster.AppConnString(name))
	if err != nil {
		return nil, err
	}
	return &database{Pool: pool, migrateURL: cluster.ConnString(name), appRole: pgembed.AppRole, close: pool.Close}, nil
}

// migrateDatabase applies pending migrations, logs each one, hands the schema to
// the application's role on the embedded cluster, and hands legacy rows to the
// single admin (SPEC ownership rule 9). The returned Migrator reads the schema's
// status through the host's own pool.
func migrateDatabase(ctx context.Context, db *database, log *slog.Logger) (*store.Migrator, []store.AppliedMigration, error) {
	migs, err := store.EmbeddedMigrations()
	if err != nil {
		return nil, nil, err
	}
	applied, err := migrateAs(ctx, db, migs, log)
	if err != nil {
		return nil, applied, err
	}
	n, err := store.ReownLegacyRows(ctx, db.Pool)
	if err != nil {
		return nil, applied, err
	}
	if n > 0 {
		log.Info("re-owned legacy rows to the single admin", "rows", n)
	}
	// Migration 0008 hands audit_log to its own role only when a superuser runs it;
	// say so when this connection could still switch the log's rules off.
	if why, err := audit.Enforcement(ctx, db.Pool); err != nil {
		log.Warn("cannot tell whether the audit log's rules hold against this database role", "error", err)
	} else if why != "" {
		log.Warn("the audit log's append-only rules are not enforced against this connection", "reason", why)
	}
	return store.NewMigrator(db.Pool, migs), applied, nil
}

// migrateAs runs Lectern's and River's migrations as the migrating role and, when
// that is not the host's own role, hands it the schema: the objects a migration
// created, or an older version's install left with the superuser.
func migrateAs(ctx context.Context, db *database, migs []store.Migration, log *slog.Logger) ([]store.AppliedMigration, error) {
	pool, closePool, err := db.migrationPool(ctx)
	if err != nil {
		return nil, err
	}
	defer closePool()
	applied, err := store.NewMigrator(pool, migs).Migrate(ctx)
	for _, a := range applied {
		log.Info("applied migration", "file", a.Name, "duration_ms", a.Duration.Milliseconds())
	}
	if err != nil {
		return applied, err
	}
	// River's own tables, migrated by River's migrator (idempotent).
	if err := jobs.Migrate(ctx, pool); err != nil {
		return applied, err
	}
	if db.appRole == "" {
		return applied, nil
	}
	n, err := store.HandOver(ctx, pool, db.appRole)
	if err != nil {
		return applied, err
	}
	if n > 0 {
		log.Info("handed the schema to the application's database role", "role", db.appRole, "objects", n)
	}
	return applied, nil
}
