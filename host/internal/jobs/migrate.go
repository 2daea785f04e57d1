package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverMigrationLockKey serializes River migration runs of hosts starting at once
// (pg_advisory_lock key; "lectern" + 1, next to the store's own lock).
const riverMigrationLockKey int64 = 0x6c65637465726f

// Migrate applies River's own migrations (its queue tables) to the database,
// after Lectern's numbered migrations. It is idempotent: a database that is up to
// date is left alone.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("jobs: migrate river: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("jobs: migrate river: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", riverMigrationLockKey); err != nil {
		return fmt.Errorf("jobs: migrate river: take lock: %w", err)
	}
	defer func() {
		// The lock must be released even when ctx was cancelled.
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(unlockCtx, "SELECT pg_advisory_unlock($1)", riverMigrationLockKey)
	}()
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("jobs: migrate river: %w", err)
	}
	return nil
}
