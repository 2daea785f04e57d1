package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// backupPoint is a restore point as GET /api/admin/backups lists it.
type backupPoint struct {
	Name          string    `json:"name"`
	CreatedAt     time.Time `json:"created_at"`
	Kind          string    `json:"kind"`
	Size          int64     `json:"size_bytes"`
	Encrypted     bool      `json:"encrypted"`
	AppVersion    string    `json:"app_version"`
	SchemaVersion int       `json:"schema_version"`
	Compat        string    `json:"compat"`
	Restorable    bool      `json:"restorable"`
	Problem       string    `json:"problem"`
}

// SizeText is the point's size for people.
func (p backupPoint) SizeText() string {
	switch {
	case p.Size >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(p.Size)/(1<<30))
	case p.Size >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(p.Size)/(1<<20))
	case p.Size >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(p.Size)/(1<<10))
	}
	return fmt.Sprintf("%d B", p.Size)
}

type restoreStep struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Label is the step's name for people.
func (s restoreStep) Label() string {
	return strings.ReplaceAll(s.Name, "_", " ")
}

type restoreStatus struct {
	Point        string        `json:"point"`
	State        string        `json:"state"`
	CurrentStep  string        `json:"current_step"`
	Steps        []restoreStep `json:"steps"`
	SafetyBackup string        `json:"safety_backup"`
	StartedAt    string        `json:"started_at"`
	FinishedAt   string        `json:"finished_at"`
	Error        string        `json:"error"`
}

type lastBackup struct {
	State      string `json:"state"`
	Kind       string `json:"kind"`
	Point      string `json:"point"`
	FinishedAt string `json:"finished_at"`
	Error      string `json:"error"`
}

type backupsData struct {
	Points         []backupPoint  `json:"points"`
	SafetyBackups  []backupPoint  `json:"safety_backups"`
	Status         *restoreStatus `json:"status"`
	LastBackup     *lastBackup    `json:"last_backup"`
	RequestPending bool           `json:"restore_request_pending"`
	Maintenance    string         `json:"maintenance"`
}

// Busy reports whether the sidecar has work in hand (the page refreshes itself).
func (d *backupsData) Busy() bool {
	return d.RequestPending || (d.Status != nil && d.Status.State == "running") ||
		(d.LastBackup != nil && d.LastBackup.State == "running")
}

// backupsPage is the admin backups panel: the restore points, back up now,
// restore with the typed word, the safety backups and the last restore's steps.
// While the sidecar works the page refreshes every three seconds.
func (h *handler) backupsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &backupsData{}
	v.Title, v.Nav, v.Data = "Backups", "admin", d
	if err := s.c.get("/api/admin/backups", d); err != nil && v.Err == nil {
		v.Err = humanError(err)
	}
	if d.Busy() {
		v.Refresh = 3
	}
	h.show(w, r, "admin_backups", v)
}

func (h *handler) backupNow(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	if err := s.c.do(http.MethodPost, "/api/admin/backups/now", nil, nil); err != nil {
		h.actionFailed(w, r, err, "/admin/backups")
		return
	}
	done(w, r, "/admin/backups", "A backup is requested; it appears in the list once it is made, usually within a minute: reload this page.")
}

func (h *handler) backupRestore(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	body := map[string]string{"point": r.PostFormValue("point"), "confirm": r.PostFormValue("confirm")}
	if err := s.c.do(http.MethodPost, "/api/admin/backups/restore", body, nil); err != nil {
		h.actionFailed(w, r, err, "/admin/backups")
		return
	}
	done(w, r, "/admin/backups", "The restore of "+body["point"]+" is requested. Everyone, you included, must sign in again when it is done.")
}
