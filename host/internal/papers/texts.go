package papers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A paper's text (paper_texts) and its passages (paper_chunks) are written once per
// PDF read, in the ingest job's transaction: SaveTextTx replaces both.

// Text is a paper's text as one user reads it: its title and abstract, and the text
// read from its PDF ("" when none was) with the offset of each page.
type Text struct {
	Title      string
	Abstract   string
	Content    string
	PageStarts []int
}

// VisibleText returns the text of a paper userID may see; ErrNotFound otherwise.
func (st *Store) VisibleText(ctx context.Context, userID, paperID uuid.UUID) (Text, error) {
	var t Text
	err := st.pool.QueryRow(ctx, `
		SELECT p.title, coalesce(p.abstract, ''), coalesce(t.content, ''), coalesce(t.page_offsets, '{}')
		  FROM papers p LEFT JOIN paper_texts t ON t.paper_id = p.id
		 WHERE p.id = $2 AND `+visiblePredicate, userID, paperID).Scan(&t.Title, &t.Abstract, &t.Content, &t.PageStarts)
	if errors.Is(err, pgx.ErrNoRows) {
		return Text{}, ErrNotFound
	}
	if err != nil {
		return Text{}, fmt.Errorf("papers: read text: %w", err)
	}
	return t, nil
}

// RawText is the text of a paper's PDF as extracted, before cleaning, and the
// way back to it from the clean text.
type RawText struct {
	// Content is the raw text; PageStarts where each page starts in it.
	Content    string
	PageStarts []int
	// Map is the map from the clean text (Text.Content) to Content, as
	// pdftext.OffsetMap.Ints wrote it.
	Map []int32
}

// PassageSpan is where a passage was printed: its span in RawText.Content.
type PassageSpan struct {
	ChunkID          uuid.UUID
	Start, End       int // in the clean text
	RawStart, RawEnd int // in the raw text; both 0 for a text read before the map was kept
}

// VisibleRawText returns the raw text of a paper userID may see, with its
// passages' spans in index order; ErrNotFound otherwise, and an empty RawText for
// a paper whose text was read before raw texts were kept.
func (st *Store) VisibleRawText(ctx context.Context, userID, paperID uuid.UUID) (RawText, []PassageSpan, error) {
	var rt RawText
	err := st.pool.QueryRow(ctx, `
		SELECT coalesce(t.raw_content, ''), coalesce(t.raw_page_offsets, '{}'), coalesce(t.offset_map, '{}')
		  FROM papers p LEFT JOIN paper_texts t ON t.paper_id = p.id
		 WHERE p.id = $2 AND `+visiblePredicate, userID, paperID).Scan(&rt.Content, &rt.PageStarts, &rt.Map)
	if errors.Is(err, pgx.ErrNoRows) {
		return RawText{}, nil, ErrNotFound
	}
	if err != nil {
		return RawText{}, nil, fmt.Errorf("papers: read raw text: %w", err)
	}
	rows, err := st.pool.Query(ctx, `SELECT id, char_start, char_end, coalesce(raw_start, 0), coalesce(raw_end, 0)
		FROM paper_chunks WHERE paper_id = $1 ORDER BY chunk_index`, paperID)
	if err != nil {
		return RawText{}, nil, fmt.Errorf("papers: read passage spans: %w", err)
	}
	spans, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PassageSpan, error) {
		var s PassageSpan
		err := r.Scan(&s.ChunkID, &s.Start, &s.End, &s.RawStart, &s.RawEnd)
		return s, err
	})
	if err != nil {
		return RawText{}, nil, fmt.Errorf("papers: read passage spans: %w", err)
	}
	return rt, spans, nil
}

// TextLock is what LockForTextTx finds on a paper about to get a PDF's text.
type TextLock struct {
	// SHA256 is the digest of the PDF its text was read from; nil when it has none.
	SHA256 []byte
	// Shared: anyone but the reader can read the paper (public, instance-level,
	// someone else's, or in someone else's library).
	Shared bool
}

// LockForTextTx locks the paper's row in the caller's transaction and says whether
// it has text and who else reads it, for owner. A missing paper is ErrNotFound.
func LockForTextTx(ctx context.Context, tx pgx.Tx, paperID, owner uuid.UUID) (TextLock, error) {
	var l TextLock
	err := tx.QueryRow(ctx, `
		SELECT t.sha256, (p.visibility = 'public' OR p.discovered_by IS DISTINCT FROM $2
		       OR EXISTS (SELECT 1 FROM user_library ul WHERE ul.paper_id = p.id AND ul.user_id <> $2))
		  FROM papers p LEFT JOIN paper_texts t ON t.paper_id = p.id
		 WHERE p.id = $1 FOR UPDATE OF p`, paperID, owner).Scan(&l.SHA256, &l.Shared)
	if errors.Is(err, pgx.ErrNoRows) {
		return TextLock{}, ErrNotFound
	}
	if err != nil {
		return TextLock{}, fmt.Errorf("papers: lock for text: %w", err)
	}
	return l, nil
}

// TextParams are a paper's text as read from a PDF.
type TextParams struct {
	Extractor   string
	Content     string
	PageOffsets []int32
	SHA256      []byte
	// RawContent is the text as extracted before cleaning, RawPageOffsets where
	// its pages start, and OffsetMap the map from Content back to it
	// (pdftext.OffsetMap.Ints). docs/decisions.md, "The library (issue 16)".
	RawContent     string
	RawPageOffsets []int32
	OffsetMap      []int32
}

// ChunkParams are one passage of a paper's text.
type ChunkParams struct {
	ID                 uuid.UUID
	Index              int
	Section            string // "" for none
	Text               string
	PageStart, PageEnd int
	CharStart, CharEnd int
	// RawStart and RawEnd are the passage's span in TextParams.RawContent; not
	// stored when RawEnd is not after RawStart.
	RawStart, RawEnd int
	Tokens           int
}

// SaveTextTx replaces the paper's text and passages, in the caller's transaction.
func SaveTextTx(ctx context.Context, tx pgx.Tx, paperID uuid.UUID, text TextParams, chunks []ChunkParams) error {
	if _, err := tx.Exec(ctx, `DELETE FROM paper_chunks WHERE paper_id = $1`, paperID); err != nil {
		return fmt.Errorf("papers: save text: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO paper_texts (paper_id, extractor, content, page_offsets, page_count, sha256,
		                         raw_content, raw_page_offsets, offset_map)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), coalesce($8, '{}'::integer[]), coalesce($9, '{}'::integer[]))
		ON CONFLICT (paper_id) DO UPDATE SET extractor = EXCLUDED.extractor, content = EXCLUDED.content,
		      page_offsets = EXCLUDED.page_offsets, page_count = EXCLUDED.page_count, sha256 = EXCLUDED.sha256,
		      raw_content = EXCLUDED.raw_content, raw_page_offsets = EXCLUDED.raw_page_offsets,
		      offset_map = EXCLUDED.offset_map, extracted_at = now()`,
		paperID, text.Extractor, text.Content, text.PageOffsets, len(text.PageOffsets), text.SHA256,
		text.RawContent, text.RawPageOffsets, text.OffsetMap); err != nil {
		return fmt.Errorf("papers: save text: %w", err)
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"paper_chunks"},
		[]string{"id", "paper_id", "chunk_index", "section", "content", "page_start", "page_end", "char_start", "char_end",
			"raw_start", "raw_end", "token_count"},
		pgx.CopyFromSlice(len(chunks), func(i int) ([]any, error) {
			c := chunks[i]
			var section, rawStart, rawEnd any
			if c.Section != "" {
				section = c.Section
			}
			if c.RawEnd > c.RawStart {
				rawStart, rawEnd = c.RawStart, c.RawEnd
			}
			return []any{c.ID, paperID, c.Index, section, c.Text, c.PageStart, c.PageEnd, c.CharStart, c.CharEnd,
				rawStart, rawEnd, c.Tokens}, nil
		}))
	if err != nil {
		return fmt.Errorf("papers: store chunks: %w", err)
	}
	return nil
}

// PDFFacts are what a PDF says about itself, normalized.
type PDFFacts struct {
	Title        string
	DOI          string
	ArxivID      string
	ArxivVersion int // 0 when unknown
	// Authors, Abstract, Year and Venue fill the paper's fields only when it has
	// none yet; empty values change nothing.
	Authors  []PDFAuthor
	Abstract string
	Year     int // 0 when unknown
	Venue    string
}

// PDFAuthor is one name read from a PDF's front matter.
type PDFAuthor struct {
	Name        string `json:"name"`
	Affiliation string `json:"affiliation,omitempty"`
	Email       string `json:"email,omitempty"`
}

// applyPDFSQL fills an upload's fields from its PDF ($2 title, $3 DOI, $4 arXiv id,
// $5 arXiv version, $6 authors, $7 abstract, $8 year, $9 venue). c says, per field,
// whether the PDF's value is written; provenance marks each written field FromPDF,
// and metadata.pdf keeps the identifiers the PDF printed even when another paper
// holds them, so the paper.enrich job can still look them up.
const applyPDFSQL = `
	UPDATE papers p SET
	  title = CASE WHEN c.title THEN left($2, 1000) ELSE p.title END,
	  doi = CASE WHEN c.doi THEN $3 ELSE p.doi END,
	  arxiv_id = CASE WHEN c.arxiv THEN $4 ELSE p.arxiv_id END,
	  arxiv_version = CASE WHEN c.arxiv THEN $5::int ELSE p.arxiv_version END,
	  authors = CASE WHEN c.authors THEN $6::jsonb ELSE p.authors END,
	  abstract = CASE WHEN c.abstract THEN left($7, 50000) ELSE p.abstract END,
	  publication_date = CASE WHEN c.year THEN make_date($8::int, 1, 1) ELSE p.publication_date END,
	  publication_date_precision = CASE WHEN c.year THEN 'year' ELSE p.publication_date_precision END,
	  venue = CASE WHEN c.venue THEN left($9, 1000) ELSE p.venue END,
	  provenance = p.provenance || jsonb_strip_nulls(jsonb_build_object(
	      'title', CASE WHEN c.title THEN 'pdf' END, 'doi', CASE WHEN c.doi THEN 'pdf' END,
	      'arxiv_id', CASE WHEN c.arxiv THEN 'pdf' END, 'authors', CASE WHEN c.authors THEN 'pdf' END,
	      'abstract', CASE WHEN c.abstract THEN 'pdf' END, 'year', CASE WHEN c.year THEN 'pdf' END,
	      'venue', CASE WHEN c.venue THEN 'pdf' END)),
	  metadata = jsonb_set(p.metadata, '{upload,state}', '"ready"') || jsonb_build_object('pdf',
	      jsonb_strip_nulls(jsonb_build_object('doi', nullif($3, ''), 'arxiv_id', nullif($4, '')))),
	  updated_at = now()
	FROM (SELECT q.id,
	             free AND $2 <> '' AND coalesce(q.provenance->>'title', 'pdf') = 'pdf' AS title,
	             free AND q.doi IS NULL AND $3 <> '' AND NOT EXISTS (SELECT 1 FROM papers o WHERE o.doi = $3) AS doi,
	             free AND q.arxiv_id IS NULL AND $4 <> '' AND NOT EXISTS (SELECT 1 FROM papers o WHERE o.arxiv_id = $4) AS arxiv,
	             free AND q.authors = '[]'::jsonb AND $6::jsonb <> '[]'::jsonb AS authors,
	             free AND q.abstract IS NULL AND $7 <> '' AS abstract,
	             free AND q.publication_date IS NULL AND $8::int IS NOT NULL AS year,
	             free AND q.venue IS NULL AND $9 <> '' AS venue
	        FROM papers q, LATERAL (SELECT NOT q.metadata ? 'version_of' AS free) v
	       WHERE q.id = $1) c
	WHERE p.id = c.id AND p.source = 'upload' AND p.visibility = 'private' AND p.metadata ? 'upload'`

// ApplyPDFTx fills the placeholder fields of an upload's own private paper with
// what its PDF says (authors, abstract, year and venue only where the row has
// none, the title unless a source gave it), when no other paper already holds the
// identifier, marks each field it wrote as read from the PDF (unverified), and
// marks the upload ready. A shared paper keeps what its sources say, and a
// private version of one keeps the title copied from it and leaves the
// identifiers to it.
func ApplyPDFTx(ctx context.Context, tx Querier, paperID uuid.UUID, f PDFFacts) error {
	var version, year any
	if f.ArxivVersion > 0 {
		version = f.ArxivVersion
	}
	if f.Year >= 1000 && f.Year <= 9999 {
		year = f.Year
	}
	authors := []byte("[]")
	if len(f.Authors) > 0 {
		b, err := json.Marshal(f.Authors)
		if err != nil {
			return fmt.Errorf("papers: apply PDF: %w", err)
		}
		authors = b
	}
	_, err := tx.Exec(ctx, applyPDFSQL, paperID, f.Title, f.DOI, f.ArxivID, version, string(authors), f.Abstract, year, f.Venue)
	if err != nil {
		return fmt.Errorf("papers: apply PDF: %w", err)
	}
	return nil
}

// CitationParams are one entry of a paper's reference list that names the work it
// cites.
type CitationParams struct {
	DOI     string // normalized, "" for none
	ArxivID string // normalized, "" for none
	Context string
	// Key is "doi:<doi>" or "arxiv:<id>"; a paper cites a key once.
	Key string
}

// AddCitationTx records that paper citing cites the work c names, linked to that
// work's paper when the corpus has it, in the caller's transaction. A repeated key
// is ignored.
func AddCitationTx(ctx context.Context, tx Querier, citing uuid.UUID, c CitationParams) error {
	var arxiv any
	if c.ArxivID != "" {
		arxiv = c.ArxivID
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO paper_citations (citing_paper_id, cited_paper_id, cited_doi, cited_arxiv_id, context, source, cited_key)
		VALUES ($1, (SELECT id FROM papers WHERE ($2 <> '' AND doi = $2) OR ($3::text IS NOT NULL AND arxiv_id = $3) LIMIT 1),
		        nullif($2, ''), $3, $4, 'pdf', $5)
		ON CONFLICT (citing_paper_id, cited_key) DO NOTHING`,
		citing, c.DOI, arxiv, c.Context, c.Key); err != nil {
		return fmt.Errorf("papers: store citation: %w", err)
	}
	return nil
}
