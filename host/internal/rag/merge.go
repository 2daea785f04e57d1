package rag

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MovePaperTx moves every user's extractions and entity links of paper from onto
// paper to, in the caller's transaction: the paper.enrich job found the two rows
// to be one work and is merging from into to.
//
// Where a user has an extraction of both papers with one template, the one with
// more items stays (the survivor's on a tie). The moved items' quotes were checked
// against from's text, which goes with from: they become unverified, without
// offsets, until the paper is extracted again (entity links likewise). Summaries are a cache of one text
// and are not moved; from's go with it.
func MovePaperTx(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) error {
	steps := []struct{ what, sql string }{
		{"extractions", `
			DELETE FROM paper_extractions f USING paper_extractions t
			 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.template = f.template
			   AND (SELECT count(*) FROM paper_extraction_items i WHERE i.extraction_id = t.id)
			    >= (SELECT count(*) FROM paper_extraction_items i WHERE i.extraction_id = f.id)`},
		{"extractions", `
			DELETE FROM paper_extractions t USING paper_extractions f
			 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.template = f.template`},
		{"extraction items", `
			UPDATE paper_extraction_items i SET verification_status = 'unverified', similarity = NULL,
			       char_start = NULL, char_end = NULL, page_number = NULL
			  FROM paper_extractions e WHERE e.id = i.extraction_id AND e.paper_id = $1 AND e.paper_id <> $2`},
		{"extractions", `UPDATE paper_extractions SET paper_id = $2, updated_at = now() WHERE paper_id = $1`},
		{"entity links", `
			DELETE FROM paper_entities f USING paper_entities t
			 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.entity_id = f.entity_id
			   AND t.role = f.role`},
		{"entity links", `UPDATE paper_entities SET paper_id = $2, verification_status = 'unverified' WHERE paper_id = $1`},
	}
	for _, st := range steps {
		if _, err := tx.Exec(ctx, st.sql, from, to); err != nil {
			return fmt.Errorf("rag: move %s to the merged paper: %w", st.what, err)
		}
	}
	return nil
}
