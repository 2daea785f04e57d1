package pgembed

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

// FindClient returns the path of PostgreSQL client program name (pg_dump,
// pg_restore) of major version major, looked for where the server binaries are
// (the usual versioned folders, then PATH). A dump must come from the client of the
// server's own major version: an older pg_dump refuses a newer server, and a
// newer one writes archives an older pg_restore cannot read.
func FindClient(ctx context.Context, name string, major int) (string, error) {
	// The versioned folders first: Debian's /usr/bin/pg_dump is a wrapper that
	// picks a version by its own rules.
	var candidates []string
	for _, pattern := range binaryDirs {
		matches, _ := filepath.Glob(pattern)
		sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
		for _, d := range matches {
			candidates = append(candidates, filepath.Join(d, name))
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if !isExecutable(p) {
			continue
		}
		out, err := exec.CommandContext(ctx, p, "--version").Output()
		if err != nil {
			continue
		}
		m := versionLine.FindSubmatch(out)
		if m == nil {
			continue
		}
		if v, _ := strconv.Atoi(string(m[1])); v == major {
			return p, nil
		}
	}
	return "", fmt.Errorf("pgembed: no %s of PostgreSQL %d found on PATH or in the usual folders; install the PostgreSQL %d client (Debian: apt-get install postgresql-client-%d)", name, major, major, major)
}
