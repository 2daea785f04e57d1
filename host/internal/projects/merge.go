package projects

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MovePaperTx moves every project's link to paper from onto paper to, in the
// caller's transaction: the paper.enrich job found the two rows to be one work and
// is merging from into to. A project that links both keeps one link, added when
// the earlier of the two was.
func MovePaperTx(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) error {
	steps := []string{
		`UPDATE project_papers t SET added_at = f.added_at FROM project_papers f
		  WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.project_id = f.project_id AND f.added_at < t.added_at`,
		`DELETE FROM project_papers f USING project_papers t
		  WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.project_id = f.project_id`,
		`UPDATE project_papers SET paper_id = $2 WHERE paper_id = $1`,
	}
	for _, sql := range steps {
		if _, err := tx.Exec(ctx, sql, from, to); err != nil {
			return fmt.Errorf("projects: move links to the merged paper: %w", err)
		}
	}
	return nil
}
