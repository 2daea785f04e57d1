package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// binaryDirs are the usual homes of PostgreSQL's server binaries, tried after PATH.
var binaryDirs = []string{
	"/usr/lib/postgresql/*/bin",          // Debian, Ubuntu
	"/usr/pgsql-*/bin",                   // PGDG packages on RHEL, Fedora
	"/usr/local/pgsql/bin",               // source builds
	"/opt/homebrew/opt/postgresql@*/bin", // Homebrew on Apple silicon
	"/usr/local/opt/postgresql@*/bin",    // Homebrew on Intel
	"/usr/libexec/postgresql*",           // Alpine, Fedora's own packages
	"/usr/bin",
}

var versionLine = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// findBinaries returns the folder holding initdb, pg_ctl and postgres of a supported
// version. It looks on PATH, then in the usual folders (newest version first), and, when
// allowed and running as root (or with password-less sudo), installs PostgreSQL
// through the system package manager.
func findBinaries(ctx context.Context, install bool, log *slog.Logger) (string, error) {
	dir, found, err := searchBinaries(ctx)
	if err == nil {
		return dir, nil
	}
	if !install || (os.Geteuid() != 0 && !canSudo(ctx)) {
		if found != "" {
			return "", err
		}
		return "", fmt.Errorf("pgembed: PostgreSQL %d or newer was not found on PATH or in the usual folders; install it (Debian: apt-get install postgresql) or set DATABASE_URL", MinMajorVersion)
	}
	log.Info("PostgreSQL not found: installing it with the system package manager")
	if ierr := installPostgres(ctx); ierr != nil {
		return "", fmt.Errorf("pgembed: install PostgreSQL: %w", ierr)
	}
	dir, _, err = searchBinaries(ctx)
	return dir, err
}

// searchBinaries returns the first usable folder. found names an unusable one (too
// old) so the error can say why it was passed over.
func searchBinaries(ctx context.Context) (dir, found string, err error) {
	var candidates []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, pattern := range binaryDirs {
		matches, _ := filepath.Glob(pattern)
		// Newest version first: /usr/lib/postgresql/17/bin before .../15/bin.
		sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
		candidates = append(candidates, matches...)
	}
	err = errors.New("pgembed: no PostgreSQL binaries found")
	for _, d := range candidates {
		if !isExecutable(filepath.Join(d, "initdb")) || !isExecutable(filepath.Join(d, "pg_ctl")) || !isExecutable(filepath.Join(d, "postgres")) {
			continue
		}
		out, cerr := exec.CommandContext(ctx, filepath.Join(d, "pg_ctl"), "--version").Output()
		if cerr != nil {
			continue
		}
		m := versionLine.FindSubmatch(out)
		if m == nil {
			continue
		}
		major, _ := strconv.Atoi(string(m[1]))
		if major < MinMajorVersion {
			found = d
			err = fmt.Errorf("pgembed: PostgreSQL %d in %s is too old: Lectern needs %d or newer", major, d, MinMajorVersion)
			continue
		}
		return d, "", nil
	}
	return "", found, err
}

var digits = regexp.MustCompile(`\d+`)

func versionOf(path string) int {
	n, _ := strconv.Atoi(digits.FindString(path))
	return n
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// installPostgres installs the distribution's PostgreSQL server package.
func installPostgres(ctx context.Context) error {
	type manager struct {
		bin   string
		steps [][]string
	}
	managers := []manager{
		{"apt-get", [][]string{{"apt-get", "update", "-q"}, {"apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql", "postgresql-contrib"}}},
		{"dnf", [][]string{{"dnf", "install", "-y", "postgresql-server", "postgresql-contrib"}}},
		{"yum", [][]string{{"yum", "install", "-y", "postgresql-server", "postgresql-contrib"}}},
		{"apk", [][]string{{"apk", "add", "--no-cache", "postgresql", "postgresql-contrib"}}},
		{"zypper", [][]string{{"zypper", "--non-interactive", "install", "postgresql-server", "postgresql-contrib"}}},
	}
	for _, m := range managers {
		if _, err := exec.LookPath(m.bin); err != nil {
			continue
		}
		for _, step := range m.steps {
			if os.Geteuid() != 0 {
				// A CI runner is often a user with password-less sudo.
				step = append([]string{"sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"}, step...)
			}
			cmd := exec.CommandContext(ctx, step[0], step[1:]...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%v: %w", step, err)
			}
		}
		return nil
	}
	return errors.New("no supported package manager (apt-get, dnf, yum, apk, zypper) found")
}

// canSudo reports whether password-less sudo is available.
func canSudo(ctx context.Context) bool {
	if _, err := exec.LookPath("sudo"); err != nil {
		return false
	}
	return exec.CommandContext(ctx, "sudo", "-n", "true").Run() == nil
}

type sysUser struct {
	uid, gid uint32
	home     string
}

func lookupSysUser(name string) (*sysUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return &sysUser{uid: uint32(uid), gid: uint32(gid), home: u.HomeDir}, nil
}
