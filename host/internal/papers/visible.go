package papers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Visibility is asked here, never written into other packages' SQL: a paper is
// visible to a user when it is public, came from an instance-level feed, or is in
// their library (visiblePredicate in views.go).

// Visible reports whether userID may see the paper. A missing paper is not visible.
func (st *Store) Visible(ctx context.Context, userID, paperID uuid.UUID) (bool, error) {
	var ok bool
	err := st.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM papers p WHERE p.id = $2 AND `+visiblePredicate+`)`,
		userID, paperID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("papers: visible: %w", err)
	}
	return ok, nil
}

// VisibleIDs returns the papers of ids that userID may see, each once; the others
// are left out.
func (st *Store) VisibleIDs(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]uuid.UUID, error) {
	rows, err := st.pool.Query(ctx, `SELECT p.id FROM papers p WHERE p.id = ANY($2) AND `+visiblePredicate, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: visible ids: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: visible ids: %w", err)
	}
	return out, nil
}

// LibraryIDs returns the ids of the papers in userID's library.
func (st *Store) LibraryIDs(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error) {
	rows, err := st.pool.Query(ctx, `SELECT paper_id FROM user_library WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("papers: library ids: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: library ids: %w", err)
	}
	return out, nil
}

// VisibleTitle returns the title and abstract of a paper userID may see;
// ErrNotFound when they may not see it or it does not exist.
func (st *Store) VisibleTitle(ctx context.Context, userID, paperID uuid.UUID) (title, abstract string, err error) {
	err = st.pool.QueryRow(ctx, `SELECT p.title, coalesce(p.abstract, '') FROM papers p WHERE p.id = $2 AND `+visiblePredicate,
		userID, paperID).Scan(&title, &abstract)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", ErrNotFound
	}
	if err != nil {
		return "", "", fmt.Errorf("papers: title: %w", err)
	}
	return title, abstract, nil
}
