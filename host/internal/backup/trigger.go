package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files of the trigger folder. The app writes only the first two; the sidecar
// writes the rest.
const (
	RestoreRequestFile = ".restore_request.json"
	BackupNowFile      = ".backup_now"
	RestoreStatusFile  = ".restore_status.json"
	LastBackupFile     = ".last_backup.json"
	DestructiveFile    = ".destructive"
	lockFile           = ".sidecar.lock"
)

// ConfirmWord is what an admin types to restore.
const ConfirmWord = "RESTORE"

// RestoreRequest is the sentinel the app writes and the sidecar consumes.
type RestoreRequest struct {
	RequestID   string `json:"request_id"`
	Point       string `json:"point"`
	RequestedBy string `json:"requested_by"`
	RequestedAt string `json:"requested_at"`
}

// Restore states.
const (
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateRefused   = "refused"
)

// Step statuses.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepDone    = "done"
	StepFailed  = "failed"
	StepSkipped = "skipped"
)

// Step is one step of a restore and how it went.
type Step struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Status is .restore_status.json: the last restore's progress, written by the
// sidecar at every step.
type Status struct {
	RequestID    string `json:"request_id"`
	Point        string `json:"point"`
	State        string `json:"state"`
	CurrentStep  string `json:"current_step"`
	Steps        []Step `json:"steps"`
	SafetyBackup string `json:"safety_backup,omitempty"`
	StartedAt    string `json:"started_at"`
	FinishedAt   string `json:"finished_at,omitempty"`
	// Error is one sentence for the admin: what happened and what to do.
	Error string `json:"error,omitempty"`
	// Destructive is true once the live database was touched.
	Destructive bool `json:"destructive"`
}

// LastBackup is .last_backup.json: how the latest backup run went.
type LastBackup struct {
	State      string `json:"state"`
	Kind       string `json:"kind"`
	Point      string `json:"point,omitempty"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at,omitempty"`
	Error      string `json:"error,omitempty"`
}

// writeJSONAtomic writes v as JSON to dir/name through a temporary file and a
// rename, so a reader sees the old content or the new, never half.
func writeJSONAtomic(dir, name string, v any, perm os.FileMode) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("backup: encode %s: %w", name, err)
	}
	return writeAtomic(dir, name, append(raw, '\n'), perm)
}

func writeAtomic(dir, name string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(dir, ".tmp-"+name+"-*")
	if err != nil {
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("backup: write %s: %w", name, err)
	}
	return nil
}

// readJSON reads dir/name into v; fs.ErrNotExist when the file is absent.
func readJSON(dir, name string, v any) error {
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("backup: %s is not valid JSON: %w", name, err)
	}
	return nil
}

// readStatus reads the restore status; nil when no restore ever ran.
func readStatus(dir string) (*Status, error) {
	var st Status
	if err := readJSON(dir, RestoreStatusFile, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil //nolint:nilnil // no restore yet is not an error
		}
		return nil, err
	}
	return &st, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
