package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// Keys with enough length and entropy for production.
const (
	goodAPIKey    = "7f3a9c1e5b2d8f4a6c0e9b3d7a1f5c8e2b6d0a4f"
	goodConfigKey = "c2e8a4f6b0d9e3a7f1c5b8d2e6a0f4c9b3d7e1a5"
	goodHMACKey   = "9d1f5b3e7a0c4f8b2e6d0a9c3f7b1e5d8a2c6f0b"
)

func productionEnv(overrides map[string]string) map[string]string {
	env := map[string]string{
		"ENVIRONMENT":            "production",
		"SERVICE_API_KEY":        goodAPIKey,
		"SERVICE_CONFIG_KEY":     goodConfigKey,
		"SERVICE_MODEL_HMAC_KEY": goodHMACKey,
		"DATABASE_URL":           "postgres://unused.invalid/lectern",
	}
	for k, v := range overrides {
		if v == "<unset>" {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	return env
}

func lookup(env map[string]string) Env {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// syncBuffer lets a test read what a running command has logged so far.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestProductionRefusesToStart(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("model-signing:" + goodAPIKey))
	derived := hex.EncodeToString(sum[:])

	cases := []struct {
		name     string
		env      map[string]string
		variable string
		rule     string
	}{
		{"api key missing", map[string]string{"SERVICE_API_KEY": "<unset>"}, "SERVICE_API_KEY", "required"},
		{"api key short", map[string]string{"SERVICE_API_KEY": "a1b2c3d4e5f6a7b8c9d0"}, "SERVICE_API_KEY", "at least 32 characters"},
		{"config key missing", map[string]string{"SERVICE_CONFIG_KEY": "<unset>"}, "SERVICE_CONFIG_KEY", "required"},
		{"hmac key missing", map[string]string{"SERVICE_MODEL_HMAC_KEY": "<unset>"}, "SERVICE_MODEL_HMAC_KEY", "required"},
		{"hmac key short", map[string]string{"SERVICE_MODEL_HMAC_KEY": "9d1f5b3e7a0c4f8b"}, "SERVICE_MODEL_HMAC_KEY", "at least 32 characters"},
		{"hmac key is the api key", map[string]string{"SERVICE_MODEL_HMAC_KEY": goodAPIKey}, "SERVICE_MODEL_HMAC_KEY", "derived from SERVICE_API_KEY"},
		{"hmac key derived from the api key", map[string]string{"SERVICE_MODEL_HMAC_KEY": derived}, "SERVICE_MODEL_HMAC_KEY", "derived from SERVICE_API_KEY"},
		{"DEV_MODE", map[string]string{"DEV_MODE": "true", "DEV_AUTH_BYPASS": "false", "DEV_ERROR_DETAIL": "false", "DEV_CORS_OPEN": "false", "DEV_SMTP_LOG_ONLY": "false", "DEV_CRYPTO_RELAXED": "false"}, "DEV_MODE", "must not be true"},
		{"DEV_AUTH_BYPASS", map[string]string{"DEV_AUTH_BYPASS": "true"}, "DEV_AUTH_BYPASS", "must not be true"},
		{"DEV_ERROR_DETAIL", map[string]string{"DEV_ERROR_DETAIL": "1"}, "DEV_ERROR_DETAIL", "must not be true"},
		{"DEV_CORS_OPEN", map[string]string{"DEV_CORS_OPEN": "yes"}, "DEV_CORS_OPEN", "must not be true"},
		{"DEV_SMTP_LOG_ONLY", map[string]string{"DEV_SMTP_LOG_ONLY": "on"}, "DEV_SMTP_LOG_ONLY", "must not be true"},
		{"DEV_CRYPTO_RELAXED", map[string]string{"DEV_CRYPTO_RELAXED": "TRUE"}, "DEV_CRYPTO_RELAXED", "must not be true"},
		{"empty SMTP_HOST", map[string]string{"SMTP_HOST": ""}, "SMTP_HOST", "empty"},
		{"empty SMTP_PASS", map[string]string{"SMTP_PASS": ""}, "SMTP_PASS", "empty"},
	}
	line := regexp.MustCompile(`^lectern: config: ([A-Z_]+): (.+)$`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), []string{"serve"}, lookup(productionEnv(tc.env)), &stdout, &stderr)
			require.Equal(t, 1, code)
			require.Empty(t, stdout.String())

			out := strings.TrimSpace(stderr.String())
			lines := strings.Split(out, "\n")
			require.Len(t, lines, 1, "one refusal, one line: %q", out)
			m := line.FindStringSubmatch(lines[0])
			require.NotNil(t, m, "the line names the variable and the rule: %q", lines[0])
			require.Equal(t, tc.variable, m[1])
			require.Contains(t, m[2], tc.rule)
			for _, secret := range []string{goodAPIKey, goodConfigKey, goodHMACKey} {
				require.NotContains(t, out, secret, "a refusal never prints a secret")
			}
		})
	}

	t.Run("a valid production config gets past the checks", func(t *testing.T) {
		t.Parallel()
		var stderr bytes.Buffer
		code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, lookup(productionEnv(nil)), &bytes.Buffer{}, &stderr)
		require.Equal(t, 1, code, "it fails later, on the unreachable database")
		require.NotContains(t, stderr.String(), "lectern: config:")
		require.Contains(t, stderr.String(), "connect to database")
	})
}

func TestMigrateEmptyDatabaseThenAgain(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	env := lookup(map[string]string{"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": t.TempDir()})

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Run(context.Background(), []string{"migrate"}, env, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "applied 0001_init.sql")
	require.Contains(t, stdout.String(), "applied 0002_reown_legacy_rows.sql")

	latest := latestMigration(t)
	stdout.Reset()
	require.Equal(t, 0, Run(context.Background(), []string{"migrate"}, env, &stdout, &stderr), stderr.String())
	require.Equal(t, fmt.Sprintf("schema is current at version %d; nothing to apply\n", latest), stdout.String())

	stdout.Reset()
	require.Equal(t, 0, Run(context.Background(), []string{"migrate", "--status"}, env, &stdout, &stderr))
	require.Equal(t, fmt.Sprintf("schema version %d of %d\n", latest, latest), stdout.String())
}

func TestServeRefusesASchemaItCannotMigrate(t *testing.T) {
	t.Parallel()
	pool, dbURL := dbtest.NewEmptyDB(t)
	// A table in the way makes 0001_init.sql fail part-way.
	_, err := pool.Exec(context.Background(), "CREATE TABLE papers (id int)")
	require.NoError(t, err)

	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"},
		lookup(map[string]string{"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": t.TempDir()}), &bytes.Buffer{}, &stderr)
	require.Equal(t, 1, code)
	require.Regexp(t, `lectern: migration 0001_init\.sql: .*relation "papers" already exists`, stderr.String())

	var users bool
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT to_regclass('users') IS NOT NULL").Scan(&users))
	require.False(t, users, "the failed migration is rolled back whole")
}

// A QDRANT_URL that names no usable vector store stops serve with a sentence; the
// host never serves on the embedded store instead.
func TestServeRefusesAVectorStoreItCannotBuild(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"},
		lookup(map[string]string{"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": t.TempDir(), "QDRANT_URL": "qdrant.internal:6334"}),
		&bytes.Buffer{}, &stderr)
	require.Equal(t, 1, code)
	require.Regexp(t, `lectern: QDRANT_URL names a vector store that cannot be used: .*must start with http:// or https://`, stderr.String())
	require.NotContains(t, stderr.String(), "listening")
}

// startServe runs `lectern serve` until the test ends and returns its base URL.
func startServe(t *testing.T, env map[string]string) (string, *syncBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int, 1)
	if _, ok := env["LECTERN_DATA_DIR"]; !ok {
		env["LECTERN_DATA_DIR"] = t.TempDir()
	}
	go func() {
		done <- Run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, lookup(env), &bytes.Buffer{}, logs)
	}()

	var addr string
	deadline := time.Now().Add(time.Minute)
	for addr == "" && time.Now().Before(deadline) {
		for _, l := range strings.Split(logs.String(), "\n") {
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(l), &entry) == nil && entry.Msg == "listening" {
				addr = entry.Addr
			}
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("serve exited with %d before listening:\n%s", code, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NotEmpty(t, addr, "serve did not listen within a minute:\n%s", logs.String())
	stop := func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(time.Minute):
			t.Fatal("serve did not stop within a minute of its context ending")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	return "http://" + addr, logs, stop
}

func TestServeAnswersAndShutsDownGracefully(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	base, logs, stop := startServe(t, map[string]string{"DATABASE_URL": dbURL})

	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	require.Equal(t, 0, stop())
	require.Contains(t, logs.String(), `"msg":"shutting down"`)
	require.Contains(t, logs.String(), `"msg":"stopped"`)
}

// TestServeOnTheEmbeddedDatabase is `make run`: no DATABASE_URL, so serve starts the
// private cluster under LECTERN_DATA_DIR/pg, and stops it on exit.
func TestServeOnTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	// Not t.TempDir: when the tests run as root, the postgres user must be able to
	// pass through every parent folder.
	dataDir, err := os.MkdirTemp("", "lectern-serve-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dataDir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dataDir) })

	base, _, stop := startServe(t, map[string]string{"LECTERN_DATA_DIR": dataDir})
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.FileExists(t, filepath.Join(dataDir, "pg", "data", "postmaster.pid"))

	require.Equal(t, 0, stop())
	require.NoFileExists(t, filepath.Join(dataDir, "pg", "data", "postmaster.pid"), "the cluster is stopped on exit")
	require.FileExists(t, filepath.Join(dataDir, "pg", "data", "PG_VERSION"), "the data stays for the next start")
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	require.Equal(t, 0, Run(context.Background(), []string{"version"}, lookup(nil), &stdout, &bytes.Buffer{}))
	require.Regexp(t, fmt.Sprintf(`^lectern \S+\nschema version %d\n$`, latestMigration(t)), stdout.String())
}

func TestDevDBExecRunsTheCommandNextToAClusterAndCleansUp(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "lectern-devdb-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dir) })
	clusterDir := filepath.Join(dir, "cluster")

	script := `psql "$TEST_DATABASE_URL" -XAtqc "SELECT 40 + 2" && exit 3`
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"devdb", "exec", "--dir", clusterDir, "--", "sh", "-c", script},
		lookup(nil), &stdout, &stderr)
	require.Equal(t, 3, code, "the command's exit code comes back: %s", stderr.String())
	require.Equal(t, "42\n", stdout.String(), "the command reached the cluster")
	require.NoDirExists(t, clusterDir, "the cluster is removed afterwards")
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	require.Equal(t, 2, Run(context.Background(), []string{"frobnicate"}, lookup(nil), &bytes.Buffer{}, &stderr))
	require.Contains(t, stderr.String(), fmt.Sprintf("unknown command %q", "frobnicate"))
}

func latestMigration(t *testing.T) int {
	t.Helper()
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	return migs[len(migs)-1].Version
}

// TestServeRefusesWithoutThePDFTools runs serve with a PATH holding neither pdftotext
// nor pdfinfo: it refuses at once, in one line naming the package to install, instead
// of failing every upload later (issue 14 item 12). Not parallel: it sets PATH.
func TestServeRefusesWithoutThePDFTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"},
		lookup(map[string]string{"DATABASE_URL": "postgres://unused.invalid/lectern", "LECTERN_DATA_DIR": t.TempDir()}), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Empty(t, stdout.String())
	require.Equal(t, "lectern: pdftotext and pdfinfo not found on PATH, and PDF uploads need them: "+
		"install the Debian package poppler-utils (as root: apt-get install -y poppler-utils; `make run` does it for you)\n",
		stderr.String(), "one line, before any database work")
}
