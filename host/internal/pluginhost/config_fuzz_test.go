package pluginhost

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParse reads arbitrary bytes as plugins.toml, seeded with the repository's
// own file and the test files: no panic; a file it accepts has entries that are
// complete (name, kind, path, a positive timeout and concurrency, a line inside
// the file); a file it refuses is refused with ConfigErrors naming lines inside
// the file.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "..", "plugins.toml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("[[plugin]]\nname = \"x\"\nkind = \"source\"\npath = \"bin/x\"\nversion = \">= 0.1.0, < 2.0.0\"\nsha256 = \"00\"\ncall_timeout = \"1s\"\nmax_concurrency = 2\n[plugin.settings]\nrate = 1.5\n"))
	f.Add([]byte("[[plugin]]\nname = \"X\"\nkind = \"bogus\"\nunknown = 1\n[plugin.settings]\napi_key = \"s\"\n[other]\n"))
	f.Add([]byte("plugin = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		entries, err := Parse("plugins.toml", data)
		if err != nil {
			var ces ConfigErrors
			if !errors.As(err, &ces) || len(ces) == 0 {
				t.Fatalf("refused with %T, not ConfigErrors: %v", err, err)
			}
			for _, ce := range ces {
				if ce.Line < 0 || ce.Line > lines+1 {
					t.Fatalf("an error at line %d of a %d-line file: %v", ce.Line, lines, ce)
				}
				if ce.Reason == "" {
					t.Fatal("an error without a reason")
				}
			}
			return
		}
		for _, e := range entries {
			if e.Name == "" || e.Kind == "" || e.Path == "" {
				t.Fatalf("an incomplete entry accepted: %+v", e)
			}
			if e.CallTimeout <= 0 || e.CallTimeout > 365*24*time.Hour || e.MaxConcurrency <= 0 {
				t.Fatalf("entry %s accepted with timeout %s and concurrency %d", e.ID(), e.CallTimeout, e.MaxConcurrency)
			}
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %s at line %d of %d", e.ID(), e.Line, lines)
			}
		}
	})
}
