package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ViewConfig is what the app's read-only view needs.
type ViewConfig struct {
	// Dir is the backup folder, read only.
	Dir string
	// TriggerDir is the only folder the app writes (two sentinels).
	TriggerDir string
	// SigningKey authenticates manifests for the listing; nil lists every point
	// as not restorable.
	SigningKey []byte
	// SchemaVersion is the binary's newest migration.
	SchemaVersion int
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// View is the app's side: it lists points and the restore status, says whether
// the host is in maintenance, and writes the restore and "back up now" sentinels.
type View struct {
	cfg ViewConfig

	mu        sync.Mutex
	checkedAt time.Time
	restoring bool
}

// NewView returns the app's view of the backup folders.
func NewView(cfg ViewConfig) *View {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &View{cfg: cfg}
}

// Points lists the restore points, newest first.
func (v *View) Points() ([]Point, error) {
	return listPoints(v.cfg.Dir, v.cfg.SigningKey, v.cfg.SchemaVersion)
}

// Status is the last restore's status; nil when none ran.
func (v *View) Status() (*Status, error) { return readStatus(v.cfg.TriggerDir) }

// LastBackup is how the latest backup run went; nil when none ran.
func (v *View) LastBackup() (*LastBackup, error) {
	var lb LastBackup
	if err := readJSON(v.cfg.TriggerDir, LastBackupFile, &lb); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil //nolint:nilnil // no backup yet is not an error
		}
		return nil, err
	}
	return &lb, nil
}

// RequestPending reports whether a restore request waits for the sidecar.
func (v *View) RequestPending() bool {
	return exists(filepath.Join(v.cfg.TriggerDir, RestoreRequestFile))
}

// Maintenance returns the sentence users get while the host must not serve: a
// restore failed after its destructive step (the marker is looked at on every
// call), or a restore is replacing the database right now (the status file is
// read at most once a second). "" means serve as usual.
func (v *View) Maintenance() string {
	if v == nil || v.cfg.TriggerDir == "" {
		return ""
	}
	if exists(filepath.Join(v.cfg.TriggerDir, DestructiveFile)) {
		return "Lectern is in maintenance after a failed restore; an admin can recover it from the backups panel."
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if now := v.cfg.Now(); now.Sub(v.checkedAt) >= time.Second || now.Before(v.checkedAt) {
		v.restoring, v.checkedAt = v.readRestoring(), now
	}
	if v.restoring {
		return "Lectern is being restored from a backup; try again in a few minutes."
	}
	return ""
}

func (v *View) readRestoring() bool {
	st, err := readStatus(v.cfg.TriggerDir)
	return err == nil && st != nil && st.State == StateRunning
}

// Restore request errors, for the handler to map.
var (
	ErrNotConfirmed   = errors.New("backup: the confirmation word was not typed")
	ErrNotRestorable  = errors.New("backup: the point cannot be restored")
	ErrRestoreRunning = errors.New("backup: a restore is already requested or running")
	// ErrNoSidecar: no backup sidecar watches the trigger folder, so a request
	// left there would wait for nobody.
	ErrNoSidecar = errors.New("backup: no backup sidecar is watching the trigger folder")
)

// RequestRestore writes the restore sentinel for point, after checking the typed
// word, that the point exists, is signed and is not of a newer schema, and that
// no restore is pending. The sidecar checks it all again.
func (v *View) RequestRestore(point, confirm string, by uuid.UUID) (RestoreRequest, error) {
	if confirm != ConfirmWord {
		return RestoreRequest{}, ErrNotConfirmed
	}
	if _, _, ok := parsePointName(point); !ok || !exists(filepath.Join(v.cfg.Dir, point)) {
		return RestoreRequest{}, fmt.Errorf("%w: %q", ErrNoPoint, point)
	}
	p, _ := readPoint(v.cfg.Dir, point, v.cfg.SigningKey, v.cfg.SchemaVersion)
	if !p.Restorable {
		return RestoreRequest{}, fmt.Errorf("%w: %s", ErrNotRestorable, p.Problem)
	}
	if v.RequestPending() {
		return RestoreRequest{}, ErrRestoreRunning
	}
	if !Watching(v.cfg.TriggerDir) {
		return RestoreRequest{}, ErrNoSidecar
	}
	if st, err := v.Status(); err == nil && st != nil && st.State == StateRunning {
		return RestoreRequest{}, ErrRestoreRunning
	}
	req := RestoreRequest{RequestID: uuid.NewString(), Point: point, RequestedBy: by.String(), RequestedAt: stamp(v.cfg.Now())}
	if err := writeJSONAtomic(v.cfg.TriggerDir, RestoreRequestFile, req, 0o644); err != nil {
		return RestoreRequest{}, err
	}
	return req, nil
}

// RequestBackup writes the "back up now" sentinel, or says no sidecar watches.
func (v *View) RequestBackup() error {
	if !Watching(v.cfg.TriggerDir) {
		return ErrNoSidecar
	}
	return writeAtomic(v.cfg.TriggerDir, BackupNowFile, []byte(stamp(v.cfg.Now())+"\n"), 0o644)
}

// SafetyBackups are the safety points, newest first.
func SafetyBackups(points []Point) []Point {
	var out []Point
	for _, p := range points {
		if strings.HasPrefix(p.Name, safetyPrefix) {
			out = append(out, p)
		}
	}
	return out
}
