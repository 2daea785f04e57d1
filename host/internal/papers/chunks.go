package papers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// VisibleChunk returns the paper of the passage chunkID when it is a passage of a
// paper userID may see. A passage that does not exist, or whose paper is another
// user's private paper, is ErrNotFound: the answer does not tell which. The
// visibility rule is spelled out here (it is the package's one rule, as in Get) so
// this file stands on its own while the rest of the package is reworked.
func (st *Store) VisibleChunk(ctx context.Context, userID, chunkID uuid.UUID) (uuid.UUID, error) {
	var paperID uuid.UUID
	err := st.pool.QueryRow(ctx, `
		SELECT pc.paper_id FROM paper_chunks pc JOIN papers p ON p.id = pc.paper_id
		 WHERE pc.id = $2 AND (p.visibility = 'public' OR p.discovered_by IS NULL
		    OR EXISTS (SELECT 1 FROM user_library ul WHERE ul.user_id = $1 AND ul.paper_id = p.id))`, userID, chunkID).Scan(&paperID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: visible chunk: %w", err)
	}
	return paperID, nil
}
