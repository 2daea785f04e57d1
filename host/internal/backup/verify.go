package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/jackc/pgx/v5"
)

// VerifyReport is what a test restore found.
type VerifyReport struct {
	Point     string
	Tables    int
	Rows      int64
	PDFs      int
	Encrypted bool
}

// List returns the points of the backup folder, newest first.
func (s *Service) List() ([]Point, error) {
	return listPoints(s.cfg.Dir, s.cfg.SigningKey, s.schemaVersion())
}

// Verify is the test restore: it authenticates the point, checks every file's
// checksum, restores the dump into a scratch database that it drops afterwards,
// and compares every table's row count with the manifest's; it also reads the PDF
// archive through. Nothing live is touched.
func (s *Service) Verify(ctx context.Context, name string) (VerifyReport, error) {
	p, err := openPoint(s.cfg.Dir, name, s.cfg.SigningKey, s.schemaVersion())
	if err != nil {
		return VerifyReport{}, err
	}
	rep := VerifyReport{Point: name, Encrypted: p.Encrypted}
	if rep.PDFs, err = s.readPDFArchive(p, nil); err != nil {
		return rep, err
	}
	live, _ := databaseName(s.db.URL)
	scratch := live + "_verify_" + randomHex(4)
	if err := s.restoreInto(ctx, p, scratch); err != nil {
		return rep, err
	}
	defer s.dropDatabase(context.WithoutCancel(ctx), scratch)
	pool, err := s.openPool(ctx, scratch)
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	got, err := tableCounts(ctx, pool)
	if err != nil {
		return rep, err
	}
	if err := compareCounts(p.manifest.Tables, got); err != nil {
		return rep, err
	}
	rep.Tables = len(got)
	for _, n := range got {
		rep.Rows += n
	}
	return rep, nil
}

// compareCounts says which tables differ between the manifest and a restore.
func compareCounts(want, got map[string]int64) error {
	if len(want) == 0 {
		return errors.New("backup: the manifest records no table counts to compare with")
	}
	var diffs []string
	for t, n := range want {
		g, ok := got[t]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s missing", t))
		case g != n:
			diffs = append(diffs, fmt.Sprintf("%s has %d rows, the manifest %d", t, g, n))
		}
	}
	for t := range got {
		if _, ok := want[t]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s is not in the manifest", t))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("backup: the restored database differs from the manifest: %v", diffs)
	}
	return nil
}

// restoreInto creates database name and loads the point's dump into it.
func (s *Service) restoreInto(ctx context.Context, p Point, name string) error {
	f, ok := p.manifest.file(DatabaseFile)
	if !ok {
		return errors.New("backup: the point has no database dump")
	}
	plain, cleanup, err := s.decryptToTemp(filepath.Join(s.cfg.Dir, p.Name, f.Name), p.Encrypted)
	if err != nil {
		return err
	}
	defer cleanup()
	maint, err := s.openPool(ctx, "postgres")
	if err != nil {
		return err
	}
	defer maint.Close()
	major, err := serverMajor(ctx, maint)
	if err != nil {
		return err
	}
	if _, err := maint.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return fmt.Errorf("backup: create database %s: %w", name, err)
	}
	cmd, err := s.pgCommand(ctx, major, "pg_restore", name, "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", plain)
	if err == nil {
		err = runTool(cmd, "pg_restore")
	}
	if err != nil {
		s.dropDatabase(context.WithoutCancel(ctx), name)
		return err
	}
	return nil
}

// decryptToTemp returns a plain copy of path in a private temporary folder (the
// file itself when not encrypted) and the func that removes it. A wrong identity
// fails here, before anything is created or dropped.
func (s *Service) decryptToTemp(path string, encrypted bool) (string, func(), error) {
	if !encrypted {
		return path, func() {}, nil
	}
	src, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("backup: open %s: %w", filepath.Base(path), err)
	}
	defer src.Close()
	r, err := decryptFrom(src, true, s.cfg.Identities)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "lectern-restore-")
	if err != nil {
		return "", nil, fmt.Errorf("backup: temporary folder: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	out := filepath.Join(dir, "database.dump")
	dst, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(dst, r)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("backup: decrypt %s: %w", filepath.Base(path), err)
	}
	return out, cleanup, nil
}

// readPDFArchive reads the PDF archive through (decrypting it) and counts its
// files; with into set it also extracts them there.
func (s *Service) readPDFArchive(p Point, into func(*tar.Header, io.Reader) error) (int, error) {
	f, ok := p.manifest.file(PDFsFile)
	if !ok {
		return 0, errors.New("backup: the point has no PDF archive")
	}
	src, err := os.Open(filepath.Join(s.cfg.Dir, p.Name, f.Name))
	if err != nil {
		return 0, fmt.Errorf("backup: open %s: %w", f.Name, err)
	}
	defer src.Close()
	r, err := decryptFrom(src, p.Encrypted, s.cfg.Identities)
	if err != nil {
		return 0, err
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return 0, fmt.Errorf("backup: %s is not a gzip archive: %w", f.Name, err)
	}
	tr := tar.NewReader(gz)
	n := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("backup: read %s: %w", f.Name, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		n++
		if into != nil {
			if err := into(hdr, tr); err != nil {
				return n, err
			}
		} else if _, err := io.Copy(io.Discard, tr); err != nil {
			return n, fmt.Errorf("backup: read %s: %w", f.Name, err)
		}
	}
}

// dropDatabase drops name, logging a failure (cleanup paths).
func (s *Service) dropDatabase(ctx context.Context, name string) {
	maint, err := s.openPool(ctx, "postgres")
	if err != nil {
		s.log.Error("backup: drop a scratch database", "database", name, "error", err)
		return
	}
	defer maint.Close()
	if _, err := maint.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		s.log.Error("backup: drop a scratch database", "database", name, "error", err)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
