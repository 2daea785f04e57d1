package opstest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/pgembed"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The role password the backup carries: a single quote (the SPEC's doubling), a
// double quote, a backslash and something psql would take for a variable.
const restoredPassword = `it's a "pw" \ with :USER and ;`

// initialPassword is the target role's password before the restore.
const initialPassword = "initial-password-of-the-new-host"

// apiKey is the SERVICE_API_KEY inside the backup; the manifest is signed with
// SHA-256("backup-signing:" + apiKey).
const apiKey = "ops-key-0123456789abcdefghijklmnopqrstuv"

// TestRestoreOffhost runs scripts/restore-offhost against a second PostgreSQL cluster,
// with restore points made by hand in the shared format (pg_dump -Fc, tar, age).
func TestRestoreOffhost(t *testing.T) {
	requireTools(t, "age", "age-keygen", "pg_dump", "psql", "pg_restore", "jq", "xxd", "shred", "flock")
	env := newRestoreEnv(t)

	t.Run("restores the database, the PDFs, the secrets and the role password", func(t *testing.T) {
		tg := env.newTarget(t)
		in := env.newInbox(t, env.identity)
		out := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(out, "database_url"), []byte("postgres://"+tg.role+":old@db:5432/lectern?sslmode=disable"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(out, "service_config_key"), []byte("the new host's own key"), 0o600))

		res := env.run(t, tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--secrets-out", out, "--pdf-dir", tg.pdfDir)
		require.Equal(t, 0, res.code, res.output)

		// The source's rows are back, the target's old rows are gone.
		require.Equal(t, []string{"ada@example.org", "grace@example.org"}, tg.emails(t, restoredPassword))
		require.False(t, tg.hasMarker(t, restoredPassword), "the target's old data survived the restore")
		// The role logs in with the restored password, and no longer with the old one.
		require.NoError(t, tg.login(restoredPassword))
		require.Error(t, tg.login(initialPassword))
		// The PDFs are back.
		got, err := os.ReadFile(filepath.Join(tg.pdfDir, "ab", "abcdef.pdf"))
		require.NoError(t, err)
		require.Equal(t, "%PDF-1.4 the paper", string(got))
		require.NoFileExists(t, filepath.Join(tg.pdfDir, "stale.pdf"))
		// The secrets are installed in the deployment's folder, mode 600; the URL follows.
		for name, want := range env.secrets {
			path := filepath.Join(out, strings.ToLower(name))
			b, err := os.ReadFile(path)
			require.NoError(t, err, name)
			require.Equal(t, want, string(b), name)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
		}
		u := readFile(t, filepath.Join(out, "database_url"))
		cfg, err := pgx.ParseConfig(u)
		require.NoError(t, err)
		require.Equal(t, restoredPassword, cfg.Password)
		require.Equal(t, tg.role, cfg.User)
		// The key and the staged secrets are gone; the outcome is recorded.
		in.requireNoKey(t)
		require.Equal(t, "succeeded", in.status(t)["state"])
		// The secrets mount was only read.
		require.Equal(t, tg.secretsBefore, snapshotDir(t, tg.secrets))
	})

	t.Run("a wrong key destroys nothing and is shredded", func(t *testing.T) {
		tg := env.newTarget(t)
		in := env.newInbox(t, env.otherIdentity)
		res := env.run(t, tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--secrets-out", t.TempDir(), "--pdf-dir", tg.pdfDir)
		require.NotEqual(t, 0, res.code, res.output)
		require.Contains(t, res.output, "does not decrypt database.dump.age")
		require.True(t, tg.hasMarker(t, initialPassword), "the target lost its data to a wrong key")
		require.NoError(t, tg.login(initialPassword))
		require.FileExists(t, filepath.Join(tg.pdfDir, "stale.pdf"))
		require.False(t, tg.databaseExists(t, tg.db+"_restore_staging"))
		in.requireNoKey(t)
		st := in.status(t)
		require.Equal(t, "failed", st["state"])
		require.Equal(t, "probe", st["step"])
	})

	t.Run("a tampered manifest is refused and the key shredded", func(t *testing.T) {
		tg := env.newTarget(t)
		in := env.newInbox(t, env.identity)
		point := copyPoint(t, env.encPoint)
		m := readFile(t, filepath.Join(point, "manifest.json"))
		require.NoError(t, os.WriteFile(filepath.Join(point, "manifest.json"), []byte(strings.Replace(m, `"kind":"manual"`, `"kind":"scheduled"`, 1)), 0o600))
		res := env.run(t, tg, "--point", point, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--secrets-out", t.TempDir(), "--pdf-dir", tg.pdfDir)
		require.NotEqual(t, 0, res.code, res.output)
		require.Contains(t, res.output, "signature does not verify")
		require.True(t, tg.hasMarker(t, initialPassword))
		in.requireNoKey(t)
		require.Equal(t, "signature", in.status(t)["step"])
	})

	t.Run("secrets that differ from the host's are refused before the drop without --secrets-out", func(t *testing.T) {
		tg := env.newTarget(t)
		in := env.newInbox(t, env.identity)
		res := env.run(t, tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--pdf-dir", tg.pdfDir)
		require.NotEqual(t, 0, res.code, res.output)
		require.Contains(t, res.output, "SERVICE_CONFIG_KEY")
		require.NotContains(t, res.output, env.secrets["SERVICE_CONFIG_KEY"], "a secret's value was printed")
		require.True(t, tg.hasMarker(t, initialPassword))
		require.NoError(t, tg.login(initialPassword))
		in.requireNoKey(t)
	})

	t.Run("a run killed with SIGKILL leaves the key to the next run, which shreds it", func(t *testing.T) {
		tg := env.newTarget(t)
		in := env.newInbox(t, env.identity)
		// pg_restore is the step after the secrets are staged: stop there for good.
		shim := t.TempDir()
		started := filepath.Join(shim, "started")
		require.NoError(t, os.WriteFile(filepath.Join(shim, "pg_restore"),
			[]byte("#!/bin/sh\ntouch "+started+"\nexec sleep 600\n"), 0o755))
		cmd := env.command(tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--secrets-out", t.TempDir(), "--pdf-dir", tg.pdfDir)
		cmd.Env = append(cmd.Env, "PATH="+shim+":"+os.Getenv("PATH"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, time.Minute, 50*time.Millisecond, out.String())
		require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
		_ = cmd.Wait()

		// What the kill left: the key and the decrypted secrets in the staging folder.
		require.NoFileExists(t, filepath.Join(in.dir, "operator_key"))
		require.FileExists(t, filepath.Join(in.dir, ".restore-staging", "operator_key"))
		require.FileExists(t, filepath.Join(in.dir, ".restore-staging", "secrets", "DATABASE_PASSWORD"))
		require.True(t, tg.hasMarker(t, initialPassword), "the killed run destroyed data before pg_restore finished")

		// The next run, without a key, shreds the leftovers and stops.
		res := env.run(t, tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--pdf-dir", tg.pdfDir)
		require.NotEqual(t, 0, res.code, res.output)
		require.Contains(t, res.output, "shredded what a killed earlier run left")
		require.Contains(t, res.output, "There is no operator_key")
		in.requireNoKey(t)
		require.True(t, tg.hasMarker(t, initialPassword))

		// With a fresh key the restore goes through, over the killed run's staging database.
		in.placeKey(t, env.identity)
		res = env.run(t, tg, "--point", env.encPoint, "--inbox", in.dir, "--secrets-dir", tg.secrets, "--secrets-out", t.TempDir(), "--pdf-dir", tg.pdfDir)
		require.Equal(t, 0, res.code, res.output)
		require.Equal(t, []string{"ada@example.org", "grace@example.org"}, tg.emails(t, restoredPassword))
		in.requireNoKey(t)
	})

	t.Run("the same-host rollback restores the safety point and touches no secret", func(t *testing.T) {
		// The sidecar's SERVICE_API_KEY, from which the encrypted point's signing key derives.
		sidecar := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(sidecar, "service_api_key"), []byte(apiKey), 0o400))
		for _, tc := range []struct {
			name  string
			point string
			args  []string
		}{
			{"encrypted to the sidecar's identity", env.encPoint, []string{"--identity", env.identity, "--secrets-dir", sidecar}},
			{"unencrypted", env.plainPoint, []string{"--signing-key-file", env.signingKeyFile}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tg := env.newTarget(t)
				args := append([]string{"--rollback", "--point", tc.point, "--pdf-dir", tg.pdfDir}, tc.args...)
				res := env.run(t, tg, args...)
				require.Equal(t, 0, res.code, res.output)
				// The password is the host's own: the backup's DATABASE_PASSWORD was not used.
				require.Equal(t, []string{"ada@example.org", "grace@example.org"}, tg.emails(t, initialPassword))
				require.Error(t, tg.login(restoredPassword))
				require.Equal(t, tg.secretsBefore, snapshotDir(t, tg.secrets))
			})
		}
	})

	t.Run("a point of a newer schema is refused", func(t *testing.T) {
		tg := env.newTarget(t)
		point := copyPoint(t, env.plainPoint)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(point, "manifest.json"))), &m))
		m["schema_version"] = 9999
		writeManifest(t, point, m, env.signingKey)
		res := env.run(t, tg, "--rollback", "--point", point, "--signing-key-file", env.signingKeyFile, "--pdf-dir", tg.pdfDir)
		require.NotEqual(t, 0, res.code, res.output)
		require.Contains(t, res.output, "update Lectern first")
		require.True(t, tg.hasMarker(t, initialPassword))
	})
}

// restoreEnv is what every case shares: the script, the restore points and the
// target cluster.
type restoreEnv struct {
	script         string
	target         *pgembed.Cluster
	admin          *pgxpool.Pool
	identity       string // the operator's age identity (a file)
	otherIdentity  string // an identity the points were not encrypted to
	encPoint       string // an encrypted restore point
	plainPoint     string // an unencrypted one (no secrets archive)
	secrets        map[string]string
	signingKey     []byte // BACKUP_SIGNING_KEY of the plain point (70 bytes: longer than a SHA-256 block)
	signingKeyFile string
}

func newRestoreEnv(t *testing.T) *restoreEnv {
	t.Helper()
	ctx := context.Background()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	e := &restoreEnv{script: filepath.Join(root, "scripts", "restore-offhost")}
	dir := t.TempDir()

	// The source: a migrated database with two users, in the test server.
	src := dbtest.NewDB(t)
	_, err = src.Exec(ctx, `INSERT INTO users (email) VALUES ('ada@example.org'), ('grace@example.org')`)
	require.NoError(t, err)
	var schema int
	require.NoError(t, src.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&schema))

	e.identity = filepath.Join(dir, "identity")
	e.otherIdentity = filepath.Join(dir, "other")
	for _, p := range []string{e.identity, e.otherIdentity} {
		run(t, "age-keygen", "-o", p)
	}
	recipient := strings.TrimSpace(run(t, "age-keygen", "-y", e.identity))

	dump := filepath.Join(dir, "database.dump")
	run(t, "pg_dump", "-Fc", "--no-owner", "--no-privileges", "-f", dump, "-d", src.Config().ConnString())
	pdfs := tarGz(t, map[string]string{"ab/abcdef.pdf": "%PDF-1.4 the paper"})
	e.secrets = map[string]string{
		"SERVICE_API_KEY":        apiKey,
		"SERVICE_CONFIG_KEY":     "config-key-of-the-old-host-0123456789abcdef",
		"SERVICE_MODEL_HMAC_KEY": "model-hmac-key-of-the-old-host-0123456789",
		"GATEWAY_SALT_KEY":       "gateway-salt-of-the-old-host-0123456789ab",
		"DATABASE_PASSWORD":      restoredPassword,
	}
	derived := sha256.Sum256([]byte("backup-signing:" + apiKey))

	// The encrypted point, signed with the key derived from SERVICE_API_KEY.
	e.encPoint = filepath.Join(dir, "backups", "20260101_120000")
	require.NoError(t, os.MkdirAll(e.encPoint, 0o700))
	enc := func(name string, plain []byte) {
		src := filepath.Join(dir, "plain-"+name)
		require.NoError(t, os.WriteFile(src, plain, 0o600))
		run(t, "age", "-r", recipient, "-o", filepath.Join(e.encPoint, name+".age"), src)
	}
	dumpBytes, err := os.ReadFile(dump)
	require.NoError(t, err)
	enc("database.dump", dumpBytes)
	enc("pdfs.tar.gz", pdfs)
	enc("secrets.tar.gz", tarGz(t, e.secrets))
	writeManifest(t, e.encPoint, manifest("20260101_120000", "manual", schema, true), derived[:])

	// The unencrypted safety point, signed with a BACKUP_SIGNING_KEY.
	e.plainPoint = filepath.Join(dir, "backups", "safety_20260102_080000")
	require.NoError(t, os.MkdirAll(e.plainPoint, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(e.plainPoint, "database.dump"), dumpBytes, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(e.plainPoint, "pdfs.tar.gz"), pdfs, 0o600))
	e.signingKey = []byte(strings.Repeat("backup-signing-key-", 4)[:70])
	e.signingKeyFile = filepath.Join(dir, "backup_signing_key")
	require.NoError(t, os.WriteFile(e.signingKeyFile, e.signingKey, 0o600))
	writeManifest(t, e.plainPoint, manifest("20260102_080000", "safety", schema, false), e.signingKey)

	// The target: a second cluster, where roles other than the superuser log in with
	// a password, as on a real server.
	cdir, err := os.MkdirTemp("", "lectern-restore-target-")
	require.NoError(t, err)
	e.target, err = pgembed.Start(ctx, pgembed.Options{Dir: cdir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.target.Remove(context.Background()) })
	hba := filepath.Join(cdir, "data", "pg_hba.conf")
	require.NoError(t, os.WriteFile(hba, []byte("local all lectern trust\nlocal all all scram-sha-256\n"), 0o600))
	run(t, "chown", "postgres:postgres", hba)
	e.admin, err = pgxpool.New(ctx, e.target.ConnString("postgres"))
	require.NoError(t, err)
	t.Cleanup(e.admin.Close)
	_, err = e.admin.Exec(ctx, `SELECT pg_reload_conf()`)
	require.NoError(t, err)
	return e
}

// target is one case's database on the target cluster: its own superuser role with
// a password, a table of old data, a PDF folder, and a read-only secrets folder.
type target struct {
	env           *restoreEnv
	role, db      string
	pdfDir        string
	secrets       string
	secretsBefore map[string]string
}

func (e *restoreEnv) newTarget(t *testing.T) *target {
	t.Helper()
	ctx := context.Background()
	suffix := randHex(t)
	tg := &target{env: e, role: "owner_" + suffix, db: "lectern_" + suffix}
	_, err := e.admin.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s SUPERUSER LOGIN PASSWORD '%s'`, tg.role, initialPassword))
	require.NoError(t, err)
	_, err = e.admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, tg.db, tg.role))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = e.admin.Exec(context.Background(), fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, tg.db))
	})
	conn := tg.connect(t, initialPassword)
	_, err = conn.Exec(ctx, `CREATE TABLE old_marker (note text); INSERT INTO old_marker VALUES ('the new host''s data')`)
	require.NoError(t, err)
	conn.Close(ctx)

	dir := t.TempDir()
	tg.pdfDir = filepath.Join(dir, "data", "pdfs")
	require.NoError(t, os.MkdirAll(tg.pdfDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(tg.pdfDir, "stale.pdf"), []byte("%PDF stale"), 0o600))
	tg.secrets = filepath.Join(dir, "secrets")
	require.NoError(t, os.MkdirAll(tg.secrets, 0o700))
	files := map[string]string{
		"database_url":       tg.url(initialPassword),
		"service_config_key": "the new host's own config key 0123456789",
	}
	for name, v := range files {
		require.NoError(t, os.WriteFile(filepath.Join(tg.secrets, name), []byte(v), 0o400))
	}
	tg.secretsBefore = snapshotDir(t, tg.secrets)
	return tg
}

func (tg *target) url(password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(tg.role, password), Path: "/" + tg.db}
	q := url.Values{}
	cs, err := pgx.ParseConfig(tg.env.target.ConnString("postgres"))
	if err == nil {
		q.Set("host", cs.Host)
	}
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

func (tg *target) connect(t *testing.T, password string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), tg.url(password))
	require.NoError(t, err)
	return conn
}

func (tg *target) login(password string) error {
	conn, err := pgx.Connect(context.Background(), tg.url(password))
	if err != nil {
		return err
	}
	return conn.Close(context.Background())
}

func (tg *target) emails(t *testing.T, password string) []string {
	t.Helper()
	conn := tg.connect(t, password)
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT email FROM users ORDER BY email`)
	require.NoError(t, err)
	emails, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return emails
}

func (tg *target) hasMarker(t *testing.T, password string) bool {
	t.Helper()
	conn := tg.connect(t, password)
	defer conn.Close(context.Background())
	var n int
	err := conn.QueryRow(context.Background(), `SELECT count(*) FROM old_marker`).Scan(&n)
	return err == nil && n == 1
}

func (tg *target) databaseExists(t *testing.T, name string) bool {
	t.Helper()
	var ok bool
	require.NoError(t, tg.env.admin.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&ok))
	return ok
}

// inbox is the writable restore inbox of one case.
type inbox struct{ dir string }

func (e *restoreEnv) newInbox(t *testing.T, identity string) *inbox {
	t.Helper()
	in := &inbox{dir: t.TempDir()}
	in.placeKey(t, identity)
	return in
}

func (in *inbox) placeKey(t *testing.T, identity string) {
	t.Helper()
	b, err := os.ReadFile(identity)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.dir, "operator_key"), b, 0o600))
}

// requireNoKey: neither the key nor anything staged is left in the inbox.
func (in *inbox) requireNoKey(t *testing.T) {
	t.Helper()
	require.NoFileExists(t, filepath.Join(in.dir, "operator_key"))
	require.NoDirExists(t, filepath.Join(in.dir, ".restore-staging"))
}

func (in *inbox) status(t *testing.T) map[string]any {
	t.Helper()
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(in.dir, "restore-status.json"))), &st))
	return st
}

type result struct {
	code   int
	output string
}

func (e *restoreEnv) command(tg *target, args ...string) *exec.Cmd {
	cmd := exec.Command("bash", append([]string{e.script, "--database-url-file", filepath.Join(tg.secrets, "database_url")}, args...)...)
	// Only what the script needs: no LECTERN_* or secrets of the test process.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C"}
	return cmd
}

func (e *restoreEnv) run(t *testing.T, tg *target, args ...string) result {
	t.Helper()
	cmd := e.command(tg, args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "run the script: %v", err)
		code = ee.ExitCode()
	}
	return result{code: code, output: string(out)}
}

// manifest is a format-1 manifest without its file list.
func manifest(ts, kind string, schema int, encrypted bool) map[string]any {
	return map[string]any{
		"format": 1, "timestamp": ts, "run_id": "7d1c3c9e-3f43-4c36-9a59-2f1a0d7b0c11", "kind": kind,
		"app_version": "test", "schema_version": schema, "created_at": "2026-01-01T12:00:00Z", "encrypted": encrypted,
	}
}

// writeManifest lists the point's files (size and SHA-256 as stored) and signs the
// manifest with key.
func writeManifest(t *testing.T, point string, m map[string]any, key []byte) {
	t.Helper()
	entries, err := os.ReadDir(point)
	require.NoError(t, err)
	files := []map[string]any{}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "manifest.json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(point, en.Name()))
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		files = append(files, map[string]any{"name": en.Name(), "size": len(b), "sha256": hex.EncodeToString(sum[:])})
	}
	m["files"] = files
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(point, "manifest.json"), b, 0o600))
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	require.NoError(t, os.WriteFile(filepath.Join(point, "manifest.json.hmac"), []byte(hex.EncodeToString(mac.Sum(nil))+"\n"), 0o600))
}

func copyPoint(t *testing.T, point string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(point))
	run(t, "cp", "-a", point, dst)
	return dst
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, en := range entries {
		out[en.Name()] = readFile(t, filepath.Join(dir, en.Name()))
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

func randHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// requireTools fails (never skips) when a tool the script or the test needs is
// missing: scripts/ensure-tools installs them.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is missing: run scripts/ensure-tools (as root) to install it", tool)
	}
}
