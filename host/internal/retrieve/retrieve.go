// Package retrieve finds passages (paper chunks) for a question, limited to papers
// the caller may see: BM25 over every full-text match (an in-process index kept in
// step with PostgreSQL, lexicon.go) and vector similarity from the vector store,
// fused by reciprocal rank fusion.
package retrieve

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

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
	// Snippet is plain text; Highlights are the matched words in it, as [start,
	// end) byte offsets in order (empty for a passage found only by its vector).
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights"`

	// SearchQuestion also returns each passage in full: the paper's authors, the
	// passage's text, where it starts in the paper's text and where its pages start.
	Authors    []string `json:"-"`
	Text       string   `json:"-"`
	CharStart  int      `json:"-"`
	PageStarts []int    `json:"-"`
}

// passage is a retrieve.Passage from the papers area's.
func passage(p papers.Passage) Passage {
	highlights := p.Highlights
	if highlights == nil {
		highlights = [][2]int{}
	}
	return Passage{ChunkID: p.ChunkID, PaperID: p.PaperID, Title: p.Title, Section: p.Section,
		PageStart: p.PageStart, PageEnd: p.PageEnd, Score: p.Score, Snippet: p.Snippet, Highlights: highlights,
		Authors: p.Authors, Text: p.Text, CharStart: p.CharStart, PageStarts: p.PageStarts}
}

// lexicalCandidates caps the matching passages Lexical ranks (see there); the
// figures are in docs/benchmarks.md. The Retriever ranks with its index instead and
// uses Lexical only for queries the index cannot evaluate.
const lexicalCandidates = 1000

// Lexical returns the passages best matching q by full-text rank among papers
// userID may see, restricted to paperIDs when given (which never grants access to
// more).
func Lexical(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, q string, paperIDs []uuid.UUID, limit int) ([]Passage, error) {
	// Ranking reads every matching passage's tsvector: about 2 ms for a selective
	// query, but most of a second at 100k passages when the words are common. So
	// the passages that match and that the caller may see are capped at
	// lexicalCandidates (in index order) before they are ranked; for a common-word
	// question the vector ranking, fused in Retriever.Search, carries the order.
	found, err := papers.New(pool).SearchPassages(ctx, userID, papers.SearchParams{
		Query: q, PaperIDs: paperIDs, Limit: limit, Candidates: lexicalCandidates})
	if err != nil {
		return nil, fmt.Errorf("retrieve: search: %w", err)
	}
	out := make([]Passage, len(found))
	for i, p := range found {
		out[i] = passage(p)
	}
	return out, nil
}
