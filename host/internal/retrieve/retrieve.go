// Package retrieve finds passages (paper chunks) for a question, limited to papers
// the caller may see: lexical rank over PostgreSQL's full-text index and vector
// similarity from the vector store, fused by reciprocal rank fusion.
package retrieve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpapi/respond"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// Passage is one matching chunk.
type Passage struct {
	ChunkID   uuid.UUID `json:"chunk_id"`
	PaperID   uuid.UUID `json:"paper_id"`
	Title     string    `json:"title"`
	Section   string    `json:"section,omitempty"`
	PageStart int       `json:"page_start"`
	PageEnd   int       `json:"page_end"`
	Score     float64   `json:"score"`
	Snippet   string    `json:"snippet"`
}

// lexicalCandidates caps the matching passages Lexical ranks (see there); the
// figures are in docs/benchmarks.md.
const lexicalCandidates = 1000

// Lexical returns the passages best matching q by full-text rank among papers
// userID may see, restricted to paperIDs when given (which never grants access to
// more).
func Lexical(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, q string, paperIDs []uuid.UUID, limit int) ([]Passage, error) {
	var only any
	if len(paperIDs) > 0 {
		only = paperIDs
	}
	// Ranking reads every matching passage's tsvector: about 2 ms for a selective
	// query, but most of a second at 100k passages when the words are common. So
	// the passages that match and that the caller may see are capped at
	// lexicalCandidates (in index order) before they are ranked; for a common-word
	// question the vector ranking, fused in Retriever.Search, carries the order.
	rows, err := pool.Query(ctx, `
		WITH cand AS MATERIALIZED (
		    SELECT c.id
		      FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		     WHERE c.search_vector @@ websearch_to_tsquery('english', $2) AND `+papers.VisibleSQL+`
		       AND ($3::uuid[] IS NULL OR c.paper_id = ANY($3))
		     LIMIT $5)
		SELECT c.id, c.paper_id, p.title, coalesce(c.section, ''), c.page_start, c.page_end,
		       ts_rank_cd(c.search_vector, q) AS score,
		       ts_headline('english', c.content, q, 'MaxFragments=1, MaxWords=35, MinWords=12, StartSel=«, StopSel=»')
		  FROM cand JOIN paper_chunks c ON c.id = cand.id
		  JOIN papers p ON p.id = c.paper_id,
		       websearch_to_tsquery('english', $2) q
		 ORDER BY score DESC, c.paper_id, c.chunk_index
		 LIMIT $4`, userID, q, only, limit, lexicalCandidates)
	if err != nil {
		return nil, fmt.Errorf("retrieve: search: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Passage, error) {
		var p Passage
		err := r.Scan(&p.ChunkID, &p.PaperID, &p.Title, &p.Section, &p.PageStart, &p.PageEnd, &p.Score, &p.Snippet)
		p.Snippet = strings.Join(strings.Fields(p.Snippet), " ")
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve: search: %w", err)
	}
	if out == nil {
		out = []Passage{}
	}
	return out, nil
}

// API serves GET /api/search/chunks.
type API struct{ r *Retriever }

// NewAPI returns the passage search API.
func NewAPI(r *Retriever) *API { return &API{r: r} }

// SearchChunks answers GET /api/search/chunks?q=&paper_ids=a,b&limit=1..100 (default
// 20): passages with their paper, section, pages and a highlighted snippet.
func (a *API) SearchChunks(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	q := strings.TrimSpace(qs.Get("q"))
	var fields []respond.FieldError
	if q == "" || len(q) > 1000 {
		fields = append(fields, respond.FieldError{Field: "q", Message: "must be 1 to 1000 characters"})
	}
	limit := 20
	if s := qs.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			fields = append(fields, respond.FieldError{Field: "limit", Message: "must be from 1 to 100"})
		}
		limit = n
	}
	var ids []uuid.UUID
	for _, s := range strings.Split(qs.Get("paper_ids"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := uuid.Parse(s)
		if err != nil {
			fields = append(fields, respond.FieldError{Field: "paper_ids", Message: "must be paper ids separated by commas"})
			break
		}
		ids = append(ids, id)
	}
	if len(fields) > 0 {
		respond.Err(w, r, respond.Invalid("The search is not valid.", fields...))
		return
	}
	out, err := a.r.Search(r.Context(), auth.CallerFrom(r.Context()).UserID, q, ids, limit)
	if err != nil {
		respond.Err(w, r, respond.Internal(err))
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"items": out})
}
