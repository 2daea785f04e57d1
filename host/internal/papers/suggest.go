package papers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/sdk/paper"
)

// What Pulse and the recommender read from and write to the corpus: the texts of a
// user's library (their profile), which candidates may be suggested to them (the
// canonical exclusion), and their thumbs (recommendation_feedback).

// ProfilePaper is a paper that says what a user reads: in their library, or one
// they gave feedback on.
type ProfilePaper struct {
	ID       uuid.UUID
	Title    string
	Abstract string
	Authors  []Author
	Starred  bool
	// At is when it entered the library, or (for a candidate) the corpus.
	At time.Time
	// Published is its publication date; nil when unknown. Suggestable and
	// ProfileOf fill it.
	Published *time.Time
}

// LibraryProfile returns the newest limit papers of userID's library that are not
// trashed, newest first, with their titles, abstracts and authors.
func (st *Store) LibraryProfile(ctx context.Context, userID uuid.UUID, limit int) ([]ProfilePaper, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT p.id, p.title, coalesce(p.abstract, ''), p.authors, coalesce(s.starred, false), ul.added_at
		  FROM user_library ul
		  JOIN papers p ON p.id = ul.paper_id
		  LEFT JOIN paper_user_state s ON s.user_id = ul.user_id AND s.paper_id = ul.paper_id
		 WHERE ul.user_id = $1 AND `+stateExpr+` <> 'trash'
		 ORDER BY ul.added_at DESC, p.id
		 LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("papers: library profile: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProfilePaper, error) {
		var p ProfilePaper
		err := r.Scan(&p.ID, &p.Title, &p.Abstract, &p.Authors, &p.Starred, &p.At)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: library profile: %w", err)
	}
	return out, nil
}

// Suggestable returns the papers of ids that may be suggested to userID, each
// once: visible to them, not in their library, and not excluded by the canonical
// exclusion (ExclusionPredicate: trashed, done, or turned down in the last 60
// days).
func (st *Store) Suggestable(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]ProfilePaper, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT p.id, p.title, coalesce(p.abstract, ''), p.authors, false, p.discovered_at, p.publication_date
		  FROM papers p
		  LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id
		 WHERE p.id = ANY($2) AND `+visiblePredicate+` AND `+ExclusionPredicate+`
		   AND NOT EXISTS (SELECT 1 FROM user_library l WHERE l.user_id = $1 AND l.paper_id = p.id)`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: suggestable: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProfilePaper, error) {
		var p ProfilePaper
		err := r.Scan(&p.ID, &p.Title, &p.Abstract, &p.Authors, &p.Starred, &p.At, &p.Published)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: suggestable: %w", err)
	}
	return out, nil
}

// ProfileOf returns the texts of the papers of ids that userID may see (the papers
// they gave feedback on, say), with their publication dates, in no particular
// order.
func (st *Store) ProfileOf(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]ProfilePaper, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT p.id, p.title, coalesce(p.abstract, ''), p.authors, false, p.discovered_at, p.publication_date
		  FROM papers p WHERE p.id = ANY($2) AND `+visiblePredicate, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: profile: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProfilePaper, error) {
		var p ProfilePaper
		err := r.Scan(&p.ID, &p.Title, &p.Abstract, &p.Authors, &p.Starred, &p.At, &p.Published)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: profile: %w", err)
	}
	return out, nil
}

// Feedback is one thumb a user gave a paper.
type Feedback struct {
	PaperID  uuid.UUID
	Positive bool
	Source   string
	At       time.Time
}

// Feedback sources (recommendation_feedback.source).
const (
	FeedbackPulse   = "pulse_thumbs"
	FeedbackFeed    = "feed_thumbs"
	FeedbackDetail  = "paper_detail_thumbs"
	FeedbackDismiss = "dismiss_combined"
)

// FeedbackOf returns userID's newest limit thumbs, newest first.
func (st *Store) FeedbackOf(ctx context.Context, userID uuid.UUID, limit int) ([]Feedback, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT paper_id, signal = 'positive', source, created_at FROM recommendation_feedback
		 WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("papers: feedback: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Feedback, error) {
		var f Feedback
		err := r.Scan(&f.PaperID, &f.Positive, &f.Source, &f.At)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: feedback: %w", err)
	}
	return out, nil
}

// ThumbsOf returns userID's newest thumb on each of ids that has one (true: up),
// from any source: what a list of suggestions shows as already rated.
func (st *Store) ThumbsOf(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT DISTINCT ON (paper_id) paper_id, signal = 'positive' FROM recommendation_feedback
		 WHERE user_id = $1 AND paper_id = ANY($2) ORDER BY paper_id, created_at DESC, id DESC`, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: thumbs: %w", err)
	}
	defer rows.Close()
	out := map[uuid.UUID]bool{}
	for rows.Next() {
		var id uuid.UUID
		var up bool
		if err := rows.Scan(&id, &up); err != nil {
			return nil, fmt.Errorf("papers: thumbs: %w", err)
		}
		out[id] = up
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("papers: thumbs: %w", err)
	}
	return out, nil
}

// GiveFeedbackTx records userID's thumb on a paper from source, in the caller's
// transaction; a second thumb from the same source replaces the first.
func GiveFeedbackTx(ctx context.Context, q Querier, userID, paperID uuid.UUID, positive bool, source, reason string) error {
	signal := "negative"
	if positive {
		signal = "positive"
	}
	_, err := q.Exec(ctx, `
		INSERT INTO recommendation_feedback (user_id, paper_id, signal, source, reason)
		VALUES ($1, $2, $3, $4, nullif($5, ''))
		ON CONFLICT (user_id, paper_id, source) DO UPDATE
		   SET signal = EXCLUDED.signal, reason = EXCLUDED.reason, created_at = now()`,
		userID, paperID, signal, source, reason)
	if err != nil {
		return fmt.Errorf("papers: feedback: %w", err)
	}
	return nil
}

// RecentlyDiscovered returns the ids of up to limit shared papers that entered the
// corpus since since, newest first: what the recommender chooses from.
func (st *Store) RecentlyDiscovered(ctx context.Context, since time.Time, limit int) ([]uuid.UUID, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT id FROM papers p WHERE discovered_at >= $1 AND (p.visibility = 'public' OR p.discovered_by IS NULL)
		 ORDER BY discovered_at DESC, id LIMIT $2`, since, limit)
	if err != nil {
		return nil, fmt.Errorf("papers: recently discovered: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: recently discovered: %w", err)
	}
	return out, nil
}

// Engaged is a paper the user acted on in a window, and how.
type Engaged struct {
	ID       uuid.UUID `json:"id"`
	Title    string    `json:"title"`
	Abstract string    `json:"-"`
	// How lists what the user did: starred, reading, done, liked.
	How []string  `json:"how"`
	At  time.Time `json:"at"`
}

// EngagedSince returns the papers userID acted on since since, newest first: starred,
// moved to reading or done, or given a thumbs-up. Suggestions they only saw are
// never among them (what the Weekly Summary reflects on, SPEC Pulse 3).
func (st *Store) EngagedSince(ctx context.Context, userID uuid.UUID, since time.Time, limit int) ([]Engaged, error) {
	rows, err := st.pool.Query(ctx, `
		WITH engaged AS (
		    SELECT paper_id, 'starred' AS how, updated_at AS at FROM paper_user_state
		     WHERE user_id = $1 AND starred AND state <> 'trash' AND updated_at >= $2
		    UNION ALL
		    SELECT paper_id, state, state_changed_at FROM paper_user_state
		     WHERE user_id = $1 AND state IN ('reading', 'done') AND state_changed_at >= $2
		    UNION ALL
		    SELECT paper_id, 'liked', created_at FROM recommendation_feedback
		     WHERE user_id = $1 AND signal = 'positive' AND created_at >= $2)
		SELECT p.id, p.title, coalesce(p.abstract, ''), array_agg(DISTINCT e.how ORDER BY e.how), max(e.at)
		  FROM engaged e JOIN papers p ON p.id = e.paper_id
		 WHERE `+visiblePredicate+`
		 GROUP BY p.id
		 ORDER BY max(e.at) DESC, p.id
		 LIMIT $3`, userID, since, limit)
	if err != nil {
		return nil, fmt.Errorf("papers: engaged: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Engaged, error) {
		var e Engaged
		err := r.Scan(&e.ID, &e.Title, &e.Abstract, &e.How, &e.At)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: engaged: %w", err)
	}
	return out, nil
}

// StarredIDs returns the identifiers of the newest limit starred papers of the
// user's library that have a DOI or an arXiv id (what a source's citation graph
// is asked by), newest star first.
func (st *Store) StarredIDs(ctx context.Context, userID uuid.UUID, limit int) ([]paper.IDs, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT coalesce(p.doi, ''), coalesce(p.arxiv_id, ''), coalesce(p.openalex_id, ''), coalesce(p.semantic_scholar_id, '')
		  FROM paper_user_state s
		  JOIN user_library ul ON ul.user_id = s.user_id AND ul.paper_id = s.paper_id
		  JOIN papers p ON p.id = s.paper_id
		 WHERE s.user_id = $1 AND s.starred AND s.state <> 'trash' AND (p.doi IS NOT NULL OR p.arxiv_id IS NOT NULL)
		 ORDER BY s.updated_at DESC
		 LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("papers: starred: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (paper.IDs, error) {
		var ids paper.IDs
		err := r.Scan(&ids.DOI, &ids.ArXivID, &ids.OpenAlexID, &ids.SemanticScholarID)
		return ids, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: starred: %w", err)
	}
	return out, nil
}
