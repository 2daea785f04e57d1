package faulttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/users"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// lecternBinary is bin/lectern of this checkout; the test fails with what to do
// when it is missing or older than the sources would make it.
func lecternBinary(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	bin := filepath.Join(filepath.Dir(file), "..", "..", "..", "bin", "lectern")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("faulttest: %s is missing: run `make build` first (make test does), then run the tests again", bin)
	}
	return bin
}

// host is one `lectern serve` process of a test: the production binary in a process
// group of its own, so that a kill -9 takes its children (pdftotext) with it, as a
// killed container would.
type host struct {
	t       *testing.T
	cmd     *exec.Cmd
	base    string
	logPath string
	exited  chan error
}

// hostConfig says how to start a host.
type hostConfig struct {
	DatabaseURL string
	DataDir     string
	// PathPrefix, when set, is put in front of PATH (a folder of gated tools).
	PathPrefix string
}

// startHost starts `lectern serve` on a free loopback port with no plugins and
// waits until it answers /readyz.
func startHost(t *testing.T, cfg hostConfig) *host {
	t.Helper()
	bin := lecternBinary(t)
	plugins := filepath.Join(cfg.DataDir, "plugins.toml")
	require.NoError(t, os.WriteFile(plugins, []byte("# faulttest: no plugins\n"), 0o644))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	logPath := filepath.Join(cfg.DataDir, fmt.Sprintf("serve-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	path := os.Getenv("PATH")
	if cfg.PathPrefix != "" {
		path = cfg.PathPrefix + string(os.PathListSeparator) + path
	}
	cmd.Env = append(os.Environ(),
		"PATH="+path,
		"DATABASE_URL="+cfg.DatabaseURL,
		"LECTERN_DATA_DIR="+cfg.DataDir,
		"LECTERN_PLUGINS_FILE="+plugins,
		"DEV_SMTP_LOG_ONLY=true",
		"PUBLIC_BASE_URL=http://"+addr,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	h := &host{t: t, cmd: cmd, base: "http://" + addr, logPath: logPath, exited: make(chan error, 1)}
	go func() { h.exited <- cmd.Wait() }()
	t.Cleanup(func() { h.kill() })
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-h.exited:
			t.Fatalf("lectern serve exited while starting (%v):\n%s", err, h.log())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(h.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("lectern serve was not ready within 2 minutes:\n%s", h.log())
		}
	}
}

// log is the host's log so far.
func (h *host) log() string {
	raw, _ := os.ReadFile(h.logPath)
	return string(raw)
}

// kill sends SIGKILL to the host's whole process group and waits for the host.
func (h *host) kill() {
	if h.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case err := <-h.exited:
		h.t.Logf("lectern serve (pid %d) ended: %v", h.cmd.Process.Pid, err) // "signal: killed"
	case <-time.After(30 * time.Second):
		h.t.Errorf("lectern serve (pid %d) did not die of SIGKILL", h.cmd.Process.Pid)
	}
	h.cmd.Process = nil
}

// do sends a request with the session cookie and returns the status and body.
func (h *host) do(t *testing.T, cookie, method, path string, body io.Reader, contentType string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, h.base+path, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.AddCookie(&http.Cookie{Name: "service_session", Value: cookie})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// upload posts content as a PDF upload and returns the answer's status and body.
func (h *host) upload(t *testing.T, cookie, name string, content []byte) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return h.do(t, cookie, http.MethodPost, "/api/papers/upload", &buf, mw.FormDataContentType())
}

// uploadResult is the answer to an accepted upload.
type uploadResult struct {
	PaperID uuid.UUID `json:"paper_id"`
	Job     struct {
		ID int64 `json:"id"`
	} `json:"job"`
}

// signedInUser creates a user and a session for them (users.StartSession, as a
// sign-in does) and returns the user's id and session cookie value.
func signedInUser(t *testing.T, pool *pgxpool.Pool, email string) (uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	u, err := users.Create(ctx, pool, email, "user")
	require.NoError(t, err)
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	tok := base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(tok))
	require.NoError(t, users.StartSession(ctx, pool, users.NewSession{UserID: u.ID, TokenHash: sum[:],
		ExpiresAt: time.Now().Add(24 * time.Hour), Now: time.Now()}))
	return u.ID, tok
}

// gate is a folder holding a pdftotext that waits, before it runs the real one,
// until the test opens the gate: an ingest job held in the middle of its work for
// as long as the test needs, in a real process.
type gate struct {
	dir     string
	started string // exists once a held pdftotext is waiting
	open    string // the test creates it to let the held pdftotext run
}

func newGate(t *testing.T) *gate {
	t.Helper()
	real, err := exec.LookPath("pdftotext")
	require.NoError(t, err, "pdftotext (poppler-utils) is needed: scripts/ensure-tools installs it")
	dir := t.TempDir()
	g := &gate{dir: dir, started: filepath.Join(dir, "started"), open: filepath.Join(dir, "open")}
	script := fmt.Sprintf("#!/bin/sh\n: > %q\nwhile [ ! -e %q ]; do sleep 0.05; done\nexec %q \"$@\"\n", g.started, g.open, real)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pdftotext"), []byte(script), 0o755))
	return g
}

// waitHeld waits until a pdftotext is held at the gate.
func (g *gate) waitHeld(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(g.started); return err == nil }, 2*time.Minute, 20*time.Millisecond,
		"the ingest job never reached pdftotext")
}

// release lets every held and later pdftotext run.
func (g *gate) release(t *testing.T) {
	t.Helper()
	require.NoError(t, os.WriteFile(g.open, nil, 0o644))
}

// jobState is a job's River state and attempt.
func jobState(t *testing.T, pool *pgxpool.Pool, id int64) (state string, attempt int) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT state, attempt FROM river_job WHERE id = $1`, id).Scan(&state, &attempt))
	return state, attempt
}

// waitJobDone waits until the job is completed and returns its attempt count.
func waitJobDone(t *testing.T, pool *pgxpool.Pool, id int64, within time.Duration) int {
	t.Helper()
	var state string
	var attempt int
	require.Eventually(t, func() bool {
		state, attempt = jobState(t, pool, id)
		return state == "completed" || state == "discarded" || state == "cancelled"
	}, within, 50*time.Millisecond, "job %d did not finish (still %s)", id, state)
	require.Equal(t, "completed", state)
	return attempt
}

// requireReadOnce checks that the paper has its text exactly once: one text, its
// passages numbered 0..n-1 with none twice.
func requireReadOnce(t *testing.T, pool *pgxpool.Pool, paper uuid.UUID) {
	t.Helper()
	var texts, chunks, distinct, maxIndex int
	require.NoError(t, pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM paper_texts WHERE paper_id = $1),
		       (SELECT count(*) FROM paper_chunks WHERE paper_id = $1),
		       (SELECT count(DISTINCT chunk_index) FROM paper_chunks WHERE paper_id = $1),
		       (SELECT coalesce(max(chunk_index), -1) FROM paper_chunks WHERE paper_id = $1)`, paper).
		Scan(&texts, &chunks, &distinct, &maxIndex))
	require.Equal(t, 1, texts, "the paper has its text, once")
	require.Positive(t, chunks)
	require.Equal(t, chunks, distinct, "no passage twice")
	require.Equal(t, chunks-1, maxIndex, "no passage missing")
}

// pdfFolder lists the data folder's PDF folder.
func pdfFolder(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "pdfs"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// staged lists the staged uploads in the data folder.
func staged(t *testing.T, dataDir string) []string {
	t.Helper()
	var out []string
	for _, n := range pdfFolder(t, dataDir) {
		if strings.HasPrefix(n, "upload-") {
			out = append(out, n)
		}
	}
	return out
}

// jsonField decodes body into v.
func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(body, v), string(body))
}

// databaseURL is the connection URL of pool's database.
func databaseURL(pool *pgxpool.Pool) string { return pool.Config().ConnString() }

// unexpectedAnswer is an answer where the test expected none.
type unexpectedAnswer struct{ status int }

func (e *unexpectedAnswer) Error() string { return fmt.Sprintf("the server answered %d", e.status) }

// sha256Hex is the content address of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
