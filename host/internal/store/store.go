// Package store owns Lectern's PostgreSQL connection pool, the migration runner and
// the queries shared by every area. Ownership is enforced in SQL (WHERE user_id = $1),
// never by filtering rows in Go.
package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/migrations"
)

// DefaultMaxConns is the pool size when DATABASE_URL does not set pool_max_conns.
const DefaultMaxConns = 30

// Open connects a pool to databaseURL and checks that the server answers.
func Open(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// The URL may carry a password: never echo it.
		return nil, fmt.Errorf("store: DATABASE_URL is not a valid PostgreSQL connection string")
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		// The job queue's workers, its fetcher and listener, the progress listener
		// and the HTTP handlers share the pool; pgx's default (4 on two cores) is
		// too small for them.
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "lectern"
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.AfterConnect = AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to database: %w", err)
	}
	return pool, nil
}

// AfterConnect prepares each new connection of a pool: uuid.UUID values travel
// in PostgreSQL's binary form (registerUUID). Without it pgx sent every uuid
// parameter as text through its database/sql Value method and read every uuid
// back as text through Scan: 4% of the host's CPU under the mixed read benchmark
// for parameters alone, where every query carries the caller's id and many
// carry arrays of ids.
func AfterConnect(_ context.Context, conn *pgx.Conn) error {
	registerUUID(conn.TypeMap())
	return nil
}

// EmbeddedMigrations returns the migrations compiled into this binary.
func EmbeddedMigrations() ([]Migration, error) {
	return LoadMigrations(migrations.FS)
}

// ReownLegacyRows hands legacy NULL-owned per-user rows to the single admin, when
// exactly one live admin exists (SPEC ownership rule 9; see migration 0002). It
// returns how many rows changed owner.
func ReownLegacyRows(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	if err := pool.QueryRow(ctx, `SELECT reown_legacy_rows()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: reown legacy rows: %w", err)
	}
	return n, nil
}
