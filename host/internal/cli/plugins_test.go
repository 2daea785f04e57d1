package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func goBuild(t testing.TB, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
	cmd.Dir = repoRoot(t)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, b)
}

func runPluginsCmd(t *testing.T, file string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runPlugins(t.Context(), args, lookup(map[string]string{"LECTERN_PLUGINS_FILE": file}), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestPluginsCheckPassesForEveryPluginInTheRepository builds every plugin of the
// repository the way make build does and checks the repository's plugins.toml.
func TestPluginsCheckPassesForEveryPluginInTheRepository(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	dir := t.TempDir()
	mains, err := filepath.Glob(filepath.Join(root, "plugins", "*", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, mains)
	for _, m := range mains {
		pkgDir := filepath.Dir(m)
		rel, err := filepath.Rel(root, pkgDir)
		require.NoError(t, err)
		goBuild(t, filepath.Join(dir, "bin", "plugins", filepath.Base(pkgDir)), rel)
	}
	toml, err := os.ReadFile(filepath.Join(root, "plugins.toml"))
	require.NoError(t, err)
	file := filepath.Join(dir, "plugins.toml")
	require.NoError(t, os.WriteFile(file, toml, 0o600))

	// The real sources talk to their live APIs, which tests cannot reach: each of
	// them passes the same conformance kit against a replay of its recorded API in
	// its own package test. Here the whole kit runs on the example source, and every
	// other configured plugin must be listed with its binary built.
	code, out, errOut := runPluginsCmd(t, file, "check", "--plugin", "example")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "PASS  source.example 0.1.0 (protocol 1)")
	require.Contains(t, out, "ok    pagination_ends")
	require.Contains(t, out, "ok    cancellation_honoured")
	require.NotContains(t, out, "fail")

	code, out, _ = runPluginsCmd(t, file, "list")
	require.Equal(t, 0, code)
	require.Regexp(t, `example\s+source\s+false\s+>= 0.1.0, < 1.0.0\s+ok`, out)
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		require.Regexp(t, name+`\s+\S+\s+(true|false)\s+.*\s+ok\s+\S*bin/plugins/`+name, out, "plugins.toml lists %s and its binary is built", name)
	}
}

func TestPluginsCheckFailsAPluginOfAnotherProtocol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	goBuild(t, filepath.Join(dir, "future"), "host/internal/pluginhost/testdata/badproto")
	file := filepath.Join(dir, "plugins.toml")
	require.NoError(t, os.WriteFile(file, []byte("[[plugin]]\nname = \"future\"\nkind = \"source\"\npath = \"future\"\n"), 0o600))

	code, out, _ := runPluginsCmd(t, file, "check")
	require.Equal(t, 1, code)
	require.Contains(t, out, "FAIL  source.future")
	require.Contains(t, out, "speaks protocol version 2, but this host speaks protocol version 1")
	require.Contains(t, out, "1 of 1 plugins failed")
}

func TestPluginsCommandRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[[plugin]]\nname = \"a\"\nkind = \"sauce\"\npath = \"x\"\n"), 0o600))
	tests := []struct {
		name   string
		file   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no command", bad, nil, 2, "", "usage: lectern plugins"},
		{"unknown command", bad, []string{"frob"}, 2, "", `unknown command "frob"`},
		{"bad file on list", bad, []string{"list"}, 1, "", `bad.toml:3: kind "sauce" is not one of`},
		{"bad file on check", bad, []string{"check"}, 1, "", `bad.toml:3: kind "sauce"`},
		{"no file", filepath.Join(dir, "absent.toml"), []string{"list"}, 0, "no plugins configured", ""},
		{"unknown plugin", filepath.Join(dir, "absent.toml"), []string{"check", "--plugin", "x"}, 1, "", `no plugin named "x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPluginsCmd(t, tc.file, tc.args...)
			require.Equal(t, tc.code, code, "stdout %s stderr %s", out, errOut)
			require.Contains(t, out, tc.stdout)
			require.Contains(t, errOut, tc.stderr)
		})
	}
}

// TestPluginsCheckGivesEachPluginItsOwnDeadline checks a slow source (the example
// source told to take 30 s a call) beside the builtin LLM plugin (issue 14 item 13).
// The builtin's checks never wait for or die with the slow one's: ended by its own
// deadline (--timeout) or by Ctrl-C, the slow source fails alone and says why.
func TestPluginsCheckGivesEachPluginItsOwnDeadline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	goBuild(t, filepath.Join(dir, "example"), "plugins/sources/example")
	goBuild(t, filepath.Join(dir, "builtin"), "plugins/llm/builtin")
	file := filepath.Join(dir, "plugins.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[[plugin]]
name = "slow"
kind = "source"
path = "example"
call_timeout = "20s"

[plugin.settings]
delay = "30s"

[[plugin]]
name = "builtin"
kind = "llm"
path = "builtin"
`), 0o600))
	env := lookup(map[string]string{"LECTERN_PLUGINS_FILE": file})

	t.Run("own deadline", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := runPlugins(t.Context(), []string{"check", "--timeout", "8s"}, env, &stdout, &stderr)
		out := stdout.String()
		require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, stderr.String())
		require.Less(t, time.Since(start), 19*time.Second, "the slow source's deadline ended its checks:\n%s", out)
		require.Contains(t, out, "FAIL  source.slow 0.1.0 (protocol 1)")
		require.Contains(t, out, "did not finish its checks within its deadline of 8s (--timeout)")
		require.Contains(t, out, "PASS  llm.builtin")
		require.Contains(t, out, "1 of 2 plugins failed")
	})

	t.Run("ctrl-c", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Long enough for the builtin on a loaded machine, well inside the slow
		// source's first 20 s call.
		time.AfterFunc(10*time.Second, cancel)
		var stdout, stderr bytes.Buffer
		code := runPlugins(ctx, []string{"check"}, env, &stdout, &stderr)
		out := stdout.String()
		require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, stderr.String())
		require.Contains(t, out, "PASS  llm.builtin", "the builtin's checks finished long before Ctrl-C:\n%s", out)
		require.Contains(t, out, "FAIL  source.slow  interrupted before its checks finished")
		require.NotContains(t, out, "context canceled")
		require.Contains(t, out, "1 of 2 plugins failed")
	})
}
