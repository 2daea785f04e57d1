package plugintest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The FixturesDir tests change the environment, so they cannot run in parallel.

func TestFixturesDirOverride(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(base, "arxiv"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "arxiv", "a.xml"), []byte("<a/>"), 0o644))
	t.Setenv(FixturesEnv, base)
	dir := FixturesDir(t, "arxiv")
	require.Equal(t, filepath.Join(base, "arxiv"), dir)
	require.Equal(t, "<a/>", string(ReadFixture(t, dir, "a.xml")))
}

func TestFixturesDirWalksUpToGoWork(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "main")
	pkg := filepath.Join(repo, "plugins", "sources", "x")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.work"), []byte("go 1.26\n"), 0o644))
	want := filepath.Join(root, "shared", "fixtures", "x")
	require.NoError(t, os.MkdirAll(want, 0o755))
	t.Setenv(FixturesEnv, "")
	t.Chdir(pkg)
	require.Equal(t, want, FixturesDir(t, "x"))
}

func TestFixturesDirSkipsNamingTheFolder(t *testing.T) {
	base := t.TempDir()
	t.Setenv(FixturesEnv, base)
	var msg string
	skipped := runSkippable(func(tb testing.TB) { FixturesDir(tb, "absent") }, &msg)
	require.True(t, skipped)
	require.Contains(t, msg, filepath.Join(base, "absent"))
}

func TestFixturesDirSkipsWithoutGoWork(t *testing.T) {
	t.Setenv(FixturesEnv, "")
	t.Chdir(t.TempDir())
	var msg string
	skipped := runSkippable(func(tb testing.TB) { FixturesDir(tb, "semanticscholar") }, &msg)
	require.True(t, skipped)
	require.Contains(t, msg, "shared/fixtures/semanticscholar")
}

// skipRecorder is a testing.TB whose Skipf records the message and stops the
// goroutine, as the real one does.
type skipRecorder struct {
	testing.TB
	msg *string
}

func (s skipRecorder) Helper() {}

func (s skipRecorder) Skipf(format string, args ...any) {
	*s.msg = fmt.Sprintf(format, args...)
	panic(skipped{})
}

type skipped struct{}

func runSkippable(f func(tb testing.TB), msg *string) (didSkip bool) {
	defer func() {
		if r := recover(); r != nil {
			_, didSkip = r.(skipped)
		}
	}()
	f(skipRecorder{msg: msg})
	return false
}

func TestScripted(t *testing.T) {
	t.Parallel()
	srv, n := Scripted(t, Reply(http.StatusOK, "", "text/plain", "done"),
		Reply(http.StatusTooManyRequests, "3", "", ""), Reply(http.StatusBadGateway, "", "application/json", `{"error":"x"}`))
	get := func() *http.Response {
		res, err := http.Get(srv.URL)
		require.NoError(t, err)
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}
	first := get()
	require.Equal(t, http.StatusTooManyRequests, first.StatusCode)
	require.Equal(t, "3", first.Header.Get("Retry-After"))
	second := get()
	require.Equal(t, http.StatusBadGateway, second.StatusCode)
	require.Equal(t, "application/json", second.Header.Get("Content-Type"))
	for range 2 {
		res := get()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, "done", string(body))
	}
	require.EqualValues(t, 4, n.Load())
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	var rec Recorder
	r1, err := http.NewRequest(http.MethodGet, "http://h/a?x=1", nil)
	require.NoError(t, err)
	r2, err := http.NewRequest(http.MethodGet, "http://h/b", nil)
	require.NoError(t, err)
	rec.Record(r1)
	rec.Record(r2)
	got := rec.Requests()
	require.Len(t, got, 2)
	require.Equal(t, "/a", got[0].URL.Path)
	require.Equal(t, "1", got[0].URL.Query().Get("x"))
	require.Equal(t, "/b", got[1].URL.Path)
}
