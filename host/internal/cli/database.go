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

// openDatabase connects to DATABASE_URL, or, when it is unset, starts the private
// cluster under LECTERN_DATA_DIR/pg. The returned close func closes the pool and
// stops the cluster only when this call started it and nobody else uses it
// (pgembed.Cluster.Release): `lectern import` beside `make run` leaves the server up.
func openDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger) (*pgxpool.Pool, func(), error) {
	if cfg.DatabaseURL.IsSet() {
		pool, err := store.Open(ctx, cfg.DatabaseURL.Value())
		if err != nil {
			return nil, nil, err
		}
		return pool, pool.Close, nil
	}

	cluster, err := pgembed.Start(ctx, pgembed.Options{
		Dir:     filepath.Join(cfg.DataDir, "pg"),
		Durable: true,
		Install: true,
		Logger:  log,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("embedded database (set DATABASE_URL to use your own): %w", err)
	}
	stop := func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := cluster.Release(stopCtx); err != nil {
			log.Error("stop embedded database", "error", err)
		}
	}
	if err := cluster.EnsureDatabase(ctx, embeddedDatabase); err != nil {
		stop()
		return nil, nil, err
	}
	pool, err := store.Open(ctx, cluster.ConnString(embeddedDatabase))
	if err != nil {
		stop()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); stop() }, nil
}

// migrateDatabase applies pending migrations, logs each one, and hands legacy rows
// to the single admin (SPEC ownership rule 9).
func migrateDatabase(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*store.Migrator, []store.AppliedMigration, error) {
	migs, err := store.EmbeddedMigrations()
	if err != nil {
		return nil, nil, err
	}
	m := store.NewMigrator(pool, migs)
	applied, err := m.Migrate(ctx)
	for _, a := range applied {
		log.Info("applied migration", "file", a.Name, "duration_ms", a.Duration.Milliseconds())
	}
	if err != nil {
		return nil, applied, err
	}
	// River's own tables, migrated by River's migrator (idempotent).
	if err := jobs.Migrate(ctx, pool); err != nil {
		return nil, applied, err
	}
	n, err := store.ReownLegacyRows(ctx, pool)
	if err != nil {
		return nil, applied, err
	}
	if n > 0 {
		log.Info("re-owned legacy rows to the single admin", "rows", n)
	}
	// Migration 0008 hands audit_log to its own role only when a superuser runs it;
	// say so when this connection could still switch the log's rules off.
	if why, err := audit.Enforcement(ctx, pool); err != nil {
		log.Warn("cannot tell whether the audit log's rules hold against this database role", "error", err)
	} else if why != "" {
		log.Warn("the audit log's append-only rules are not enforced against this connection", "reason", why)
	}
	return m, applied, nil
}
