package papers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// OutlineEntry is one passage of a paper as its table of contents lists it: where
// it sits and how it begins, without its whole text.
type OutlineEntry struct {
	ChunkID   uuid.UUID `json:"chunk_id"`
	Index     int       `json:"index"`
	Section   string    `json:"section"`
	PageStart int       `json:"page_start"`
	PageEnd   int       `json:"page_end"`
	// Preview is the passage's first words (about 100 characters), spaces
	// collapsed.
	Preview string `json:"preview"`
}

// PassageText is one whole passage of a paper: what the reader highlights.
type PassageText struct {
	ChunkID   uuid.UUID `json:"chunk_id"`
	PaperID   uuid.UUID `json:"paper_id"`
	Index     int       `json:"index"`
	Section   string    `json:"section"`
	PageStart int       `json:"page_start"`
	PageEnd   int       `json:"page_end"`
	// Content is the passage's stored text (paper_chunks.content); a citation's
	// start and end are rune offsets into it.
	Content string `json:"content"`
}

// previewRunes bounds an outline entry's preview.
const previewRunes = 100

// Outline returns the passages of a paper userID may see, in reading order, for
// its table of contents. A paper they may not see is ErrNotFound, like a missing
// one; a visible paper whose text was never read has no passages.
func (st *Store) Outline(ctx context.Context, userID, paperID uuid.UUID) ([]OutlineEntry, error) {
	ok, err := st.Visible(ctx, userID, paperID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	rows, err := st.pool.Query(ctx, `
		SELECT id, chunk_index, coalesce(section, ''), page_start, page_end, left(content, $2)
		  FROM paper_chunks WHERE paper_id = $1 ORDER BY chunk_index`, paperID, previewRunes*2)
	if err != nil {
		return nil, fmt.Errorf("papers: outline: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutlineEntry, error) {
		var e OutlineEntry
		err := r.Scan(&e.ChunkID, &e.Index, &e.Section, &e.PageStart, &e.PageEnd, &e.Preview)
		e.Preview = preview(e.Preview, previewRunes)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: outline: %w", err)
	}
	return out, nil
}

// preview collapses the spaces of s and cuts it to about n runes at a word's end.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// VisiblePassageText returns one passage of a paper userID may see. A passage that
// is not the paper's, and a paper they may not see, are ErrNotFound alike.
func (st *Store) VisiblePassageText(ctx context.Context, userID, paperID, chunkID uuid.UUID) (PassageText, error) {
	var p PassageText
	err := st.pool.QueryRow(ctx, `
		SELECT c.id, c.paper_id, c.chunk_index, coalesce(c.section, ''), c.page_start, c.page_end, c.content
		  FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		 WHERE c.id = $3 AND c.paper_id = $2 AND `+visiblePredicate, userID, paperID, chunkID).
		Scan(&p.ChunkID, &p.PaperID, &p.Index, &p.Section, &p.PageStart, &p.PageEnd, &p.Content)
	if errors.Is(err, pgx.ErrNoRows) {
		return PassageText{}, ErrNotFound
	}
	if err != nil {
		return PassageText{}, fmt.Errorf("papers: passage: %w", err)
	}
	return p, nil
}
