package pluginhost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// repoRoot is the repository's root folder.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// build compiles a main package of this repository into the test's temp folder.
func build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, "./"+pkg)
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, out)
	return bin
}

func buildExample(t testing.TB) string { return build(t, "plugins/sources/example") }

// logBuffer collects the host's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns every logged record.
func (b *logBuffer) records(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
		out = append(out, rec)
	}
	return out
}

// find returns the first record whose msg contains msg and whose plugin is name.
func (b *logBuffer) find(t testing.TB, plugin, msg string) map[string]any {
	t.Helper()
	for _, rec := range b.records(t) {
		if rec["plugin"] == plugin && strings.Contains(rec["msg"].(string), msg) {
			return rec
		}
	}
	return nil
}

type bundle struct {
	host *Host
	logs *logBuffer
}

// setup starts a host over entries with fast supervision timings.
func setup(t *testing.T, entries ...Entry) *bundle {
	t.Helper()
	logs := &logBuffer{}
	h := New(entries, Options{
		Logger:         slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LogLevel:       "debug",
		HealthInterval: 200 * time.Millisecond,
		ExitPoll:       20 * time.Millisecond,
		BackoffMin:     50 * time.Millisecond,
		BackoffMax:     time.Second,
	})
	require.NoError(t, h.Start(t.Context()))
	t.Cleanup(h.Close)
	return &bundle{host: h, logs: logs}
}

func exampleEntry(bin string) Entry {
	return Entry{
		Name: "example", Kind: protocol.KindSource, Path: bin, Enabled: true,
		CallTimeout: 20 * time.Second, MaxConcurrency: 4,
	}
}

// waitState waits until the plugin reaches state.
func waitState(t *testing.T, h *Host, name string, state State) Status {
	t.Helper()
	var st Status
	require.Eventually(t, func() bool {
		var err error
		st, err = h.StatusOf(name)
		require.NoError(t, err)
		return st.State == state
	}, 30*time.Second, 10*time.Millisecond, "plugin %s never reached %s (last status %+v)", name, state, st)
	return st
}

// pid is the process id of the running plugin.
func pid(t *testing.T, h *Host, name string) int {
	t.Helper()
	gen := h.plugins[name].current()
	require.NotNil(t, gen, "plugin %s is not running", name)
	rc := gen.conn.Client.ReattachConfig()
	require.NotNil(t, rc)
	return rc.Pid
}
