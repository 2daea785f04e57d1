package pluginhost

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestParseGoodFile(t *testing.T) {
	t.Parallel()
	data := `# comment
[[plugin]]
name = "example"
kind = "source"
path = "bin/plugins/example"
version = ">= 0.1.0, < 1.0.0"
call_timeout = "5s"
max_concurrency = 2
sha256 = "` + strings.Repeat("ab", 32) + `"

[plugin.settings]
delay = "1ms"
corpus_size = 50

[[plugin]]
name = "gateway"
kind = "llm"
path = "/opt/lectern/openai"
enabled = false
`
	entries, err := Parse("/etc/lectern/plugins.toml", []byte(data))
	require.NoError(t, err)
	require.Len(t, entries, 2)
	e := entries[0]
	require.Equal(t, "example", e.Name)
	require.Equal(t, protocol.KindSource, e.Kind)
	require.Equal(t, "/etc/lectern/bin/plugins/example", e.Path, "relative paths are relative to the file")
	require.Equal(t, ">= 0.1.0, < 1.0.0", e.Version.String())
	require.True(t, e.Enabled)
	require.Equal(t, 5*time.Second, e.CallTimeout)
	require.Equal(t, 2, e.MaxConcurrency)
	require.Len(t, e.SHA256, 32)
	require.Equal(t, map[string]any{"delay": "1ms", "corpus_size": int64(50)}, e.Settings)
	require.Equal(t, 2, e.Line)
	require.Equal(t, "source.example", e.ID())

	g := entries[1]
	require.False(t, g.Enabled)
	require.Equal(t, "/opt/lectern/openai", g.Path)
	require.Equal(t, DefaultCallTimeout, g.CallTimeout)
	require.Equal(t, DefaultMaxConcurrency, g.MaxConcurrency)
	require.Equal(t, 15, g.Line)
}

func TestParseRefusesBadEntriesWithFileLineAndReason(t *testing.T) {
	t.Parallel()
	head := "[[plugin]]\nname = \"a\"\nkind = \"source\"\npath = \"x\"\n"
	tests := []struct {
		name string
		data string
		want string
	}{
		{"syntax error", "[[plugin]]\nname = \n", "plugins.toml:2: "},
		{"unknown top-level key", "colour = 1\n" + head, `plugins.toml:1: unknown key "colour"`},
		{"unknown entry key", head + "binary = \"y\"\n", `plugins.toml:5: unknown key "binary" in [[plugin]]`},
		{"missing name", "[[plugin]]\nkind = \"source\"\npath = \"x\"\n", "plugins.toml:1: [[plugin]] has no name"},
		{"missing path", "[[plugin]]\nname = \"a\"\nkind = \"source\"\n", "plugins.toml:1: [[plugin]] has no path"},
		{"bad name", "[[plugin]]\nname = \"Arxiv!\"\nkind = \"source\"\npath = \"x\"\n", `plugins.toml:2: name "Arxiv!" must be lowercase`},
		{"duplicate name", head + head, `plugins.toml:6: name "a" is already used by the plugin on line 1`},
		{"bad kind", "[[plugin]]\nname = \"a\"\nkind = \"sauce\"\npath = \"x\"\n", `plugins.toml:3: kind "sauce" is not one of`},
		{"kind not a string", "[[plugin]]\nname = \"a\"\nkind = 3\npath = \"x\"\n", "plugins.toml:3: kind must be a string"},
		{"bad version", head + "version = \">= one\"\n", `plugins.toml:5: version: "one" is not a semantic version`},
		{"enabled not bool", head + "enabled = \"yes\"\n", "plugins.toml:5: enabled must be true or false"},
		{"bad sha", head + "sha256 = \"abc\"\n", "plugins.toml:5: sha256 must be 64 hex digits"},
		{"bad timeout", head + "call_timeout = \"soon\"\n", `plugins.toml:5: call_timeout "soon" must be a positive duration`},
		{"endless timeout", head + "call_timeout = \"99999h\"\n", `plugins.toml:5: call_timeout "99999h" must be a positive duration up to 24h0m0s`},
		{"bad concurrency", head + "max_concurrency = 0\n", "plugins.toml:5: max_concurrency must be a whole number"},
		{"settings not a table", head + "settings = 3\n", "plugins.toml:5: settings must be a table"},
		{"secret in settings", head + "[plugin.settings]\nmode = \"x\"\napi_key = \"sk-123\"\n", `plugins.toml:7: setting "api_key" looks like a credential`},
		{"plugin not an array", "[plugin]\nname = \"a\"\n", "plugins.toml:1: plugin must be an array of tables"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("plugins.toml", []byte(tc.data))
			require.Error(t, err)
			var errs ConfigErrors
			require.True(t, errors.As(err, &errs), "want ConfigErrors, got %T", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	t.Parallel()
	_, err := Parse("p.toml", []byte("[[plugin]]\nname = \"A\"\nkind = \"x\"\npath = \"y\"\n"))
	var errs ConfigErrors
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs, 2)
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entries, err := LoadFile(filepath.Join(dir, "absent.toml"))
	require.NoError(t, err, "a missing file is an empty list")
	require.Empty(t, entries)

	path := filepath.Join(dir, "plugins.toml")
	require.NoError(t, os.WriteFile(path, []byte("[[plugin]]\nname = \"a\"\nkind = \"source\"\npath = \"bin/a\"\n"), 0o600))
	entries, err = LoadFile(path)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "bin/a"), entries[0].Path)
}

func TestRepositoryPluginsFileIsValid(t *testing.T) {
	t.Parallel()
	entries, err := LoadFile(filepath.Join(repoRoot(t), "plugins.toml"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}

func TestRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rng, version string
		want         bool
	}{
		{"", "anything", true},
		{">= 0.1.0, < 1.0.0", "0.1.0", true},
		{">= 0.1.0, < 1.0.0", "0.9.12", true},
		{">= 0.1.0, < 1.0.0", "1.0.0", false},
		{">= 0.1.0, < 1.0.0", "0.0.9", false},
		{"= 1.2.3", "1.2.3", true},
		{"1.2.3", "v1.2.3", true},
		{"!= 1.2.3", "1.2.3", false},
		{"> 1.0.0", "1.0.1-rc.1", true},
		{">= 1.0.0", "1.0.0-rc.1", false},
		{"<= 2.0.0", "2.0.0+build.5", true},
		{">= 1.0.0", "not-a-version", false},
	}
	for _, tc := range tests {
		t.Run(tc.rng+" "+tc.version, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRange(tc.rng)
			if tc.rng == "" {
				r, err = Range{}, nil
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, r.Allows(tc.version))
		})
	}
	for _, bad := range []string{">=", "1.2", "a.b.c", ">= 1.0.0,", "~> 1.0.0"} {
		_, err := ParseRange(bad)
		require.Error(t, err, bad)
	}
}
