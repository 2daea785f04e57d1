package refsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// link is one remote item the sync knows, and the paper it is.
type link struct {
	paperID uuid.UUID
	version int64
	brought bool
}

// linkTx returns the user's link of a library's item; ok is false when there is none.
func linkTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, libraryID, key string) (link, bool, error) {
	var l link
	err := tx.QueryRow(ctx, `
		SELECT paper_id, item_version, brought FROM refmanager_links
		 WHERE user_id = $1 AND library_id = $2 AND item_key = $3`, userID, libraryID, key).
		Scan(&l.paperID, &l.version, &l.brought)
	if errors.Is(err, pgx.ErrNoRows) {
		return link{}, false, nil
	}
	if err != nil {
		return link{}, false, fmt.Errorf("refsync: read a link: %w", err)
	}
	return l, true, nil
}

// putLinkTx records that the library's item is the paper, at version.
func putLinkTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, libraryID, key string, l link) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO refmanager_links (user_id, library_id, item_key, paper_id, item_version, origin, brought)
		VALUES ($1, $2, $3, $4, $5, 'pull', $6)
		ON CONFLICT (user_id, library_id, item_key) DO UPDATE
		   SET paper_id = EXCLUDED.paper_id, item_version = EXCLUDED.item_version, updated_at = now()`,
		userID, libraryID, key, l.paperID, l.version, l.brought)
	if err != nil {
		return fmt.Errorf("refsync: record a link: %w", err)
	}
	return nil
}

// dropLinkTx forgets the library's item and reports whether another item of the
// user's still names the same paper.
func dropLinkTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, libraryID, key string, paperID uuid.UUID) (bool, error) {
	if _, err := tx.Exec(ctx, `DELETE FROM refmanager_links WHERE user_id = $1 AND library_id = $2 AND item_key = $3`,
		userID, libraryID, key); err != nil {
		return false, fmt.Errorf("refsync: drop a link: %w", err)
	}
	var other bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM refmanager_links WHERE user_id = $1 AND paper_id = $2)`,
		userID, paperID).Scan(&other)
	if err != nil {
		return false, fmt.Errorf("refsync: drop a link: %w", err)
	}
	return other, nil
}

// versionOf is where the user's sync of a library stands (0: never synced).
func versionOf(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, libraryID string) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, `SELECT version FROM refmanager_sync_state WHERE user_id = $1 AND library_id = $2`,
		userID, libraryID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("refsync: read the sync's version: %w", err)
	}
	return v, nil
}

// advanceTx moves the library's version forward, in the transaction that applied
// the changes up to it.
func advanceTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, libraryID string, version int64) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO refmanager_sync_state (user_id, library_id, version) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, library_id) DO UPDATE SET version = greatest(refmanager_sync_state.version, EXCLUDED.version)`,
		userID, libraryID, version)
	if err != nil {
		return fmt.Errorf("refsync: advance the sync's version: %w", err)
	}
	return nil
}

// Status is the last run of a user's sync of one library.
type Status struct {
	LibraryID string     `json:"library_id"`
	Version   int64      `json:"version"`
	LastRunAt *time.Time `json:"last_run_at"`
	LastOKAt  *time.Time `json:"last_ok_at"`
	Added     int        `json:"added"`
	Updated   int        `json:"updated"`
	Removed   int        `json:"removed"`
	Notes     int        `json:"notes"`
	// Capped is true when the run stopped at its limit of new papers; the next
	// run goes on from there.
	Capped bool `json:"capped"`
	// Error says why the last run failed, in words; empty when it did not.
	Error string `json:"error,omitempty"`
}

// recordRun writes the outcome of a run: its counts, or why it failed.
func recordRun(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, libraryID string, at time.Time, r Report, runErr string) error {
	_, err := pool.Exec(ctx, `
		INSERT INTO refmanager_sync_state (user_id, library_id, last_run_at, last_ok_at, added, updated, removed, notes, capped, last_error)
		VALUES ($1, $2, $3::timestamptz, CASE WHEN $9::text IS NULL THEN $3::timestamptz END, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (user_id, library_id) DO UPDATE
		   SET last_run_at = EXCLUDED.last_run_at,
		       last_ok_at = coalesce(EXCLUDED.last_ok_at, refmanager_sync_state.last_ok_at),
		       added = EXCLUDED.added, updated = EXCLUDED.updated, removed = EXCLUDED.removed,
		       notes = EXCLUDED.notes, capped = EXCLUDED.capped, last_error = EXCLUDED.last_error`,
		userID, libraryID, at, r.Added, r.Updated, r.Removed, r.Notes, r.Capped, nullable(truncate(runErr, 2000)))
	if err != nil {
		return fmt.Errorf("refsync: record the run: %w", err)
	}
	return nil
}

// statuses lists the user's syncs, one per library.
func statuses(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID) ([]Status, error) {
	rows, err := pool.Query(ctx, `
		SELECT library_id, version, last_run_at, last_ok_at, added, updated, removed, notes, capped, coalesce(last_error, '')
		  FROM refmanager_sync_state WHERE user_id = $1 ORDER BY library_id`, userID)
	if err != nil {
		return nil, fmt.Errorf("refsync: read the sync's status: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Status, error) {
		var s Status
		err := r.Scan(&s.LibraryID, &s.Version, &s.LastRunAt, &s.LastOKAt, &s.Added, &s.Updated, &s.Removed, &s.Notes, &s.Capped, &s.Error)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("refsync: read the sync's status: %w", err)
	}
	return out, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// keysOf maps each of the papers to a key of an item of the library that is it
// (pushed or synced), where there is one.
func keysOf(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, libraryID string, paperIDs []uuid.UUID) (map[uuid.UUID]string, error) {
	rows, err := pool.Query(ctx, `
		SELECT DISTINCT ON (paper_id) paper_id, item_key FROM refmanager_links
		 WHERE user_id = $1 AND library_id = $2 AND paper_id = ANY($3)
		 ORDER BY paper_id, origin = 'push' DESC, updated_at DESC`, userID, libraryID, paperIDs)
	if err != nil {
		return nil, fmt.Errorf("refsync: read pushed keys: %w", err)
	}
	out := map[uuid.UUID]string{}
	var id uuid.UUID
	var key string
	_, err = pgx.ForEachRow(rows, []any{&id, &key}, func() error {
		out[id] = key
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("refsync: read pushed keys: %w", err)
	}
	return out, nil
}

// putPushedTx remembers that the library's item is the paper Lectern pushed; an
// item the sync already knows keeps its link as it is.
func putPushedTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, libraryID, key string, paperID uuid.UUID) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO refmanager_links (user_id, library_id, item_key, paper_id, origin)
		VALUES ($1, $2, $3, $4, 'push')
		ON CONFLICT (user_id, library_id, item_key) DO NOTHING`, userID, libraryID, key, paperID)
	if err != nil {
		return fmt.Errorf("refsync: remember a pushed item: %w", err)
	}
	return nil
}
