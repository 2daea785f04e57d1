package backup

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// Audit actions of the backups panel.
const (
	ActionRestoreRequested = "admin.backup.restore_requested"
	ActionBackupRequested  = "admin.backup.backup_requested"
)

// API is the admin backups panel's HTTP surface. Every route is mounted with
// auth.AdminSession: an admin's browser session, never the ops key.
type API struct {
	view  *View
	audit *audit.Log
	log   *slog.Logger
}

// NewAPI returns the backups API over view.
func NewAPI(view *View, auditLog *audit.Log, logger *slog.Logger) *API {
	return &API{view: view, audit: auditLog, log: logger}
}

// Overview is the panel's data.
type Overview struct {
	Points []Point `json:"points"`
	// SafetyBackups are the safety points (the way back after a failed restore).
	SafetyBackups  []Point     `json:"safety_backups"`
	Status         *Status     `json:"status"`
	LastBackup     *LastBackup `json:"last_backup"`
	RequestPending bool        `json:"restore_request_pending"`
	// Maintenance is the sentence users get while the host refuses to serve; ""
	// when it serves.
	Maintenance string `json:"maintenance"`
}

// List answers the restore points, the safety backups, the restore status and
// whether the host is in maintenance.
func (a *API) List(w http.ResponseWriter, r *http.Request) {
	points, err := a.view.Points()
	if err != nil {
		httpx.Err(w, r, httpx.Unavailable("The backup folder cannot be read; check that it is mounted.", err))
		return
	}
	if points == nil {
		points = []Point{}
	}
	st, err := a.view.Status()
	if err != nil {
		a.log.Warn("backup: unreadable restore status", "error", err)
	}
	last, err := a.view.LastBackup()
	if err != nil {
		a.log.Warn("backup: unreadable last backup status", "error", err)
	}
	safety := SafetyBackups(points)
	if safety == nil {
		safety = []Point{}
	}
	httpx.JSON(w, http.StatusOK, Overview{Points: points, SafetyBackups: safety, Status: st, LastBackup: last,
		RequestPending: a.view.RequestPending(), Maintenance: a.view.Maintenance()})
}

// Status answers the restore status alone (the panel polls it while a restore
// runs); {"status": null} when no restore ran.
func (a *API) Status(w http.ResponseWriter, r *http.Request) {
	st, err := a.view.Status()
	if err != nil {
		httpx.Err(w, r, httpx.Unavailable("The restore status cannot be read; check the backup sidecar.", err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"status": st, "maintenance": a.view.Maintenance()})
}

// errNoSidecar answers a request no backup sidecar would act on.
var errNoSidecar = &httpx.Error{Status: http.StatusConflict, Code: "no_backup_sidecar",
	Detail: "No backup service is running for this installation, so nothing would act on the request: start `lectern backup watch` beside the server (on the built-in database `lectern serve` runs it itself), then try again."}

// BackupNow asks the sidecar for a manual restore point.
func (a *API) BackupNow(w http.ResponseWriter, r *http.Request) {
	err := a.view.RequestBackup()
	if errors.Is(err, ErrNoSidecar) {
		httpx.Err(w, r, errNoSidecar)
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Unavailable("The backup request could not be written; check that the trigger folder is mounted and writable.", err))
		return
	}
	a.record(r, ActionBackupRequested, map[string]any{})
	httpx.JSON(w, http.StatusAccepted, map[string]any{"requested": true})
}

type restoreBody struct {
	Point   string `json:"point"`
	Confirm string `json:"confirm"`
}

// Restore asks the sidecar to restore a point; the admin must type RESTORE.
func (a *API) Restore(w http.ResponseWriter, r *http.Request) {
	var body restoreBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	req, err := a.view.RequestRestore(body.Point, body.Confirm, auth.CallerFrom(r.Context()).UserID)
	switch {
	case errors.Is(err, ErrNotConfirmed):
		httpx.Err(w, r, httpx.Invalid("Type RESTORE to confirm the restore.",
			httpx.FieldError{Field: "confirm", Message: "must be the word RESTORE"}))
	case errors.Is(err, ErrNoPoint):
		httpx.Err(w, r, httpx.NotFound("There is no restore point of that name."))
	case errors.Is(err, ErrNotRestorable):
		p, _ := readPoint(a.view.cfg.Dir, body.Point, a.view.cfg.SigningKey, a.view.cfg.SchemaVersion)
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "not_restorable", Detail: p.Problem})
	case errors.Is(err, ErrNoSidecar):
		httpx.Err(w, r, errNoSidecar)
	case errors.Is(err, ErrRestoreRunning):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "restore_running",
			Detail: "A restore is already requested or running; wait for it to finish."})
	case err != nil:
		httpx.Err(w, r, httpx.Unavailable("The restore request could not be written; check that the trigger folder is mounted and writable.", err))
	default:
		a.record(r, ActionRestoreRequested, map[string]any{"point": req.Point, "request_id": req.RequestID})
		httpx.JSON(w, http.StatusAccepted, req)
	}
}

func (a *API) record(r *http.Request, action string, meta map[string]any) {
	if a.audit == nil {
		return
	}
	if ip := auth.ClientIP(r.Context()); ip.IsValid() {
		meta["ip"] = ip.String()
	}
	a.audit.Record(r.Context(), auth.CallerFrom(r.Context()).UserID, action, r.URL.Path, meta)
}
