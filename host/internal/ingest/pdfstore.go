package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/papers"
)

// Store keeps the PDFs, content-addressed under dir (LECTERN_DATA_DIR/pdfs).
//
// A PDF arrives in two steps: Stage writes it to a temporary file in dir and checks
// it (a PDF, within the size limit), then KeepTx moves it to its content address
// inside the transaction that creates the paper referring to it. A refused PDF never
// reaches its address; a transaction that fails after KeepTx calls Release, which
// removes the file unless another paper refers to the same content.
type Store struct {
	dir string
	// createTemp makes the temporary file Stage writes to: os.CreateTemp, or in a
	// fault-injection test a file whose writes fail as a full disk's do.
	createTemp func(dir, pattern string) (stagingFile, error)
}

// stagingFile is what Stage writes a PDF into (an *os.File in production).
type stagingFile interface {
	io.Writer
	io.ReaderAt
	Close() error
	Name() string
}

// NewStore returns a Store under dir.
func NewStore(dir string) *Store {
	return &Store{dir: dir, createTemp: func(dir, pattern string) (stagingFile, error) { return os.CreateTemp(dir, pattern) }}
}

// Path is where the PDF with this digest lives.
func (s *Store) Path(sum string) string { return filepath.Join(s.dir, sum+".pdf") }

var (
	errNotPDF   = errors.New("ingest: not a PDF")
	errTooLarge = errors.New("ingest: PDF too large")
	// errBodyRead is a PDF whose sender stopped or broke off; nothing is kept of it.
	errBodyRead = errors.New("ingest: reading the PDF failed")
	// ErrNoSpace is a PDF the data folder had no room for (the disk or the quota is
	// full); nothing is kept of it. The API answers 507 with a sentence.
	ErrNoSpace = errors.New("ingest: the data folder is full")
)

// noSpace marks err as ErrNoSpace when the file system said it is full (ENOSPC,
// or EDQUOT for a quota), keeping the cause for the logs.
func noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// Staged is a checked PDF in a temporary file of the store, not yet at its content
// address. Discard it on every path (a deferred call is fine after KeepTx).
type Staged struct {
	// Sum is the hex SHA-256 of the content.
	Sum string
	// Size is its length in bytes.
	Size int64

	store *Store
	tmp   string
	// lock holds the staging lock of tmp (stagingLock) until the file is kept or
	// discarded.
	lock *os.File
}

// readErrReader remembers an error of the reader it wraps, so a copy can tell the
// sender's failure from the disk's.
type readErrReader struct {
	r   io.Reader
	err error
}

func (e *readErrReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// Stage copies r to a temporary file of the store and checks that it starts like a
// PDF and holds at most limit bytes (no limit when limit < 0). A refused PDF leaves
// no file: errNotPDF, errTooLarge, or errBodyRead wrapping the reader's error.
func (s *Store) Stage(r io.Reader, limit int64) (*Staged, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	tmp, err := s.createTemp(s.dir, "upload-*"+newSuffix)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", noSpace(err))
	}
	st := &Staged{store: s, tmp: tmp.Name()}
	ok := false
	defer func() {
		_ = tmp.Close()
		if !ok {
			st.Discard()
		}
	}()
	if err := st.stagingLock(); err != nil {
		return nil, err
	}
	src := &readErrReader{r: r}
	var in io.Reader = src
	if limit >= 0 {
		in = io.LimitReader(src, limit+1)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), in)
	switch {
	case src.err != nil:
		return nil, fmt.Errorf("%w: %w", errBodyRead, src.err)
	case err != nil:
		return nil, fmt.Errorf("ingest: store PDF: %w", noSpace(err))
	case limit >= 0 && n > limit:
		return nil, errTooLarge
	}
	head := make([]byte, 512)
	m, _ := tmp.ReadAt(head, 0)
	if !strings.HasPrefix(http.DetectContentType(head[:m]), "application/pdf") {
		return nil, errNotPDF
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("ingest: store PDF: %w", noSpace(err))
	}
	st.Sum, st.Size, ok = hex.EncodeToString(h.Sum(nil)), n, true
	return st, nil
}

// Discard removes the temporary file, if it is still there.
func (st *Staged) Discard() {
	if st.tmp != "" {
		_ = os.Remove(st.tmp)
		st.tmp = ""
	}
	st.unlock()
}

func (st *Staged) unlock() {
	if st.lock != nil {
		_ = st.lock.Close() // closing the last descriptor drops the flock
		st.lock = nil
	}
}

// KeepTx moves the staged PDF to its content address. It takes the digest's lock in
// tx (lockDigestTx), so a concurrent Release of the same content waits for tx and
// then sees the paper tx creates. When the address already holds the content, the
// temporary file just goes.
func (st *Staged) KeepTx(ctx context.Context, tx pgx.Tx) error {
	if err := lockDigestTx(ctx, tx, st.Sum); err != nil {
		return err
	}
	return st.keep()
}

func (st *Staged) keep() error {
	if st.tmp == "" {
		return nil
	}
	if _, err := os.Stat(st.store.Path(st.Sum)); err == nil {
		st.Discard()
		return nil
	}
	if err := os.Rename(st.tmp, st.store.Path(st.Sum)); err != nil {
		return fmt.Errorf("ingest: store PDF: %w", err)
	}
	st.tmp = ""
	st.unlock()
	return nil
}

// lockDigestTx takes a transaction-scoped lock on one PDF content: creating a paper
// for it, and removing its file, happen one at a time.
func lockDigestTx(ctx context.Context, tx pgx.Tx, sum string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('lectern.pdf:' || $1, 0))`, sum); err != nil {
		return fmt.Errorf("ingest: lock PDF: %w", err)
	}
	return nil
}

// Release removes the PDF with this digest unless a paper still refers to it: the
// cleanup after an upload whose transaction failed, or whose PDF could not be read.
func (s *Store) Release(ctx context.Context, pool *pgxpool.Pool, sum string) error {
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 64 {
		return nil // not a digest this store wrote
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := lockDigestTx(ctx, tx, sum); err != nil {
			return err
		}
		used, err := papers.PDFReferencedTx(ctx, tx, sum)
		if err != nil {
			return fmt.Errorf("ingest: release PDF: %w", err)
		}
		if used {
			return nil
		}
		if err := os.Remove(s.Path(sum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("ingest: release PDF: %w", err)
		}
		return nil
	})
}
