package papers

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A user's own PDF becomes a paper of theirs: private, source 'upload', with
// metadata.upload naming the file by its digest (docs/ingest.md). The ingest
// package decides when; these functions are the rows it writes and reads.

// UploadParams describe a user's uploaded PDF.
type UploadParams struct {
	Title    string
	Filename string // already cleaned of NULs and invalid UTF-8
	SHA256   string // hex digest of the file
	Size     int64
}

// CreateUploadTx creates the paper of a user's own PDF, private to them, and puts it
// into their library, in the caller's transaction.
func CreateUploadTx(ctx context.Context, tx Querier, userID uuid.UUID, p UploadParams) (uuid.UUID, error) {
	var id uuid.UUID
	err := tx.QueryRow(ctx, `
		INSERT INTO papers (title, source, discovered_by, visibility, metadata, provenance)
		VALUES ($1, 'upload', $2, 'private', jsonb_build_object('upload', jsonb_build_object(
		        'sha256', $3::text, 'filename', $4::text, 'bytes', $5::bigint, 'state', 'pending')),
		        '{"title": "pdf"}')
		RETURNING id`, p.Title, userID, p.SHA256, p.Filename, p.Size).Scan(&id)
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: create upload: %w", err)
	}
	if err := AddToLibraryTx(ctx, tx, userID, id, "upload"); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// CreateVersionTx creates user's own private version of the shared paper original,
// to be read from a PDF they chose (link, digest sum): its bibliographic fields are
// copied from the original, its identifiers are not (they stay the original's),
// metadata.version_of names the original, and the link is recorded here, never on
// the shared row. The version goes into user's library, in the caller's transaction.
func CreateVersionTx(ctx context.Context, tx Querier, userID, original uuid.UUID, link, sum string, size int64) (uuid.UUID, error) {
	var id uuid.UUID
	err := tx.QueryRow(ctx, `
		INSERT INTO papers (title, authors, abstract, publication_date, publication_date_precision, venue, url,
		                    provenance, source, discovered_by, visibility, metadata)
		SELECT o.title, o.authors, o.abstract, o.publication_date, o.publication_date_precision, o.venue, o.url,
		       o.provenance - 'doi' - 'arxiv_id',
		       'upload', $2, 'private', jsonb_build_object(
		         'version_of', o.id::text,
		         'download', jsonb_build_object('url', $3::text, 'sha256', $4::text, 'bytes', $5::bigint),
		         'upload', jsonb_build_object('sha256', $4::text, 'bytes', $5::bigint, 'state', 'pending'))
		  FROM papers o WHERE o.id = $1
		RETURNING id`, original, userID, link, sum, size).Scan(&id)
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: create private version: %w", err)
	}
	if err := AddToLibraryTx(ctx, tx, userID, id, "manual_save"); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// FindCopyTx finds the paper user should get for a PDF with digest sum instead of a
// new one, and makes sure it is in their library: first a paper of their own
// library read from (or waiting for) that PDF, then a paper of the shared corpus
// (public or instance-level) whose text was read from it. Someone else's private
// upload never matches, so a digest reveals nothing. Not found is ErrNotFound.
func FindCopyTx(ctx context.Context, tx Querier, userID uuid.UUID, sum string) (uuid.UUID, error) {
	var id uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT p.id FROM user_library ul JOIN papers p ON p.id = ul.paper_id
		  LEFT JOIN paper_texts t ON t.paper_id = p.id
		 WHERE ul.user_id = $1 AND (t.sha256 = decode($2, 'hex') OR p.metadata->'upload'->>'sha256' = $2)
		 ORDER BY ul.added_at, p.id LIMIT 1`, userID, sum).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, fmt.Errorf("papers: find copy: %w", err)
	}
	err = tx.QueryRow(ctx, `
		SELECT p.id FROM papers p JOIN paper_texts t ON t.paper_id = p.id
		 WHERE t.sha256 = decode($1, 'hex') AND (p.visibility = 'public' OR p.discovered_by IS NULL)
		 ORDER BY p.discovered_at, p.id LIMIT 1`, sum).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: find copy: %w", err)
	}
	if err := AddToLibraryTx(ctx, tx, userID, id, "upload"); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// DiscardUpload deletes the paper an upload created when its PDF is unusable: only
// a private upload of owner that has no text and sits in nobody else's library. It
// returns the digest of the upload's PDF ("" when nothing was deleted or none was
// recorded).
func (st *Store) DiscardUpload(ctx context.Context, paperID, owner uuid.UUID) (string, error) {
	var sum string
	err := st.pool.QueryRow(ctx, `
		DELETE FROM papers p WHERE p.id = $1 AND p.source = 'upload' AND p.visibility = 'private' AND p.discovered_by = $2
		   AND NOT EXISTS (SELECT 1 FROM user_library ul WHERE ul.paper_id = p.id AND ul.user_id <> $2)
		   AND NOT EXISTS (SELECT 1 FROM paper_texts t WHERE t.paper_id = p.id)
		RETURNING coalesce(p.metadata->'upload'->>'sha256', '')`, paperID, owner).Scan(&sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("papers: discard upload: %w", err)
	}
	return sum, nil
}

// RecordDownloadTx records on a paper the link its PDF was fetched from, with the
// file's digest and size (metadata.download).
func RecordDownloadTx(ctx context.Context, tx Querier, paperID uuid.UUID, link, sum string, size int64) error {
	if _, err := tx.Exec(ctx, `UPDATE papers SET metadata = metadata || jsonb_build_object('download',
		jsonb_build_object('url', $2::text, 'sha256', $3::text, 'bytes', $4::bigint)) WHERE id = $1`, paperID, link, sum, size); err != nil {
		return fmt.Errorf("papers: record download: %w", err)
	}
	return nil
}

// Holding is who may read a paper's text, as a PDF for it is about to be read.
type Holding struct {
	// Shared: the paper is public or instance-level.
	Shared bool
	// Mine: a private paper of the caller that nobody else keeps.
	Mine bool
	// HasText: the paper's text was already read from a PDF.
	HasText bool
}

// HoldingOf says how userID holds a paper. A missing paper is ErrNotFound.
func (st *Store) HoldingOf(ctx context.Context, userID, paperID uuid.UUID) (Holding, error) {
	var h Holding
	err := st.pool.QueryRow(ctx, `
		SELECT p.visibility = 'public' OR p.discovered_by IS NULL,
		       p.visibility = 'private' AND p.discovered_by = $2
		         AND NOT EXISTS (SELECT 1 FROM user_library ul WHERE ul.paper_id = p.id AND ul.user_id <> $2),
		       EXISTS (SELECT 1 FROM paper_texts t WHERE t.paper_id = p.id)
		  FROM papers p WHERE p.id = $1`, paperID, userID).Scan(&h.Shared, &h.Mine, &h.HasText)
	if errors.Is(err, pgx.ErrNoRows) {
		return Holding{}, ErrNotFound
	}
	if err != nil {
		return Holding{}, fmt.Errorf("papers: holding: %w", err)
	}
	return h, nil
}

// PDFReferencedTx says whether any paper still refers to the PDF with digest sum:
// an upload waiting for its job, a download recorded by an earlier version, or a
// text read from it.
func PDFReferencedTx(ctx context.Context, tx Querier, sum string) (bool, error) {
	var used bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM papers WHERE metadata->'upload'->>'sha256' = $1 OR metadata->'download'->>'sha256' = $1)
		OR EXISTS (SELECT 1 FROM paper_texts WHERE sha256 = decode($1, 'hex'))`, sum).Scan(&used)
	if err != nil {
		return false, fmt.Errorf("papers: PDF referenced: %w", err)
	}
	return used, nil
}

// PDFsUnreferenced returns those of sums (hex digests) no paper refers to, as
// PDFReferencedTx would say of each: the candidates of the data folder's sweep,
// which checks each again under its digest lock before removing its file.
func PDFsUnreferenced(ctx context.Context, q Querier, sums []string) ([]string, error) {
	rows, err := q.Query(ctx, `
		SELECT s FROM unnest($1::text[]) AS s
		 WHERE NOT EXISTS (SELECT 1 FROM papers WHERE metadata->'upload'->>'sha256' = s)
		   AND NOT EXISTS (SELECT 1 FROM papers WHERE metadata->'download'->>'sha256' = s)
		   AND NOT EXISTS (SELECT 1 FROM paper_texts WHERE sha256 = decode(s, 'hex'))`, sums)
	if err != nil {
		return nil, fmt.Errorf("papers: PDFs unreferenced: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("papers: PDFs unreferenced: %w", err)
	}
	return out, nil
}

// DeletePrivateOfUsersTx deletes, in the caller's transaction, the private papers
// the users brought in that nobody else keeps: the purge of those accounts calls it
// before deleting them, or discovered_by would fall to NULL and publish the papers
// to every user.
func DeletePrivateOfUsersTx(ctx context.Context, tx pgx.Tx, userIDs []uuid.UUID) error {
	if _, err := tx.Exec(ctx, `
		DELETE FROM papers p
		 WHERE p.discovered_by = ANY($1) AND p.visibility = 'private'
		   AND NOT EXISTS (SELECT 1 FROM user_library ul
		                    WHERE ul.paper_id = p.id AND NOT (ul.user_id = ANY($1)))`, userIDs); err != nil {
		return fmt.Errorf("papers: delete private papers of purged users: %w", err)
	}
	return nil
}
