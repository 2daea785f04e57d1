package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/backup"
)

// TestServeWatchesBackupsOnTheEmbeddedDatabase is `make run`: with no
// DATABASE_URL and no signing key set, the server generates a development key and
// runs the backup loop itself, so "Back up now" makes a restore point without a
// second process; stopping the server stops the loop.
func TestServeWatchesBackupsOnTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	cfg := embeddedConfig(t)
	db, _ := startHost(t, cfg)
	log := slog.New(slog.DiscardHandler)
	require.NoError(t, ensureDevBackupKey(cfg, log))
	info, err := os.Stat(filepath.Join(cfg.DataDir, devBackupKeyFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key is the owner's alone")
	key := cfg.BackupSigningKey.Value()
	require.Len(t, key, 64)
	require.NoError(t, ensureDevBackupKey(cfg, log))
	require.Equal(t, key, cfg.BackupSigningKey.Value(), "the same key at every start")

	trigger := cfg.BackupTriggerFolder()
	require.False(t, backup.Watching(trigger))
	stop := watchBackups(context.Background(), cfg, log)
	require.Eventually(t, func() bool { return backup.Watching(trigger) }, time.Minute, 50*time.Millisecond)

	kinds := func() map[string]int {
		out := map[string]int{}
		entries, _ := os.ReadDir(cfg.BackupFolder())
		for _, e := range entries {
			var m struct {
				Kind string `json:"kind"`
			}
			b, err := os.ReadFile(filepath.Join(cfg.BackupFolder(), e.Name(), "manifest.json"))
			if err == nil && json.Unmarshal(b, &m) == nil {
				out[m.Kind]++
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return kinds()[backup.KindScheduled] == 1 }, 2*time.Minute, 200*time.Millisecond,
		"the first start makes a scheduled point at once")
	require.NoError(t, os.WriteFile(filepath.Join(trigger, backup.BackupNowFile), []byte("now\n"), 0o644))
	require.Eventually(t, func() bool { return kinds()[backup.KindManual] == 1 }, 2*time.Minute, 200*time.Millisecond,
		"Back up now makes a manual point")

	// A restore through the same loop, the server's own pool still open: the
	// database comes back whole, and the application's role can write the audit
	// log again but still not switch its rules off.
	ctx := context.Background()
	entries, err := os.ReadDir(cfg.BackupFolder())
	require.NoError(t, err)
	var point string
	for _, e := range entries {
		if e.IsDir() && e.Name()[0] != '.' {
			point = e.Name()
		}
	}
	req, err := json.Marshal(backup.RestoreRequest{RequestID: "r1", Point: point, RequestedBy: "test", RequestedAt: time.Now().UTC().Format(time.RFC3339)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(trigger, backup.RestoreRequestFile), req, 0o644))
	var st backup.Status
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(trigger, backup.RestoreStatusFile))
		return err == nil && json.Unmarshal(b, &st) == nil && st.RequestID == "r1" && st.State != backup.StateRunning
	}, 2*time.Minute, 200*time.Millisecond)
	require.Equal(t, backup.StateSucceeded, st.State, st.Error)
	require.Eventually(t, func() bool { return db.Pool.Ping(ctx) == nil }, time.Minute, 100*time.Millisecond)
	why, err := audit.Enforcement(ctx, db.Pool)
	require.NoError(t, err)
	require.Empty(t, why, "the restored audit log is not the application's to alter")
	_, err = db.Pool.Exec(ctx, `INSERT INTO audit_log (action, resource) VALUES ('test.after_restore', 'backup')`)
	require.NoError(t, err, "the application's role writes the restored audit log")
	_, err = db.Pool.Exec(ctx, `ALTER TABLE audit_log DISABLE RULE audit_log_no_delete`)
	require.Error(t, err, "and cannot switch its rules off")

	stop()
	require.False(t, backup.Watching(trigger), "the loop ends with the server")
}
