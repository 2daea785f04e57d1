package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SchemaStatusTx returns the highest applied migration version as q sees it (0 when none is). The backup reads it inside the snapshot it dumps, so the
// manifest's schema version is the dump's.
func SchemaStatusTx(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (int, error) {
	var version int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("store: read the schema version: %w", err)
	}
	return version, nil
}
