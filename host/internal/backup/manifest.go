package backup

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Names of a point's files (the contract with scripts/restore-offhost).
const (
	ManifestFile     = "manifest.json"
	ManifestHMACFile = "manifest.json.hmac"
	DatabaseFile     = "database.dump"
	PDFsFile         = "pdfs.tar.gz"
	SecretsFile      = "secrets.tar.gz"
	encryptedSuffix  = ".age"
	manifestFormat   = 1
	timestampLayout  = "20060102_150405"
	safetyPrefix     = "safety_"
)

// Kinds of restore point.
const (
	KindScheduled = "scheduled"
	KindManual    = "manual"
	KindSafety    = "safety"
)

// Manifest describes a restore point. Its JSON is the contract with
// scripts/restore-offhost; Tables is Lectern's addition for the test restore.
type Manifest struct {
	Format        int    `json:"format"`
	Timestamp     string `json:"timestamp"`
	RunID         string `json:"run_id"`
	Kind          string `json:"kind"`
	AppVersion    string `json:"app_version"`
	SchemaVersion int    `json:"schema_version"`
	CreatedAt     string `json:"created_at"`
	Encrypted     bool   `json:"encrypted"`
	Files         []File `json:"files"`
	// Tables holds the row count of every table ("schema.table") in the
	// snapshot the dump was taken from; `backup verify` compares the restored
	// database with it.
	Tables map[string]int64 `json:"tables"`
}

// File is one archive of a point, as stored (after encryption).
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ErrBadSignature means a manifest's HMAC does not match: the point was changed
// or signed with another key. Such a point is always refused.
var ErrBadSignature = errors.New("backup: the manifest's signature does not match (the point was changed, or signed with another key)")

// SigningKey is the key of the manifest's HMAC: the bytes of BACKUP_SIGNING_KEY
// when set, else SHA-256("backup-signing:" + SERVICE_API_KEY). With neither there
// is no key and the caller must refuse to sign or trust a point.
func SigningKey(backupSigningKey, serviceAPIKey string) ([]byte, error) {
	if backupSigningKey != "" {
		return []byte(backupSigningKey), nil
	}
	if serviceAPIKey == "" {
		return nil, errors.New("backup: no signing key: set BACKUP_SIGNING_KEY (or SERVICE_API_KEY)")
	}
	sum := sha256.Sum256([]byte("backup-signing:" + serviceAPIKey))
	return sum[:], nil
}

// sign returns the .hmac file's content for manifest bytes: lowercase hex and "\n".
func sign(key, manifest []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write(manifest)
	return []byte(hex.EncodeToString(mac.Sum(nil)) + "\n")
}

// readManifest reads and, with key, authenticates a point's manifest. A missing or
// wrong signature is ErrBadSignature.
func readManifest(dir string, key []byte) (*Manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("backup: read manifest: %w", err)
	}
	if key != nil {
		got, err := os.ReadFile(filepath.Join(dir, ManifestHMACFile))
		if err != nil {
			return nil, fmt.Errorf("%w: no %s", ErrBadSignature, ManifestHMACFile)
		}
		want := sign(key, raw)
		if !hmac.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			return nil, ErrBadSignature
		}
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("backup: manifest is not valid JSON: %w", err)
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("backup: manifest format %d is not one this version reads (%d)", m.Format, manifestFormat)
	}
	if err := m.checkFiles(); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkFiles enforces the layout: plain file names, a database dump, and
// encryption all or none.
func (m *Manifest) checkFiles() error {
	hasDB := false
	for _, f := range m.Files {
		if f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return fmt.Errorf("backup: manifest names a file outside its point: %q", f.Name)
		}
		if strings.HasSuffix(f.Name, encryptedSuffix) != m.Encrypted {
			return fmt.Errorf("backup: %s does not match the manifest's encrypted=%t (all archives or none are encrypted)", f.Name, m.Encrypted)
		}
		if strings.TrimSuffix(f.Name, encryptedSuffix) == DatabaseFile {
			hasDB = true
		}
	}
	if !hasDB {
		return errors.New("backup: the manifest lists no database dump")
	}
	return nil
}

// file returns the manifest's entry for base (a name without .age).
func (m *Manifest) file(base string) (File, bool) {
	for _, f := range m.Files {
		if strings.TrimSuffix(f.Name, encryptedSuffix) == base {
			return f, true
		}
	}
	return File{}, false
}

// writeManifest writes manifest.json and its signature into dir.
func writeManifest(dir string, m *Manifest, key []byte) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("backup: encode manifest: %w", err)
	}
	raw = append(raw, '\n')
	if err := writeFileSync(filepath.Join(dir, ManifestFile), raw, 0o600); err != nil {
		return err
	}
	return writeFileSync(filepath.Join(dir, ManifestHMACFile), sign(key, raw), 0o600)
}

// Compatibility of a point's schema with this binary's.
const (
	CompatSame    = "same"
	CompatOlder   = "older"
	CompatNewer   = "newer"
	CompatUnknown = "unknown"
)

// compat compares a point's schema version with the binary's.
func compat(point, current int) string {
	switch {
	case point <= 0 || current <= 0:
		return CompatUnknown
	case point == current:
		return CompatSame
	case point < current:
		return CompatOlder
	}
	return CompatNewer
}

// parsePointName returns the time and kind a point folder's name says, and false
// for a folder that is not a point.
func parsePointName(name string) (time.Time, string, bool) {
	kind, ts := "", name
	if rest, ok := strings.CutPrefix(name, safetyPrefix); ok {
		kind, ts = KindSafety, rest
	}
	t, err := time.Parse(timestampLayout, ts)
	if err != nil || t.Format(timestampLayout) != ts {
		return time.Time{}, "", false
	}
	return t.UTC(), kind, true
}

// writeFileSync writes data to path and flushes it to disk.
func writeFileSync(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("backup: write %s: %w", filepath.Base(path), err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("backup: write %s: %w", filepath.Base(path), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("backup: write %s: %w", filepath.Base(path), err)
	}
	return f.Close()
}
