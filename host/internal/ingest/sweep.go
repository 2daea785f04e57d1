package ingest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/papers"
)

// A process killed in the middle of an upload (kill -9, a power cut) leaves files
// no paper refers to in the data folder: the staged upload it was writing, or a PDF
// it had moved to its content address in a transaction that never committed.
// Sweep removes both at start, without touching the uploads of a process that is
// still running, on this host or another sharing the folder:
//
//   - A staged file is created as upload-*.new, locked with flock(2) on a
//     descriptor of its own, and only then renamed to upload-*.part (stagingLock).
//     The kernel drops the lock when its process dies, so a .part file whose lock
//     can be taken belongs to no living upload. A .new file is one a process died
//     between creating and locking, microseconds apart; it goes once it is
//     staleNew old.
//   - A PDF at its content address that no paper refers to goes through Release,
//     which takes the digest's lock first: a transaction still creating its paper
//     holds that lock, so its file is kept.

// Suffixes of the staging files.
const (
	newSuffix  = ".new"
	partSuffix = ".part"
)

// staleNew is the age after which an unlocked .new staging file is an orphan.
const staleNew = time.Hour

// sweepBatch is how many digests one query checks.
const sweepBatch = 500

// stagingLock locks the freshly created staging file and gives it its .part name,
// under which Sweep may judge it.
func (st *Staged) stagingLock() error {
	lock, err := os.Open(st.tmp)
	if err != nil {
		return fmt.Errorf("ingest: lock staged PDF: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		return fmt.Errorf("ingest: lock staged PDF: %w", err)
	}
	part := strings.TrimSuffix(st.tmp, newSuffix) + partSuffix
	if err := os.Rename(st.tmp, part); err != nil {
		_ = lock.Close()
		return fmt.Errorf("ingest: lock staged PDF: %w", err)
	}
	st.tmp, st.lock = part, lock
	return nil
}

// SweepResult counts what Sweep removed.
type SweepResult struct {
	// Staged is how many staged uploads of stopped processes went.
	Staged int
	// Unreferenced is how many PDFs no paper refers to went.
	Unreferenced int
}

// Sweep removes the files of the data folder that no paper refers to and no
// running upload is writing (see above).
func (s *Store) Sweep(ctx context.Context, pool *pgxpool.Pool) (SweepResult, error) {
	var res SweepResult
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("ingest: sweep: %w", err)
	}
	var sums []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasPrefix(name, "upload-") && strings.HasSuffix(name, partSuffix):
			if removeUnlocked(filepath.Join(s.dir, name)) {
				res.Staged++
			}
		case strings.HasPrefix(name, "upload-") && strings.HasSuffix(name, newSuffix):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleNew && os.Remove(filepath.Join(s.dir, name)) == nil {
				res.Staged++
			}
		case isDigestName(name):
			sums = append(sums, strings.TrimSuffix(name, ".pdf"))
		}
	}
	for len(sums) > 0 {
		batch := sums[:min(sweepBatch, len(sums))]
		sums = sums[len(batch):]
		orphans, err := papers.PDFsUnreferenced(ctx, pool, batch)
		if err != nil {
			return res, fmt.Errorf("ingest: sweep: %w", err)
		}
		for _, sum := range orphans {
			if _, err := os.Stat(s.Path(sum)); err != nil {
				continue
			}
			if err := s.Release(ctx, pool, sum); err != nil {
				return res, fmt.Errorf("ingest: sweep: %w", err)
			}
			if _, err := os.Stat(s.Path(sum)); errors.Is(err, fs.ErrNotExist) {
				res.Unreferenced++
			}
		}
	}
	return res, nil
}

// removeUnlocked removes a staged file when no process holds its staging lock.
func removeUnlocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a running upload holds it
	}
	return os.Remove(path) == nil
}

// isDigestName reports whether name is a content address: 64 hex digits and .pdf.
func isDigestName(name string) bool {
	sum, ok := strings.CutSuffix(name, ".pdf")
	if !ok || len(sum) != 64 {
		return false
	}
	_, err := hex.DecodeString(sum)
	return err == nil
}
