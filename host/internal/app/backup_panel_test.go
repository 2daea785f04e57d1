package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/backup"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
)

// backupPoint makes a real restore point in the app's backup folder, signed with
// the key the app derives from its ops key.
func backupPoint(t *testing.T, b *testBundle) string {
	t.Helper()
	_, dbURL := dbtest.NewDBWithURL(t)
	key, err := backup.SigningKey("", testOpsKey)
	require.NoError(t, err)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	svc, err := backup.New(backup.Config{Dir: b.app.Config.BackupFolder(), TriggerDir: b.app.Config.BackupTriggerFolder(),
		PDFDir: filepath.Join(t.TempDir(), "pdfs"), SigningKey: key, Logger: slog.New(slog.DiscardHandler)},
		backup.Database{URL: dbURL}, migs)
	require.NoError(t, err)
	name, err := svc.Create(context.Background(), backup.KindManual)
	require.NoError(t, err)
	return name
}

// TestBackupPanelRestoreNeedsAnAdminSession: the ops key cannot restore (401)
// nor can a user (403), and neither leaves a request; an admin who types RESTORE
// does, and the panel lists the point.
func TestBackupPanelRestoreNeedsAnAdminSession(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	require.NoError(t, os.MkdirAll(b.app.Config.BackupTriggerFolder(), 0o755))
	point := backupPoint(t, b)
	requestFile := filepath.Join(b.app.Config.BackupTriggerFolder(), backup.RestoreRequestFile)
	body := map[string]any{"point": point, "confirm": "RESTORE"}

	rec := b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", body: body,
		headers: map[string]string{"X-API-Key": testOpsKey}})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the ops key cannot restore: %s", rec.Body.String())
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/now", headers: map[string]string{"X-API-Key": testOpsKey}})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	b.user(t, "user@example.org", "user")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", body: body, cookie: b.signIn(t, "user@example.org")})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.NoFileExists(t, requestFile)

	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/backups", cookie: admin})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var overview backup.Overview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &overview))
	require.Len(t, overview.Points, 1)
	require.Equal(t, point, overview.Points[0].Name)
	require.True(t, overview.Points[0].Restorable, overview.Points[0].Problem)
	require.Equal(t, backup.CompatSame, overview.Points[0].Compat)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", cookie: admin,
		body: map[string]any{"point": point, "confirm": "restore"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "the word must be typed exactly")
	require.NoFileExists(t, requestFile)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", cookie: admin,
		body: map[string]any{"point": "20000101_000000", "confirm": "RESTORE"}})
	require.Equal(t, http.StatusNotFound, rec.Code)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", cookie: admin, body: body})
	require.Equal(t, http.StatusConflict, rec.Code, "no sidecar watches: %s", rec.Body.String())
	require.Contains(t, rec.Body.String(), "No backup service is running")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/now", cookie: admin})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.NoFileExists(t, requestFile)

	release, err := backup.ClaimTriggerFolder(b.app.Config.BackupTriggerFolder()) // as the sidecar does
	require.NoError(t, err)
	t.Cleanup(release)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", cookie: admin, body: body})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.FileExists(t, requestFile)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/restore", cookie: admin, body: body})
	require.Equal(t, http.StatusConflict, rec.Code, "one request at a time")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/backups/now", cookie: admin})
	require.Equal(t, http.StatusAccepted, rec.Code)
	require.FileExists(t, filepath.Join(b.app.Config.BackupTriggerFolder(), backup.BackupNowFile))
	require.Contains(t, b.auditActions(t), backup.ActionRestoreRequested)
}

// TestMaintenanceAfterDestructiveFailure: with the .destructive marker the host
// answers 503 with one sentence on user routes, and still serves health, the
// admin's identity and the backups panel.
func TestMaintenanceAfterDestructiveFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	trigger := b.app.Config.BackupTriggerFolder()
	require.NoError(t, os.MkdirAll(trigger, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(trigger, backup.DestructiveFile), []byte("failed\n"), 0o644))

	rec := b.do(t, req{method: http.MethodGet, path: "/api/papers", cookie: admin})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "maintenance", errorCode(t, rec))
	require.Contains(t, rec.Body.String(), "maintenance after a failed restore")
	for _, path := range []string{"/healthz", "/api/me", "/api/admin/backups", "/api/admin/backups/status"} {
		rec := b.do(t, req{method: http.MethodGet, path: path, cookie: admin})
		require.NotEqual(t, http.StatusServiceUnavailable, rec.Code, "%s stays open: %s", path, rec.Body.String())
	}
	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/backups", cookie: admin})
	var overview backup.Overview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &overview))
	require.NotEmpty(t, overview.Maintenance)
}
