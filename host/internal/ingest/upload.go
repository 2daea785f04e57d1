package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// MaxUploadBytes bounds a browser upload (the reference's 50 MB).
const MaxUploadBytes = 50 << 20

// multipartSlack is what the multipart framing around the file may add to a body.
const multipartSlack = 1 << 20

// Each user may send UploadsPerWindow PDFs (uploads and links to fetch together)
// per UploadWindow; more answer 429 with Retry-After.
const (
	UploadsPerWindow = 30
	UploadWindow     = 10 * time.Minute
)

// Status values of an UploadResult.
const (
	// StatusQueued: a new paper, or a paper without text, is being read by Job.
	StatusQueued = "queued"
	// StatusExisting: the caller already had this PDF, or the shared corpus has its
	// text; the answer names that paper, nothing new was made and no job runs.
	StatusExisting = "existing"
)

// UploadResult is the answer to an upload or a fetch.
type UploadResult struct {
	PaperID uuid.UUID      `json:"paper_id"`
	Job     *jobs.Envelope `json:"job"`
	Status  string         `json:"status"`
	// VersionOf names the shared paper this one is the caller's private version of.
	VersionOf *uuid.UUID `json:"version_of,omitempty"`
	// Message says in one sentence what happened.
	Message string `json:"message"`
}

// uploadTitle is the paper's title until the PDF says better: the file name without
// its extension, cleaned to what the papers table accepts.
func uploadTitle(filename string) string {
	title := strings.TrimSuffix(filepath.Base(filename), filepath.Ext(filename))
	title = strings.Join(strings.Fields(strings.ToValidUTF8(clean(title), "")), " ")
	if title == "" || title == "." {
		return "Uploaded PDF"
	}
	if r := []rune(title); len(r) > 1000 {
		title = string(r[:1000])
	}
	return title
}

// keepUpload records an uploaded PDF for user in one transaction: the existing copy
// when there is one (findCopyTx), else a new private paper with its ingest.pdf job.
func (a *API) keepUpload(ctx context.Context, user uuid.UUID, title, filename string, st *Staged) (UploadResult, error) {
	var res UploadResult
	err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		id, existing, err := keepTx(ctx, tx, user, title, filename, st)
		if err != nil {
			return err
		}
		res.PaperID = id
		if existing {
			res.Status, res.Message = StatusExisting, "You already have this PDF; nothing new was added."
			return nil
		}
		res.Status, res.Message = StatusQueued, "The PDF is uploaded; Lectern is reading it."
		res.Job, err = a.queue.EnqueueTx(ctx, tx, user, Args{PaperID: id, SHA256: st.Sum})
		return err
	})
	return res, err
}

// keepTx moves a staged PDF to its content address and gives user the paper for it,
// in the caller's transaction: the existing copy when there is one (findCopyTx,
// existing true), else a new private paper in their library, still to be read.
func keepTx(ctx context.Context, tx pgx.Tx, user uuid.UUID, title, filename string, st *Staged) (uuid.UUID, bool, error) {
	if err := st.KeepTx(ctx, tx); err != nil {
		return uuid.Nil, false, err
	}
	id, err := findCopyTx(ctx, tx, user, st.Sum)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, papers.ErrNotFound) {
		return uuid.Nil, false, err
	}
	id, err = CreateUploadTx(ctx, tx, user, title, filename, st.Sum, st.Size)
	return id, false, err
}

// Kept is a PDF KeepFile took: the paper for it, and whether that paper already
// existed (then nothing was added).
type Kept struct {
	PaperID  uuid.UUID
	SHA256   string
	Existing bool
}

// KeepFile is an upload from the host's own command line (`lectern import`): the
// same checks and the same answer as POST /api/papers/upload, without the size limit
// of a browser upload or a job. A new paper is for the caller to read
// (Worker.Ingest). Nothing is kept of a refused PDF or a failed transaction.
func (s *Store) KeepFile(ctx context.Context, pool *pgxpool.Pool, user uuid.UUID, r io.Reader, filename string) (Kept, error) {
	st, err := s.Stage(r, -1)
	if errors.Is(err, errNotPDF) {
		return Kept{}, ErrNotPDF
	}
	if err != nil {
		return Kept{}, err
	}
	defer st.Discard()
	k := Kept{SHA256: st.Sum}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		k.PaperID, k.Existing, err = keepTx(ctx, tx, user, uploadTitle(filename), filename, st)
		return err
	})
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = s.Release(rctx, pool, st.Sum)
		return Kept{}, err
	}
	return k, nil
}

// ErrNotPDF is a file that is not a PDF, whatever its name says.
var ErrNotPDF = errors.New("the file is not a PDF")

// release removes a PDF whose transaction failed, unless a paper refers to it. The
// request may be over; the cleanup still runs.
func (a *API) release(ctx context.Context, sum string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = a.store.Release(ctx, a.pool, sum)
}

// findCopyTx finds the paper user should get for a PDF with digest sum instead of
// a new one, and makes sure it is in their library (papers.FindCopyTx). Call it
// after KeepTx (or lockDigestTx), so two uploads of one PDF cannot both miss. Not
// found is papers.ErrNotFound.
func findCopyTx(ctx context.Context, tx pgx.Tx, user uuid.UUID, sum string) (uuid.UUID, error) {
	return papers.FindCopyTx(ctx, tx, user, sum)
}

// CreateUploadTx creates the paper of a user's own PDF, private to them, and puts it
// into their library, in the caller's transaction.
func CreateUploadTx(ctx context.Context, tx pgx.Tx, user uuid.UUID, title, filename, sum string, size int64) (uuid.UUID, error) {
	id, err := papers.CreateUploadTx(ctx, tx, user, papers.UploadParams{
		Title: title, Filename: clean(strings.ToValidUTF8(filename, "")), SHA256: sum, Size: size})
	if err != nil {
		return uuid.Nil, fmt.Errorf("ingest: %w", err)
	}
	return id, nil
}

// CreateVersionTx creates user's own private version of the shared paper original,
// to be read from a PDF they chose (papers.CreateVersionTx), in the caller's
// transaction.
func CreateVersionTx(ctx context.Context, tx pgx.Tx, user, original uuid.UUID, link, sum string, size int64) (uuid.UUID, error) {
	id, err := papers.CreateVersionTx(ctx, tx, user, original, link, sum, size)
	if err != nil {
		return uuid.Nil, fmt.Errorf("ingest: %w", err)
	}
	return id, nil
}
