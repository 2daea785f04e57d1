package papers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/snippet"
)

// Passage is one chunk of a paper's text with where it sits. VisiblePassages
// fills Snippet; VisiblePassageTexts fills Authors, Text, CharStart and PageStarts.
type Passage struct {
	ChunkID   uuid.UUID
	PaperID   uuid.UUID
	Title     string
	Section   string
	PageStart int
	PageEnd   int
	// Score is the lexical rank (SearchPassages only).
	Score float64
	// Snippet is the passage's first 280 characters (VisiblePassages), plain text
	// with spaces collapsed; search results get theirs from Headlines.
	Snippet string
	// Highlights are the matched words in Snippet (from Headlines): [start, end)
	// byte offsets, in order and not overlapping.
	Highlights [][2]int
	// Authors are the paper's author names.
	Authors []string
	// Text is the whole passage; CharStart is where it starts in the paper's text,
	// whose pages start at PageStarts.
	Text       string
	CharStart  int
	PageStarts []int
}

// SearchParams select the passages SearchPassages ranks.
type SearchParams struct {
	// Query is a web-search query (websearch_to_tsquery, English).
	Query string
	// PaperIDs, when not empty, restrict the search to those papers (never
	// granting access to more).
	PaperIDs []uuid.UUID
	// Limit is how many passages come back.
	Limit int
	// Candidates caps the matching passages that are ranked at all (in index
	// order); see docs/benchmarks.md.
	Candidates int
}

// SearchPassages returns the passages best matching p.Query by full-text rank among
// papers userID may see, without snippets: ranking reads only the index and the
// stored vectors, and Headlines builds snippets for the passages shown.
func (st *Store) SearchPassages(ctx context.Context, userID uuid.UUID, p SearchParams) ([]Passage, error) {
	var only any
	if len(p.PaperIDs) > 0 {
		only = p.PaperIDs
	}
	rows, err := st.pool.Query(ctx, `
		WITH cand AS MATERIALIZED (
		    SELECT c.id
		      FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		     WHERE c.search_vector @@ websearch_to_tsquery('english', $2) AND `+visiblePredicate+`
		       AND ($3::uuid[] IS NULL OR c.paper_id = ANY($3))
		     LIMIT $5)
		SELECT c.id, c.paper_id, p.title, coalesce(c.section, ''), c.page_start, c.page_end,
		       ts_rank_cd(c.search_vector, q) AS score
		  FROM cand JOIN paper_chunks c ON c.id = cand.id
		  JOIN papers p ON p.id = c.paper_id,
		       websearch_to_tsquery('english', $2) q
		 ORDER BY score DESC, c.paper_id, c.chunk_index
		 LIMIT $4`, userID, p.Query, only, p.Limit, p.Candidates)
	if err != nil {
		return nil, fmt.Errorf("papers: search passages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Passage, error) {
		var p Passage
		err := r.Scan(&p.ChunkID, &p.PaperID, &p.Title, &p.Section, &p.PageStart, &p.PageEnd, &p.Score)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: search passages: %w", err)
	}
	return out, nil
}

// Headline is the fragment of a passage that best matches a query, plain text,
// with the matched words' [start, end) byte offsets in it, and where the passage
// is: its paper, the paper's title, its section and pages.
type Headline struct {
	Snippet    string
	Highlights [][2]int
	PaperID    uuid.UUID
	Title      string
	Section    string
	PageStart  int
	PageEnd    int
}

// Headlines builds the snippets of the passages ids (those whose paper userID may
// see; the others are left out) for query, a web-search query, with where each
// passage is. PostgreSQL turns the query into its lexemes (once, the same for
// every row) and returns the passages' text; package snippet builds the snippets,
// so callers rank first and ask only for the passages they show. A passage the
// query does not match gets its opening words and no highlights.
func (st *Store) Headlines(ctx context.Context, userID uuid.UUID, query string, ids []uuid.UUID) (map[uuid.UUID]Headline, error) {
	if len(ids) == 0 {
		return map[uuid.UUID]Headline{}, nil
	}
	rows, err := st.pool.Query(ctx, `
		SELECT c.id, c.content, c.paper_id, p.title, coalesce(c.section, ''), c.page_start, c.page_end,
		       (SELECT websearch_to_tsquery('english', $3)::text)
		  FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		 WHERE c.id = ANY($2) AND `+visiblePredicate,
		userID, ids, query)
	if err != nil {
		return nil, fmt.Errorf("papers: headlines: %w", err)
	}
	out := make(map[uuid.UUID]Headline, len(ids))
	var id uuid.UUID
	var content, tsquery string
	var terms []string
	parsed := false
	var h Headline
	_, err = pgx.ForEachRow(rows, []any{&id, &content, &h.PaperID, &h.Title, &h.Section, &h.PageStart, &h.PageEnd, &tsquery}, func() error {
		if !parsed {
			terms, parsed = snippet.Terms(tsquery), true
		}
		h.Snippet, h.Highlights = snippet.Build(content, terms)
		out[id] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("papers: headlines: %w", err)
	}
	return out, nil
}

// VisiblePassages returns the passages of ids whose paper userID may see, in no
// particular order, with the first 280 characters of each as its Snippet.
func (st *Store) VisiblePassages(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]Passage, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT c.id, c.paper_id, p.title, coalesce(c.section, ''), c.page_start, c.page_end,
		       left(c.content, 280)
		  FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		 WHERE c.id = ANY($2) AND `+visiblePredicate, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: passages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Passage, error) {
		var p Passage
		err := row.Scan(&p.ChunkID, &p.PaperID, &p.Title, &p.Section, &p.PageStart, &p.PageEnd, &p.Snippet)
		p.Snippet = strings.Join(strings.Fields(p.Snippet), " ")
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: passages: %w", err)
	}
	return out, nil
}

// VisiblePassageTexts returns the passages of ids whose paper userID may see, in
// full (Authors, Text, CharStart, PageStarts), in no particular order.
func (st *Store) VisiblePassageTexts(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]Passage, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT c.id, c.paper_id, p.title, p.authors, coalesce(c.section, ''), c.page_start, c.page_end,
		       c.content, c.char_start, coalesce(t.page_offsets, '{}')
		  FROM paper_chunks c JOIN papers p ON p.id = c.paper_id
		  LEFT JOIN paper_texts t ON t.paper_id = c.paper_id
		 WHERE c.id = ANY($2) AND `+visiblePredicate, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: passage texts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Passage, error) {
		var p Passage
		var authors []byte
		if err := row.Scan(&p.ChunkID, &p.PaperID, &p.Title, &authors, &p.Section, &p.PageStart, &p.PageEnd,
			&p.Text, &p.CharStart, &p.PageStarts); err != nil {
			return p, err
		}
		var list []Author
		_ = json.Unmarshal(authors, &list)
		p.Authors = []string{}
		for _, a := range list {
			p.Authors = append(p.Authors, a.Name)
		}
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("papers: passage texts: %w", err)
	}
	return out, nil
}

// BodyPassages returns a paper's passages in reading order (ChunkID, Section,
// PageStart, Text), without its references, bibliography and acknowledgements.
// With maxChars > 0 it stops before the passage that would take the total of Text
// past maxChars, keeping at least one. It does not check who may see the paper:
// callers ask Visible or VisibleText first.
func (st *Store) BodyPassages(ctx context.Context, paperID uuid.UUID, maxChars int) ([]Passage, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT id, coalesce(section, ''), page_start, content FROM paper_chunks
		 WHERE paper_id = $1
		   AND coalesce(lower(section), '') NOT IN ('references', 'bibliography', 'acknowledgements', 'acknowledgments')
		 ORDER BY chunk_index`, paperID)
	if err != nil {
		return nil, fmt.Errorf("papers: body passages: %w", err)
	}
	defer rows.Close()
	var out []Passage
	total := 0
	for rows.Next() {
		p := Passage{PaperID: paperID}
		if err := rows.Scan(&p.ChunkID, &p.Section, &p.PageStart, &p.Text); err != nil {
			return nil, fmt.Errorf("papers: body passages: %w", err)
		}
		if maxChars > 0 && total+len(p.Text) > maxChars && len(out) > 0 {
			return out, nil
		}
		total += len(p.Text)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("papers: body passages: %w", err)
	}
	return out, nil
}

// Passages returns every passage of a paper in reading order (ChunkID, PaperID,
// Text): what the ingest job embeds. It does not check who may see the paper.
func (st *Store) Passages(ctx context.Context, paperID uuid.UUID) ([]Passage, error) {
	rows, err := st.pool.Query(ctx, `SELECT id, content FROM paper_chunks WHERE paper_id = $1 ORDER BY chunk_index`, paperID)
	if err != nil {
		return nil, fmt.Errorf("papers: passages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Passage, error) {
		p := Passage{PaperID: paperID}
		return p, r.Scan(&p.ChunkID, &p.Text)
	})
	if err != nil {
		return nil, fmt.Errorf("papers: passages: %w", err)
	}
	return out, nil
}

// PassageText returns the text of one passage, whoever may see its paper (the
// evals read the passages they cite).
func (st *Store) PassageText(ctx context.Context, chunkID uuid.UUID) (string, error) {
	var text string
	if err := st.pool.QueryRow(ctx, `SELECT content FROM paper_chunks WHERE id = $1`, chunkID).Scan(&text); err != nil {
		return "", fmt.Errorf("papers: passage text: %w", err)
	}
	return text, nil
}
