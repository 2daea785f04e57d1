package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/store"
)

// SecretNames are the variables a point's secrets archive may hold, in order.
var SecretNames = []string{"SERVICE_API_KEY", "SERVICE_CONFIG_KEY", "SERVICE_MODEL_HMAC_KEY", "GATEWAY_SALT_KEY", "DATABASE_PASSWORD"}

// Create makes one restore point of kind (scheduled, manual or safety) and returns
// its folder name. The point is written under a hidden folder and renamed into
// place once its manifest is signed, so a crash never leaves a point that looks
// complete.
func (s *Service) Create(ctx context.Context, kind string) (string, error) {
	now := s.cfg.Now().UTC()
	name, err := s.freeName(now, kind)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.cfg.Dir, 0o700); err != nil {
		return "", fmt.Errorf("backup: create the backup folder: %w", err)
	}
	runID := uuid.NewString()
	tmp := filepath.Join(s.cfg.Dir, ".partial_"+name+"_"+runID)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("backup: create the point's folder: %w", err)
	}
	defer os.RemoveAll(tmp)

	m := &Manifest{Format: manifestFormat, Timestamp: nameTimestamp(name), RunID: runID, Kind: kind,
		AppVersion: s.cfg.AppVersion, CreatedAt: now.Format(time.RFC3339), Encrypted: len(s.cfg.Recipients) > 0}
	if err := s.dumpDatabase(ctx, tmp, m); err != nil {
		return "", err
	}
	if err := s.writeArchive(tmp, PDFsFile, func(w io.Writer) error { return tarFolder(w, s.cfg.PDFDir) }); err != nil {
		return "", fmt.Errorf("backup: archive the PDFs: %w", err)
	}
	if m.Encrypted {
		if err := s.writeArchive(tmp, SecretsFile, func(w io.Writer) error { return tarSecrets(w, s.cfg.Secrets) }); err != nil {
			return "", fmt.Errorf("backup: archive the secrets: %w", err)
		}
	}
	if m.Files, err = describeFiles(tmp); err != nil {
		return "", err
	}
	if err := writeManifest(tmp, m, s.cfg.SigningKey); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, filepath.Join(s.cfg.Dir, name)); err != nil {
		return "", fmt.Errorf("backup: move the point into place: %w", err)
	}
	s.log.Info("backup: restore point written", "point", name, "kind", kind, "encrypted", m.Encrypted)
	return name, nil
}

// freeName is the point's folder name for now, one second later while taken.
func (s *Service) freeName(now time.Time, kind string) (string, error) {
	for range 10 {
		name := now.Format(timestampLayout)
		if kind == KindSafety {
			name = safetyPrefix + name
		}
		if !exists(filepath.Join(s.cfg.Dir, name)) {
			return name, nil
		}
		now = now.Add(time.Second)
	}
	return "", errors.New("backup: too many restore points in the same seconds; try again")
}

func nameTimestamp(name string) string {
	if len(name) > len(safetyPrefix) && name[:len(safetyPrefix)] == safetyPrefix {
		return name[len(safetyPrefix):]
	}
	return name
}

// dumpDatabase runs pg_dump in a snapshot exported by a repeatable-read
// transaction that also counts every table's rows and reads the schema version,
// so the manifest describes exactly the rows the dump holds.
func (s *Service) dumpDatabase(ctx context.Context, dir string, m *Manifest) error {
	name, _ := databaseName(s.db.URL)
	pool, err := s.openPool(ctx, name)
	if err != nil {
		return err
	}
	defer pool.Close()
	major, err := serverMajor(ctx, pool)
	if err != nil {
		return err
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("backup: begin the snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	var snapshot string
	if err := tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&snapshot); err != nil {
		return fmt.Errorf("backup: export the snapshot: %w", err)
	}
	if m.Tables, err = tableCounts(ctx, tx); err != nil {
		return err
	}
	st, err := store.SchemaStatusTx(ctx, tx)
	if err != nil {
		return err
	}
	m.SchemaVersion = st
	cmd, err := s.pgCommand(ctx, major, "pg_dump", name, "--format=custom", "--no-owner", "--no-privileges", "--snapshot="+snapshot)
	if err != nil {
		return err
	}
	return s.writeArchive(dir, DatabaseFile, func(w io.Writer) error {
		cmd.Stdout = w
		return runTool(cmd, "pg_dump")
	})
}

// writeArchive writes base (plus .age when encrypting) into dir through produce.
func (s *Service) writeArchive(dir, base string, produce func(io.Writer) error) error {
	fileName := base
	if len(s.cfg.Recipients) > 0 {
		fileName += encryptedSuffix
	}
	f, err := os.OpenFile(filepath.Join(dir, fileName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: create %s: %w", fileName, err)
	}
	defer f.Close()
	enc, err := encryptTo(f, s.cfg.Recipients)
	if err != nil {
		return err
	}
	if err := produce(enc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("backup: finish %s: %w", fileName, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup: write %s: %w", fileName, err)
	}
	return f.Close()
}

// describeFiles lists the archives of dir with their sizes and SHA-256 as stored.
func describeFiles(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("backup: list the point: %w", err)
	}
	var out []File
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == ManifestFile || e.Name() == ManifestHMACFile {
			continue
		}
		size, sum, err := hashFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: e.Name(), Size: size, SHA256: sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", fmt.Errorf("backup: read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("backup: read %s: %w", filepath.Base(path), err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// tarFolder writes a gzipped tar of root's regular files, paths relative to it.
// A missing root gives an empty archive (no PDF uploaded yet).
func tarFolder(w io.Writer, root string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return addFile(tw, filepath.ToSlash(rel), path, info)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func addFile(tw *tar.Writer, name, path string, info fs.FileInfo) error {
	hdr := &tar.Header{Name: name, Mode: int64(info.Mode().Perm()), Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(tw, f)
	return err
}

// tarSecrets writes one top-level file per set secret, holding its value with no
// trailing newline.
func tarSecrets(w io.Writer, secrets map[string]string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, name := range SecretNames {
		v := secrets[name]
		if v == "" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(v)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, v); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
