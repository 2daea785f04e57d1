package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var testKey = []byte("test-backup-signing-key-0123456789abcdef")

// testBundle is one live database with its PDF folder and backup folders, and
// the sidecar's Service over them.
type testBundle struct {
	svc    *Service
	cfg    Config
	db     Database
	url    string
	pdfDir string
	view   *View
}

func setup(t *testing.T, adjust func(*Config)) *testBundle {
	t.Helper()
	_, dbURL := dbtest.NewDBWithURL(t)
	root := t.TempDir()
	cfg := Config{
		Dir: filepath.Join(root, "backups"), TriggerDir: filepath.Join(root, "trigger"), PDFDir: filepath.Join(root, "pdfs"),
		SigningKey: testKey, AppVersion: "test", Logger: slog.New(slog.DiscardHandler),
		Secrets: map[string]string{"SERVICE_API_KEY": "ops-key-value", "DATABASE_PASSWORD": "pw'with quote"},
	}
	require.NoError(t, os.MkdirAll(cfg.TriggerDir, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(cfg.PDFDir, "ab"), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(cfg.PDFDir, "ab", "original.pdf"), []byte("%PDF-1.4 original"), 0o640))
	if adjust != nil {
		adjust(&cfg)
	}
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	db := Database{URL: dbURL}
	svc, err := New(cfg, db, migs)
	require.NoError(t, err)
	view := NewView(ViewConfig{Dir: cfg.Dir, TriggerDir: cfg.TriggerDir, SigningKey: testKey, SchemaVersion: svc.schemaVersion()})
	return &testBundle{svc: svc, cfg: cfg, db: db, url: dbURL, pdfDir: cfg.PDFDir, view: view}
}

// pool opens a fresh pool on the live database (a restore ends the old ones).
func (b *testBundle) pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), b.url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// seed gives the live database a user with a live session, an unused sign-in
// link and an unconsumed pairing token.
func seed(t *testing.T, pool *pgxpool.Pool, email string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email, role) VALUES ($1, 'admin') RETURNING id`, email).Scan(&id))
	h := func(s string) []byte { x := sha256.Sum256([]byte(s + email)); return x[:] }
	_, err := pool.Exec(ctx, `INSERT INTO user_sessions (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '30 days')`, id, h("session"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO magic_link_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '15 minutes')`, h("link"), id)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO messenger_pairing_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '10 minutes')`, h("pair"), id)
	require.NoError(t, err)
	return id
}

func emails(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT email FROM users ORDER BY email`)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var e string
		require.NoError(t, rows.Scan(&e))
		out = append(out, e)
	}
	require.NoError(t, rows.Err())
	return out
}

func pdfFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	}))
	sort.Strings(out)
	return out
}

// watch runs the sidecar loop until the test ends.
func (b *testBundle) watch(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.svc.Watch(ctx, 50*time.Millisecond) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	// The panel leaves requests only once the sidecar holds the folder.
	require.Eventually(t, func() bool { return Watching(b.cfg.TriggerDir) }, 10*time.Second, 10*time.Millisecond)
}

// finished waits for the restore of request id to end and returns its status.
func (b *testBundle) finished(t *testing.T, id string) *Status {
	t.Helper()
	var st *Status
	require.Eventually(t, func() bool {
		s, err := readStatus(b.cfg.TriggerDir)
		if err != nil || s == nil || s.RequestID != id || s.State == StateRunning {
			return false
		}
		st = s
		return true
	}, 2*time.Minute, 100*time.Millisecond)
	return st
}

// TestBackupChangeRestore is the first "done when": back up, change the
// data, restore through the trigger folder (as the panel does): the data and the
// PDFs are back, every session, sign-in link and pairing token is revoked, the
// safety backup is listed, and `backup verify` passes on both points.
func TestBackupChangeRestore(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Interval = time.Hour })
	ctx := context.Background()
	live := b.pool(t)
	seed(t, live, "alice@example.org")

	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	rep, err := b.svc.Verify(ctx, point)
	require.NoError(t, err, "the fresh point passes the test restore")
	require.Greater(t, rep.Tables, 20)
	require.Equal(t, 1, rep.PDFs)

	// Change everything after the backup: a new user with a session, a deleted
	// PDF and a new one.
	seed(t, live, "mallory@example.org")
	_, err = live.Exec(ctx, `UPDATE users SET display_name = 'changed' WHERE email = 'alice@example.org'`)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(b.pdfDir, "ab", "original.pdf")))
	require.NoError(t, os.WriteFile(filepath.Join(b.pdfDir, "new.pdf"), []byte("%PDF new"), 0o640))

	b.watch(t)
	req, err := b.view.RequestRestore(point, ConfirmWord, uuid.New())
	require.NoError(t, err)
	st := b.finished(t, req.RequestID)
	require.Equal(t, StateSucceeded, st.State, st.Error)
	for _, s := range st.Steps {
		require.Equal(t, StepDone, s.Status, s.Name)
	}
	require.True(t, strings.HasPrefix(st.SafetyBackup, safetyPrefix), st.SafetyBackup)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, RestoreRequestFile), "the request is consumed")
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, DestructiveFile))

	after := b.pool(t)
	require.Equal(t, []string{"alice@example.org"}, emails(t, after), "the data of the point is back")
	var name *string
	require.NoError(t, after.QueryRow(ctx, `SELECT display_name FROM users`).Scan(&name))
	require.Nil(t, name)
	var liveSessions, liveLinks, liveTokens int
	require.NoError(t, after.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM user_sessions WHERE revoked_at IS NULL),
		(SELECT count(*) FROM magic_link_tokens WHERE used_at IS NULL),
		(SELECT count(*) FROM messenger_pairing_tokens WHERE consumed_at IS NULL)`).Scan(&liveSessions, &liveLinks, &liveTokens))
	require.Zero(t, liveSessions, "every session is revoked")
	require.Zero(t, liveLinks, "every sign-in link is spent")
	require.Zero(t, liveTokens, "every pairing token is gone")
	require.Equal(t, []string{filepath.Join("ab", "original.pdf")}, pdfFiles(t, b.pdfDir), "the PDFs of the point are back")

	points, err := b.view.Points()
	require.NoError(t, err)
	require.Len(t, SafetyBackups(points), 1)
	require.Equal(t, st.SafetyBackup, SafetyBackups(points)[0].Name)

	_, err = b.svc.Verify(ctx, point)
	require.NoError(t, err, "backup verify passes after the restore")
	_, err = b.svc.Verify(ctx, st.SafetyBackup)
	require.NoError(t, err, "the safety backup verifies too")

	// The safety backup holds the changed data: restoring it brings Mallory back.
	require.NoError(t, os.Remove(filepath.Join(b.cfg.TriggerDir, RestoreStatusFile)))
	req, err = b.view.RequestRestore(st.SafetyBackup, ConfirmWord, uuid.New())
	require.NoError(t, err)
	st = b.finished(t, req.RequestID)
	require.Equal(t, StateSucceeded, st.State, st.Error)
	require.Equal(t, []string{"alice@example.org", "mallory@example.org"}, emails(t, b.pool(t)))
}

func ageKey(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	require.NoError(t, err)
	return id
}

// TestWrongIdentityDestroysNothing: an encrypted point and an identity that
// does not open it: the restore fails at the decrypt probe, before the safety
// backup and before anything live is touched.
func TestWrongIdentityDestroysNothing(t *testing.T) {
	t.Parallel()
	right, wrong := ageKey(t), ageKey(t)
	b := setup(t, func(c *Config) {
		c.Recipients = []age.Recipient{right.Recipient()}
		c.Identities = []age.Identity{wrong}
	})
	ctx := context.Background()
	live := b.pool(t)
	seed(t, live, "alice@example.org")
	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	seed(t, live, "bob@example.org")

	st, err := b.svc.Restore(ctx, RestoreRequest{RequestID: "r1", Point: point})
	require.ErrorIs(t, err, ErrWrongKey)
	require.Equal(t, StateFailed, st.State)
	require.False(t, st.Destructive)
	require.Equal(t, StepDecryptProbe, st.CurrentStep)
	require.Contains(t, st.Error, "nothing was changed")
	require.Empty(t, st.SafetyBackup)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, DestructiveFile))
	require.Empty(t, b.view.Maintenance())
	require.Equal(t, []string{"alice@example.org", "bob@example.org"}, emails(t, b.pool(t)), "the live data is untouched")
	require.Equal(t, []string{filepath.Join("ab", "original.pdf")}, pdfFiles(t, b.pdfDir))

	_, err = b.svc.Verify(ctx, point)
	require.ErrorIs(t, err, ErrWrongKey, "verify needs the right key too")
}

// TestEncryptedPointLayout: with recipients every archive is .age (all or none),
// the secrets archive holds one file per set secret with no trailing newline,
// and the right identity verifies the point.
func TestEncryptedPointLayout(t *testing.T) {
	t.Parallel()
	key := ageKey(t)
	b := setup(t, func(c *Config) {
		c.Recipients = []age.Recipient{key.Recipient()}
		c.Identities = []age.Identity{key}
	})
	ctx := context.Background()
	point, err := b.svc.Create(ctx, KindScheduled)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(b.cfg.Dir, point, ManifestFile))
	require.NoError(t, err)
	var m Manifest
	require.NoError(t, json.Unmarshal(raw, &m))
	require.True(t, m.Encrypted)
	require.Equal(t, KindScheduled, m.Kind)
	require.Equal(t, point, m.Timestamp)
	var names []string
	for _, f := range m.Files {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"database.dump.age", "pdfs.tar.gz.age", "secrets.tar.gz.age"}, names)

	f, err := os.Open(filepath.Join(b.cfg.Dir, point, "secrets.tar.gz.age"))
	require.NoError(t, err)
	defer f.Close()
	r, err := age.Decrypt(f, key)
	require.NoError(t, err)
	gz, err := gzip.NewReader(r)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	secrets := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		v, err := io.ReadAll(tr)
		require.NoError(t, err)
		secrets[hdr.Name] = string(v)
	}
	require.Equal(t, map[string]string{"SERVICE_API_KEY": "ops-key-value", "DATABASE_PASSWORD": "pw'with quote"}, secrets)

	_, err = b.svc.Verify(ctx, point)
	require.NoError(t, err)
}

// resign rewrites a point's manifest through change and signs it again.
func resign(t *testing.T, b *testBundle, point string, change func(*Manifest)) {
	t.Helper()
	dir := filepath.Join(b.cfg.Dir, point)
	m, err := readManifest(dir, testKey)
	require.NoError(t, err)
	change(m)
	require.NoError(t, writeManifest(dir, m, testKey))
}

// TestNewerSchemaRefused: a point made by a newer Lectern is refused by the
// panel and by the sidecar, and nothing changes.
func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	live := b.pool(t)
	seed(t, live, "alice@example.org")
	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	resign(t, b, point, func(m *Manifest) { m.SchemaVersion = b.svc.schemaVersion() + 1 })
	seed(t, live, "bob@example.org")

	points, err := b.view.Points()
	require.NoError(t, err)
	require.Equal(t, CompatNewer, points[0].Compat)
	require.False(t, points[0].Restorable)
	_, err = b.view.RequestRestore(point, ConfirmWord, uuid.New())
	require.ErrorIs(t, err, ErrNotRestorable)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, RestoreRequestFile))

	st, err := b.svc.Restore(ctx, RestoreRequest{RequestID: "r1", Point: point})
	require.ErrorIs(t, err, errNewerSchema)
	require.Equal(t, StateRefused, st.State)
	require.Contains(t, st.Error, "upgrade Lectern first")
	require.False(t, st.Destructive)
	require.Empty(t, st.SafetyBackup)
	require.Equal(t, []string{"alice@example.org", "bob@example.org"}, emails(t, b.pool(t)))

	// An older point is fine: it is migrated forward before the swap.
	require.Equal(t, CompatOlder, compat(3, 20))
	require.Equal(t, CompatSame, compat(20, 20))
	require.Equal(t, CompatUnknown, compat(0, 20))
}

// TestTamperedPointRefused: a manifest changed without the key, a wrong key, or
// an archive that no longer matches its checksum is refused by verify and by the
// restore; nothing changes.
func TestTamperedPointRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	seed(t, b.pool(t), "alice@example.org")
	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	dir := filepath.Join(b.cfg.Dir, point)

	// The manifest edited by hand (the schema lowered, say) breaks the HMAC.
	orig, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile),
		[]byte(strings.Replace(string(orig), `"app_version": "test"`, `"app_version": "evil"`, 1)), 0o600))
	_, err = b.svc.Verify(ctx, point)
	require.ErrorIs(t, err, ErrBadSignature)
	st, err := b.svc.Restore(ctx, RestoreRequest{RequestID: "r1", Point: point})
	require.ErrorIs(t, err, ErrBadSignature)
	require.Equal(t, StateRefused, st.State)
	require.Equal(t, StepVerifySignature, st.CurrentStep)
	points, err := b.view.Points()
	require.NoError(t, err)
	require.False(t, points[0].Restorable)
	require.Contains(t, points[0].Problem, "signature does not match")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), orig, 0o600))

	// Another host's key.
	other := *b.svc
	other.cfg.SigningKey = []byte("another-signing-key-0123456789abcdefgh")
	_, err = other.Verify(ctx, point)
	require.ErrorIs(t, err, ErrBadSignature)

	// The dump changed after signing.
	dump := filepath.Join(dir, DatabaseFile)
	data, err := os.ReadFile(dump)
	require.NoError(t, err)
	data[len(data)/2] ^= 0xff
	require.NoError(t, os.WriteFile(dump, data, 0o600))
	_, err = b.svc.Verify(ctx, point)
	require.ErrorContains(t, err, "does not match its checksum")
	_, err = b.svc.Restore(ctx, RestoreRequest{RequestID: "r2", Point: point})
	require.ErrorContains(t, err, "does not match its checksum")
	require.Equal(t, []string{"alice@example.org"}, emails(t, b.pool(t)))
}

// TestVerifyComparesRowCounts: a manifest whose recorded counts differ from the
// dump fails the test restore, naming the table.
func TestVerifyComparesRowCounts(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	seed(t, b.pool(t), "alice@example.org")
	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	resign(t, b, point, func(m *Manifest) { m.Tables["public.users"] = 2 })
	_, err = b.svc.Verify(ctx, point)
	require.ErrorContains(t, err, "public.users has 1 rows, the manifest 2")
}

// TestFailureAfterSwapKeepsMaintenance is the last "done when": a failure
// injected after the destructive step leaves the .destructive marker, the app
// answers 503 everywhere but sign-in, health and the backups panel, and the
// panel lists the safety backup, which restores.
func TestFailureAfterSwapKeepsMaintenance(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.FailAfterStep = StepSwap })
	ctx := context.Background()
	seed(t, b.pool(t), "alice@example.org")
	point, err := b.svc.Create(ctx, KindManual)
	require.NoError(t, err)
	seed(t, b.pool(t), "bob@example.org")

	st, err := b.svc.Restore(ctx, RestoreRequest{RequestID: "r1", Point: point})
	require.ErrorIs(t, err, errInjected)
	require.Equal(t, StateFailed, st.State)
	require.True(t, st.Destructive)
	require.Equal(t, StepSwap, st.CurrentStep)
	require.Contains(t, st.Error, "stays in maintenance")
	require.Contains(t, st.Error, st.SafetyBackup)
	require.FileExists(t, filepath.Join(b.cfg.TriggerDir, DestructiveFile))
	require.Equal(t, StepSkipped, st.Steps[len(st.Steps)-1].Status)

	require.NotEmpty(t, b.view.Maintenance())
	gate := MaintenanceGate(b.view, MaintenanceOpen)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for path, want := range map[string]int{
		"/api/papers": http.StatusServiceUnavailable, "/api/admin/users": http.StatusServiceUnavailable,
		"/api/admin/backupsx": http.StatusServiceUnavailable, "/library": http.StatusServiceUnavailable,
		"/api/me/messenger": http.StatusServiceUnavailable,
		"/healthz":          http.StatusOK, "/api/auth/magic-link": http.StatusOK, "/api/me": http.StatusOK,
		"/api/admin/backups": http.StatusOK, "/api/admin/backups/restore": http.StatusOK,
	} {
		rec := httptest.NewRecorder()
		gate.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, want, rec.Code, path)
		if want == http.StatusServiceUnavailable {
			require.Contains(t, rec.Body.String(), "maintenance after a failed restore", path)
			require.NotContains(t, rec.Body.String(), "backup:", "no internal text")
		}
	}

	points, err := b.view.Points()
	require.NoError(t, err)
	safety := SafetyBackups(points)
	require.Len(t, safety, 1)
	require.Equal(t, st.SafetyBackup, safety[0].Name)
	require.True(t, safety[0].Restorable)

	// Recovery: the safety backup restores, and maintenance ends.
	b.svc.cfg.FailAfterStep = ""
	st, err = b.svc.Restore(ctx, RestoreRequest{RequestID: "r2", Point: safety[0].Name})
	require.NoError(t, err)
	require.Equal(t, StateSucceeded, st.State)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, DestructiveFile))
	b.view.checkedAt = time.Time{}
	require.Empty(t, b.view.Maintenance())
	require.Equal(t, []string{"alice@example.org", "bob@example.org"}, emails(t, b.pool(t)))
}

// TestInterruptedRestoreEndsFailed: a status a killed sidecar left "running"
// after the destructive step becomes failed with maintenance on when the next
// sidecar starts; one left before it becomes failed without maintenance.
func TestInterruptedRestoreEndsFailed(t *testing.T) {
	t.Parallel()
	for _, destructive := range []bool{false, true} {
		b := setup(t, nil)
		st := Status{RequestID: "r", Point: "20260101_000000", State: StateRunning, CurrentStep: StepSwap,
			Destructive: destructive, SafetyBackup: "safety_20260101_000000", Steps: []Step{{Name: StepSwap, Status: StepRunning}}}
		require.NoError(t, writeJSONAtomic(b.cfg.TriggerDir, RestoreStatusFile, st, 0o644))
		require.NotEmpty(t, b.view.Maintenance(), "a running restore holds the app")
		b.svc.recoverInterrupted()
		got, err := readStatus(b.cfg.TriggerDir)
		require.NoError(t, err)
		require.Equal(t, StateFailed, got.State)
		require.Equal(t, destructive, exists(filepath.Join(b.cfg.TriggerDir, DestructiveFile)))
	}
}

// TestRequestRestoreChecksTheWord: the panel writes the request only for the
// typed word and a point that exists, once.
func TestRequestRestoreChecksTheWord(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	point, err := b.svc.Create(context.Background(), KindManual)
	require.NoError(t, err)
	for _, word := range []string{"", "restore", "RESTORE ", "yes"} {
		_, err := b.view.RequestRestore(point, word, uuid.New())
		require.ErrorIs(t, err, ErrNotConfirmed, word)
	}
	for _, name := range []string{"20990101_000000", "../backups", "", "x"} {
		_, err := b.view.RequestRestore(name, ConfirmWord, uuid.New())
		require.ErrorIs(t, err, ErrNoPoint, name)
	}
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, RestoreRequestFile))
	_, err = b.view.RequestRestore(point, ConfirmWord, uuid.New())
	require.ErrorIs(t, err, ErrNoSidecar, "no request is left for a sidecar that is not there")
	require.ErrorIs(t, b.view.RequestBackup(), ErrNoSidecar)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, RestoreRequestFile))
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, BackupNowFile))
	release, err := ClaimTriggerFolder(b.cfg.TriggerDir)
	require.NoError(t, err)
	t.Cleanup(release)
	require.True(t, Watching(b.cfg.TriggerDir))
	_, err = ClaimTriggerFolder(b.cfg.TriggerDir)
	require.Error(t, err, "one sidecar at a time")
	req, err := b.view.RequestRestore(point, ConfirmWord, uuid.New())
	require.NoError(t, err)
	var onDisk RestoreRequest
	require.NoError(t, readJSON(b.cfg.TriggerDir, RestoreRequestFile, &onDisk))
	require.Equal(t, req, onDisk)
	_, err = b.view.RequestRestore(point, ConfirmWord, uuid.New())
	require.ErrorIs(t, err, ErrRestoreRunning, "one request at a time")

	require.NoError(t, b.view.RequestBackup())
	require.FileExists(t, filepath.Join(b.cfg.TriggerDir, BackupNowFile))
}

// TestBackupNowTrigger: the sidecar answers .backup_now with a manual point and
// records the run.
func TestBackupNowTrigger(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.Interval = time.Hour })
	// A recent scheduled point, so the loop's first round makes none.
	_, err := b.svc.Create(context.Background(), KindScheduled)
	require.NoError(t, err)
	b.svc.cfg.Now = func() time.Time { return time.Now().Add(2 * time.Second) }
	b.watch(t)
	require.NoError(t, b.view.RequestBackup())
	require.Eventually(t, func() bool {
		lb, err := b.view.LastBackup()
		return err == nil && lb != nil && lb.State == StateSucceeded && lb.Kind == KindManual
	}, time.Minute, 50*time.Millisecond)
	points, err := b.view.Points()
	require.NoError(t, err)
	require.Len(t, points, 2)
	require.NoFileExists(t, filepath.Join(b.cfg.TriggerDir, BackupNowFile))
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
