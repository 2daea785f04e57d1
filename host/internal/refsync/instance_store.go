package refsync

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// instanceLinkTx returns the instance's link of a group library's item; ok is
// false when there is none.
func instanceLinkTx(ctx context.Context, tx pgx.Tx, libraryID, key string) (link, bool, error) {
	var l link
	err := tx.QueryRow(ctx, `
		SELECT paper_id, item_version FROM refmanager_instance_links
		 WHERE library_id = $1 AND item_key = $2`, libraryID, key).Scan(&l.paperID, &l.version)
	if errors.Is(err, pgx.ErrNoRows) {
		return link{}, false, nil
	}
	if err != nil {
		return link{}, false, fmt.Errorf("refsync: read an instance link: %w", err)
	}
	return l, true, nil
}

func putInstanceLinkTx(ctx context.Context, tx pgx.Tx, libraryID, key string, paperID uuid.UUID, version int64) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO refmanager_instance_links (library_id, item_key, paper_id, item_version)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (library_id, item_key) DO UPDATE
		   SET paper_id = EXCLUDED.paper_id, item_version = EXCLUDED.item_version, updated_at = now()`,
		libraryID, key, paperID, version)
	if err != nil {
		return fmt.Errorf("refsync: record an instance link: %w", err)
	}
	return nil
}

func dropInstanceLinkTx(ctx context.Context, tx pgx.Tx, libraryID, key string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM refmanager_instance_links WHERE library_id = $1 AND item_key = $2`,
		libraryID, key); err != nil {
		return fmt.Errorf("refsync: drop an instance link: %w", err)
	}
	return nil
}

func instanceVersionOf(ctx context.Context, pool *pgxpool.Pool, libraryID string) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, `SELECT version FROM refmanager_instance_state WHERE library_id = $1`, libraryID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("refsync: read the instance sync's version: %w", err)
	}
	return v, nil
}

func advanceInstanceTx(ctx context.Context, tx pgx.Tx, libraryID string, version int64) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO refmanager_instance_state (library_id, version) VALUES ($1, $2)
		ON CONFLICT (library_id) DO UPDATE SET version = greatest(refmanager_instance_state.version, EXCLUDED.version)`,
		libraryID, version)
	if err != nil {
		return fmt.Errorf("refsync: advance the instance sync's version: %w", err)
	}
	return nil
}

func recordInstanceRun(ctx context.Context, pool *pgxpool.Pool, libraryID string, at time.Time, r Report, runErr string) error {
	_, err := pool.Exec(ctx, `
		INSERT INTO refmanager_instance_state (library_id, last_run_at, last_ok_at, added, updated, removed, capped, last_error)
		VALUES ($1, $2::timestamptz, CASE WHEN $7::text IS NULL THEN $2::timestamptz END, $3, $4, $5, $6, $7)
		ON CONFLICT (library_id) DO UPDATE
		   SET last_run_at = EXCLUDED.last_run_at,
		       last_ok_at = coalesce(EXCLUDED.last_ok_at, refmanager_instance_state.last_ok_at),
		       added = EXCLUDED.added, updated = EXCLUDED.updated, removed = EXCLUDED.removed,
		       capped = EXCLUDED.capped, last_error = EXCLUDED.last_error`,
		libraryID, at, r.Added, r.Updated, r.Removed, r.Capped, nullable(truncate(runErr, 2000)))
	if err != nil {
		return fmt.Errorf("refsync: record the instance run: %w", err)
	}
	return nil
}

// instanceStatuses lists the instance's group-library syncs.
func instanceStatuses(ctx context.Context, pool *pgxpool.Pool) ([]Status, error) {
	rows, err := pool.Query(ctx, `
		SELECT library_id, version, last_run_at, last_ok_at, added, updated, removed, capped, coalesce(last_error, '')
		  FROM refmanager_instance_state ORDER BY library_id`)
	if err != nil {
		return nil, fmt.Errorf("refsync: read the instance sync's status: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Status, error) {
		var s Status
		err := r.Scan(&s.LibraryID, &s.Version, &s.LastRunAt, &s.LastOKAt, &s.Added, &s.Updated, &s.Removed, &s.Capped, &s.Error)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("refsync: read the instance sync's status: %w", err)
	}
	return out, nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
