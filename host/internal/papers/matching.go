package papers

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Match is one interest a new user named, as a filter on the shared corpus: words
// to find in a title or abstract, categories (arXiv's, say) to find in a paper's
// metadata, or an author's name. The parts that are set are alternatives: a paper
// matches when any of them does.
type Match struct {
	// Query is found with PostgreSQL's web-search syntax: every word must occur.
	Query string
	// Categories match when the paper lists one of them.
	Categories []string
	// Author matches an author's name, without regard to case.
	Author string
}

// Matching returns the ids of up to limit papers of the shared corpus that match m
// and may be suggested to userID, newest first (by publication date, then by when
// they entered the corpus): visible to them, not in their library, never rated by
// them, not excluded by the canonical exclusion (ExclusionPredicate), and not
// among skip. It is what Pulse's cold start offers a new user to rate.
func (st *Store) Matching(ctx context.Context, userID uuid.UUID, m Match, skip []uuid.UUID, limit int) ([]uuid.UUID, error) {
	if skip == nil {
		skip = []uuid.UUID{} // NULL would keep every paper out
	}
	var alts []string
	args := []any{userID, skip, limit}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q := strings.TrimSpace(m.Query); q != "" {
		alts = append(alts, `p.search_vector @@ websearch_to_tsquery('english', `+arg(q)+`)`)
	}
	if len(m.Categories) > 0 {
		alts = append(alts, `p.metadata->'categories' ?| `+arg(m.Categories)+`::text[]`)
	}
	if a := strings.TrimSpace(m.Author); a != "" {
		alts = append(alts, `EXISTS (SELECT 1 FROM jsonb_array_elements(p.authors) au WHERE lower(au->>'name') = lower(`+arg(a)+`))`)
	}
	if len(alts) == 0 {
		return []uuid.UUID{}, nil
	}
	rows, err := st.pool.Query(ctx, `
		SELECT p.id FROM papers p
		  LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id
		 WHERE (`+strings.Join(alts, " OR ")+`) AND `+visiblePredicate+` AND `+ExclusionPredicate+`
		   AND p.id <> ALL($2::uuid[])
		   AND NOT EXISTS (SELECT 1 FROM user_library l WHERE l.user_id = $1 AND l.paper_id = p.id)
		   AND NOT EXISTS (SELECT 1 FROM recommendation_feedback f WHERE f.user_id = $1 AND f.paper_id = p.id)
		 ORDER BY p.publication_date DESC NULLS LAST, p.discovered_at DESC, p.id
		 LIMIT $3`, args...)
	if err != nil {
		return nil, fmt.Errorf("papers: matching: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: matching: %w", err)
	}
	return out, nil
}
