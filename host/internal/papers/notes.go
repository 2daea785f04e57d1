package papers

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ExternalNote is a note or PDF annotation a user keeps in their reference
// manager, as the sync brings it into paper_notes (source refmanager).
type ExternalNote struct {
	// Key is the manager's key of the note or annotation.
	Key     string
	Version int64
	// Body is the note's text, or the annotation's comment.
	Body string
	// Highlight is the annotation's highlighted text; empty for a note.
	Highlight string
	// Page is the annotation's page when its label is a number.
	Page *int
}

// SyncExternalNotesTx makes the user's reference-manager notes on the paper
// exactly notes: each is written under its key (a second sync updates it, never
// adds a copy, by the per-user unique index on the key) and the paper's other
// reference-manager notes go. The user's own notes are never touched, and a note
// that is one of them pushed to the manager is not kept a second time. It
// returns how many rows it wrote or removed.
func SyncExternalNotesTx(ctx context.Context, q Querier, userID, paperID uuid.UUID, notes []ExternalNote) (int, error) {
	changed := 0
	keys := make([]string, 0, len(notes))
	for _, n := range notes {
		keys = append(keys, n.Key)
		var own bool
		err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paper_notes WHERE user_id = $1 AND source = 'user' AND external_key = $2)`,
			userID, n.Key).Scan(&own)
		if err != nil {
			return 0, fmt.Errorf("papers: read a pushed note: %w", err)
		}
		if own {
			continue // the user's own note, pushed from Lectern: not a copy to keep
		}
		var highlight any
		if n.Highlight != "" {
			highlight = truncate(n.Highlight, 20000)
		}
		tag, err := q.Exec(ctx, `
			INSERT INTO paper_notes (user_id, paper_id, source, body, highlight_text, page_number, external_key, external_version)
			VALUES ($1, $2, 'refmanager', $3, $4, $5, $6, $7)
			ON CONFLICT (user_id, paper_id, source, external_key) WHERE external_key IS NOT NULL DO UPDATE
			   SET body = EXCLUDED.body, highlight_text = EXCLUDED.highlight_text, page_number = EXCLUDED.page_number,
			       external_version = EXCLUDED.external_version, updated_at = now()
			 WHERE paper_notes.external_version IS DISTINCT FROM EXCLUDED.external_version
			    OR paper_notes.body IS DISTINCT FROM EXCLUDED.body`,
			userID, paperID, truncate(n.Body, 100000), highlight, n.Page, n.Key, n.Version)
		if err != nil {
			return 0, fmt.Errorf("papers: write a reference-manager note: %w", err)
		}
		changed += int(tag.RowsAffected())
	}
	tag, err := q.Exec(ctx, `
		DELETE FROM paper_notes
		 WHERE user_id = $1 AND paper_id = $2 AND source = 'refmanager' AND NOT (external_key = ANY($3))`,
		userID, paperID, keys)
	if err != nil {
		return 0, fmt.Errorf("papers: remove reference-manager notes: %w", err)
	}
	return changed + int(tag.RowsAffected()), nil
}

// DeleteExternalNoteKeysTx removes the user's reference-manager notes with these
// keys (notes deleted in the manager), on any paper.
func DeleteExternalNoteKeysTx(ctx context.Context, q Querier, userID uuid.UUID, keys []string) (int, error) {
	tag, err := q.Exec(ctx, `
		DELETE FROM paper_notes WHERE user_id = $1 AND source = 'refmanager' AND external_key = ANY($2)`, userID, keys)
	if err != nil {
		return 0, fmt.Errorf("papers: remove reference-manager notes: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// RemoveFromLibraryTx takes a paper out of the user's library in the caller's
// transaction; their overlay stays. Removing a paper not in the library is not an
// error.
func RemoveFromLibraryTx(ctx context.Context, q Querier, userID, paperID uuid.UUID) error {
	if _, err := q.Exec(ctx, `DELETE FROM user_library WHERE user_id = $1 AND paper_id = $2`, userID, paperID); err != nil {
		return fmt.Errorf("papers: remove from library: %w", err)
	}
	return nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// OwnNote is a note the user wrote in Lectern.
type OwnNote struct {
	ID      uuid.UUID
	PaperID uuid.UUID
	Body    string
}

// UnpushedNotes returns the user's own notes on the papers that have not gone to
// their reference manager yet (no external key), oldest first.
func (st *Store) UnpushedNotes(ctx context.Context, userID uuid.UUID, paperIDs []uuid.UUID) ([]OwnNote, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT id, paper_id, body FROM paper_notes
		 WHERE user_id = $1 AND paper_id = ANY($2) AND source = 'user' AND external_key IS NULL AND btrim(body) <> ''
		 ORDER BY created_at, id`, userID, paperIDs)
	if err != nil {
		return nil, fmt.Errorf("papers: notes to push: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[OwnNote])
	if err != nil {
		return nil, fmt.Errorf("papers: notes to push: %w", err)
	}
	return out, nil
}

// MarkNotePushed records the key the reference manager gave the user's own note,
// so it is pushed once and never synced back as a copy.
func (st *Store) MarkNotePushed(ctx context.Context, userID, noteID uuid.UUID, key string, version int64) error {
	_, err := st.pool.Exec(ctx, `
		UPDATE paper_notes SET external_key = $3, external_version = $4
		 WHERE id = $2 AND user_id = $1 AND source = 'user'`, userID, noteID, key, version)
	if err != nil {
		return fmt.Errorf("papers: mark a note pushed: %w", err)
	}
	return nil
}
