package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestBackupCommands runs `lectern backup now`, `list --json`, `verify` and
// `prune` against a real database with encryption on: the point is listed as
// encrypted and compatible, and verifies with the identity file.
func TestBackupCommands(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewDBWithURL(t)
	data := t.TempDir()
	id, err := age.GenerateX25519Identity()
	require.NoError(t, err)
	idFile := filepath.Join(data, "backup.key")
	require.NoError(t, os.WriteFile(idFile, []byte(id.String()+"\n"), 0o600))
	env := lookup(map[string]string{
		"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": data,
		"SERVICE_API_KEY":                  goodAPIKey,
		"LECTERN_BACKUP_AGE_RECIPIENTS":    id.Recipient().String(),
		"LECTERN_BACKUP_AGE_IDENTITY_FILE": idFile,
		"LECTERN_BACKUP_KEEP_LAST":         "1",
		"LECTERN_BACKUP_MAX_AGE":           "0",
	})
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, Run(context.Background(), append([]string{"backup"}, args...), env, &stdout, &stderr), stderr.String())
		return stdout.String()
	}
	point := strings.TrimSpace(run("now"))
	require.DirExists(t, filepath.Join(data, "backups", point))

	var points []struct {
		Name       string `json:"name"`
		Kind       string `json:"kind"`
		Encrypted  bool   `json:"encrypted"`
		Compat     string `json:"compat"`
		Restorable bool   `json:"restorable"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("list", "--json")), &points))
	require.Len(t, points, 1)
	require.Equal(t, point, points[0].Name)
	require.Equal(t, "manual", points[0].Kind)
	require.True(t, points[0].Encrypted)
	require.Equal(t, "same", points[0].Compat)
	require.True(t, points[0].Restorable)

	require.Contains(t, run("verify", point), point+": verified:")
	require.Empty(t, run("prune"), "one point is never pruned")

	var stderr bytes.Buffer
	require.Equal(t, 1, Run(context.Background(), []string{"backup", "verify", "20000101_000000"}, env, &bytes.Buffer{}, &stderr))
	require.Contains(t, stderr.String(), "no such restore point")
	require.Equal(t, 2, Run(context.Background(), []string{"backup", "restore-everything"}, env, &bytes.Buffer{}, &bytes.Buffer{}))
}
