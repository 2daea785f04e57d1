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

	"github.com/lectern-research/lectern/host/internal/backup"
)

// TestServeWatchesBackupsOnTheEmbeddedDatabase is `make run`: with no
// DATABASE_URL and no signing key set, the server generates a development key and
// runs the backup loop itself, so "Back up now" makes a restore point without a
// second process; stopping the server stops the loop.
func TestServeWatchesBackupsOnTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	cfg := embeddedConfig(t)
	startHost(t, cfg)
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
	stop()
	require.False(t, backup.Watching(trigger), "the loop ends with the server")
}
