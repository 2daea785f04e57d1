package backup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Point is a restore point as the folder and its manifest describe it.
type Point struct {
	// Name is the folder's name: YYYYMMDD_HHMMSS or safety_YYYYMMDD_HHMMSS.
	Name      string    `json:"name"`
	Time      time.Time `json:"created_at"`
	Kind      string    `json:"kind"`
	Size      int64     `json:"size_bytes"`
	Encrypted bool      `json:"encrypted"`
	// AppVersion and SchemaVersion come from the manifest (empty and 0 when it
	// cannot be read).
	AppVersion    string `json:"app_version"`
	SchemaVersion int    `json:"schema_version"`
	// Compat is same, older, newer or unknown against this binary's schema.
	Compat string `json:"compat"`
	// Restorable is true when the manifest is signed with this host's key and the
	// schema is not newer; Problem says why not.
	Restorable bool   `json:"restorable"`
	Problem    string `json:"problem,omitempty"`

	manifest *Manifest
}

// listPoints reads every point folder of dir, newest first. A point whose
// manifest is unreadable or wrongly signed is listed with its Problem.
func listPoints(dir string, key []byte, schema int) ([]Point, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("backup: list the backup folder: %w", err)
	}
	var out []Point
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if p, ok := readPoint(dir, e.Name(), key, schema); ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}

// readPoint describes one point folder; false when name is not a point's.
func readPoint(dir, name string, key []byte, schema int) (Point, bool) {
	t, kind, ok := parsePointName(name)
	if !ok {
		return Point{}, false
	}
	p := Point{Name: name, Time: t, Kind: kind, Compat: CompatUnknown}
	pdir := filepath.Join(dir, name)
	p.Size = folderSize(pdir)
	m, err := readManifest(pdir, key)
	if err != nil {
		p.Problem = problemOf(err)
		return p, true
	}
	p.manifest = m
	if p.Kind == "" {
		p.Kind = m.Kind
	}
	p.Encrypted, p.AppVersion, p.SchemaVersion = m.Encrypted, m.AppVersion, m.SchemaVersion
	p.Compat = compat(m.SchemaVersion, schema)
	switch p.Compat {
	case CompatNewer:
		p.Problem = "This point was made by a newer Lectern (schema " + fmt.Sprint(m.SchemaVersion) + "); upgrade Lectern first."
	case CompatUnknown:
		p.Problem = "This point does not say which schema it holds, so it cannot be restored here."
	default:
		p.Restorable = true
	}
	return p, true
}

// problemOf turns a manifest error into one sentence for the panel.
func problemOf(err error) string {
	switch {
	case errors.Is(err, ErrBadSignature):
		return "The point's signature does not match: it was changed, or made with another signing key; it cannot be restored."
	case errors.Is(err, fs.ErrNotExist):
		return "The point has no manifest: it is incomplete and cannot be restored."
	}
	return "The point's manifest cannot be read, so it cannot be restored."
}

func folderSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// checkChecksums compares every file the manifest lists with its recorded size
// and SHA-256.
func checkChecksums(pdir string, m *Manifest) error {
	for _, f := range m.Files {
		size, sum, err := hashFile(filepath.Join(pdir, f.Name))
		if err != nil {
			return fmt.Errorf("backup: %s is missing from the point: %w", f.Name, err)
		}
		if size != f.Size || !strings.EqualFold(sum, f.SHA256) {
			return fmt.Errorf("backup: %s does not match its checksum in the manifest (the file was changed or damaged)", f.Name)
		}
	}
	return nil
}

// ErrNoPoint means the named point does not exist.
var ErrNoPoint = errors.New("backup: no such restore point")

// openPoint reads, authenticates and checksums the named point.
func openPoint(dir, name string, key []byte, schema int) (Point, error) {
	if _, _, ok := parsePointName(name); !ok || !exists(filepath.Join(dir, name)) {
		return Point{}, fmt.Errorf("%w: %q", ErrNoPoint, name)
	}
	pdir := filepath.Join(dir, name)
	m, err := readManifest(pdir, key)
	if err != nil {
		return Point{}, err
	}
	if err := checkChecksums(pdir, m); err != nil {
		return Point{}, err
	}
	p, _ := readPoint(dir, name, key, schema)
	return p, nil
}
