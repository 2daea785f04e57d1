package learning

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MovePaperTx points every user's cards on paper from at paper to, in the
// caller's transaction: the paper.enrich job found the two rows to be one work
// and is merging from into to. A card's link to a passage of from is cleared when
// from's passages go with it (the card keeps its page); its schedule and reviews
// stay as they are.
func MovePaperTx(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) error {
	if _, err := tx.Exec(ctx, `UPDATE cards SET paper_id = $2, updated_at = now() WHERE paper_id = $1`, from, to); err != nil {
		return fmt.Errorf("learning: move cards to the merged paper: %w", err)
	}
	return nil
}
