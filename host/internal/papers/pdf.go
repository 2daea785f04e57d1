package papers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// PDF names the stored PDF of a paper, as the reader serves it.
type PDF struct {
	// SHA256 is the hex digest the ingest store files the PDF under.
	SHA256 string
	// Title is the paper's title, for the file name.
	Title string
	// Since is when the paper got this PDF: its text was read from it, else the
	// upload was made.
	Since time.Time
}

// VisiblePDF returns the stored PDF of a paper userID may see: the PDF its text was
// read from (paper_texts.sha256), else the PDF of its upload still waiting for its
// job (metadata.upload.sha256). Only the paper's own row counts, so a private
// version (metadata.version_of) answers with its own PDF, never its original's. A
// paper the user may not see, a missing one, and one without a stored PDF are all
// ErrNotFound.
func (st *Store) VisiblePDF(ctx context.Context, userID, paperID uuid.UUID) (PDF, error) {
	var f PDF
	err := st.pool.QueryRow(ctx, `
		SELECT coalesce(encode(t.sha256, 'hex'), p.metadata->'upload'->>'sha256', ''), p.title,
		       coalesce(t.extracted_at, p.discovered_at)
		  FROM papers p LEFT JOIN paper_texts t ON t.paper_id = p.id
		 WHERE p.id = $2 AND `+visiblePredicate, userID, paperID).Scan(&f.SHA256, &f.Title, &f.Since)
	if errors.Is(err, pgx.ErrNoRows) {
		return PDF{}, ErrNotFound
	}
	if err != nil {
		return PDF{}, fmt.Errorf("papers: visible PDF: %w", err)
	}
	if f.SHA256 == "" {
		return PDF{}, ErrNotFound
	}
	return f, nil
}
