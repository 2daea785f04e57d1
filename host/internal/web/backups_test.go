package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBackupsPanelRenders: the panel shows a restore form (typed word) only for a
// restorable point, the problem of the others, the safety backup, the steps of
// the last restore and the maintenance sentence.
func TestBackupsPanelRenders(t *testing.T) {
	t.Parallel()
	rd, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	safety := backupPoint{Name: "safety_20261127_040000", CreatedAt: at.Add(time.Hour), Kind: "safety", Size: 3 << 20, Compat: "same", Restorable: true}
	d := &backupsData{
		Points: []backupPoint{
			safety,
			{Name: "20261127_030000", CreatedAt: at, Kind: "scheduled", Size: 2048, Compat: "same", Restorable: true, Encrypted: true, SchemaVersion: 20},
			{Name: "20261126_030000", CreatedAt: at.Add(-24 * time.Hour), Kind: "scheduled", Compat: "newer", SchemaVersion: 99,
				Problem: "This point was made by a newer Lectern (schema 99); upgrade Lectern first."},
		},
		SafetyBackups: []backupPoint{safety},
		LastBackup:    &lastBackup{State: "succeeded", Kind: "manual", Point: "20261127_030000", FinishedAt: "2026-11-27T03:00:04Z"},
		Status: &restoreStatus{Point: "20261127_030000", State: "failed", SafetyBackup: safety.Name,
			Steps:     []restoreStep{{"safety_backup", "done"}, {"swap", "done"}, {"revoke_credentials", "skipped"}},
			StartedAt: "2026-11-27T05:00:00Z", FinishedAt: "2026-11-27T05:01:00Z",
			Error: "The restore failed at step swap after the live database was replaced, so Lectern stays in maintenance; restore the safety backup safety_20261127_040000 from the backups panel."},
		Maintenance: "Lectern is in maintenance after a failed restore; an admin can recover it from the backups panel.",
	}
	rec := httptest.NewRecorder()
	rd.render(rec, httptest.NewRequest(http.MethodGet, "/admin/backups", nil), http.StatusOK, "admin_backups", &view{Me: &me{Role: "admin"}, Data: d})
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Equal(t, 2, strings.Count(body, `action="/admin/backups/restore"`), "a form for each restorable point only")
	require.Contains(t, body, `name="confirm" placeholder="RESTORE"`)
	require.Contains(t, body, "upgrade Lectern first")
	require.Contains(t, body, "in maintenance after a failed restore")
	require.Contains(t, body, "revoke credentials")
	require.Contains(t, body, "<code>safety_20261127_040000</code>, ")
	require.Contains(t, body, "3.0 MB")
	require.Contains(t, body, `action="/admin/backups/now"`)
	require.NotContains(t, body, "T03:00:04Z", "times read as the table's, not as stamps")
	require.NotContains(t, body, "T05:01:00Z")
	require.Contains(t, body, "27 Nov 2026 03:00 UTC")
	require.False(t, d.Busy())
	d.Status.State = "running"
	require.True(t, d.Busy(), "the page refreshes while a restore runs")
}
