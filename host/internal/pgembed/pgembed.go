// Package pgembed runs a private PostgreSQL cluster with the machine's own PostgreSQL
// binaries: the embedded default of `lectern serve` when DATABASE_URL is unset, and
// the one cluster a `make test` run shares among its test packages.
//
// The cluster listens on a Unix socket only (listen_addresses is empty), in a
// directory of mode 0700, so only its owner can connect. When the host runs as root,
// initdb and the server run as the `postgres` system user, because PostgreSQL refuses
// to run as root.
package pgembed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MinMajorVersion is the oldest PostgreSQL the schema supports (it uses UNIQUE NULLS
// NOT DISTINCT, new in 15).
const MinMajorVersion = 15

// TestURLEnv names the variable through which `lectern devdb exec` hands the
// cluster's URL to the test harness (host/internal/dbtest).
const TestURLEnv = "TEST_DATABASE_URL"

// SuperUser is the database superuser that initdb creates. The host uses it only to
// create databases and roles and to run migrations.
const SuperUser = "lectern"

// AppRole is the login role the host's own connections use: no superuser, no
// CREATEDB, CREATEROLE, REPLICATION or BYPASSRLS, so it cannot switch the audit log's
// rules off (docs/database.md). The host hands it the schema after every migration
// run (store.HandOver). Like every local role it logs in over the private socket
// without a password.
const AppRole = "lectern_app"

// Options says where and how to run a cluster.
type Options struct {
	// Dir holds the cluster: data/ (PGDATA), run/ (the socket) and postgres.log.
	// It is created when missing.
	Dir string

	// Durable keeps fsync and full-page writes on. Set for real data (make run);
	// leave false for throwaway test clusters, which then run several times faster.
	Durable bool

	// Install lets Start install PostgreSQL through the system package manager when
	// no usable binaries are found and the process runs as root.
	Install bool

	// MaxConnections is the server's max_connections. Default 100.
	MaxConnections int

	// SharedBuffersMB is the server's shared_buffers in megabytes. Default
	// DefaultSharedBuffersMB of the machine's memory.
	SharedBuffersMB int

	// Logger receives progress lines. Default slog.Default().
	Logger *slog.Logger
}

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	dir       string
	dataDir   string
	socketDir string
	binDir    string
	owner     *sysUser // nil when the cluster runs as the current user
	adopted   bool     // the server was already running when Start found it
	log       *slog.Logger
}

// Start finds PostgreSQL binaries (installing them when allowed), creates the cluster
// on first use and starts the server. A server already running on the same data
// directory (another Lectern command's, or one left behind by a killed process) is
// adopted. Call Release when done (Stop and Remove to end the cluster regardless).
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("pgembed: Options.Dir is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = 100
	}
	if opts.SharedBuffersMB == 0 {
		opts.SharedBuffersMB = DefaultSharedBuffersMB(memoryMB())
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgembed: %w", err)
	}
	binDir, err := findBinaries(ctx, opts.Install, opts.Logger)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, dataDir: filepath.Join(dir, "data"), binDir: binDir, log: opts.Logger}
	if os.Geteuid() == 0 {
		if c.owner, err = lookupSysUser("postgres"); err != nil {
			return nil, fmt.Errorf("pgembed: running as root, PostgreSQL must run as the postgres system user: %w", err)
		}
	}
	c.socketDir = socketDirFor(dir)

	if err := c.prepareDirs(); err != nil {
		return nil, err
	}
	if !fileExists(filepath.Join(c.dataDir, "PG_VERSION")) {
		if err := c.initdb(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.writeConf(opts); err != nil {
		return nil, err
	}
	if c.running(ctx) {
		c.log.Info("adopting running PostgreSQL cluster", "dir", c.dir)
		c.adopted = true
		return c, nil
	}
	logFile := filepath.Join(c.dir, "postgres.log")
	if err := c.run(ctx, "pg_ctl", "start", "-D", c.dataDir, "-l", logFile, "-w", "-t", "60", "-s"); err != nil {
		return nil, fmt.Errorf("pgembed: start server (see %s): %w", logFile, err)
	}
	c.log.Info("started private PostgreSQL cluster", "dir", c.dir, "socket", c.socketDir)
	return c, nil
}

// Dir is the folder holding the cluster.
func (c *Cluster) Dir() string { return c.dir }

// ConnString returns a connection URL for database db as the superuser, over the
// cluster's Unix socket.
func (c *Cluster) ConnString(db string) string { return c.connString(SuperUser, db) }

// AppConnString returns a connection URL for database db as AppRole, over the
// cluster's Unix socket. Call EnsureAppRole first.
func (c *Cluster) AppConnString(db string) string { return c.connString(AppRole, db) }

func (c *Cluster) connString(role, db string) string {
	q := url.Values{}
	q.Set("host", c.socketDir)
	q.Set("sslmode", "disable")
	return (&url.URL{Scheme: "postgres", User: url.User(role), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// EnsureDatabase creates database name when it does not exist yet.
func (c *Cluster) EnsureDatabase(ctx context.Context, name string) error {
	if !regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`).MatchString(name) {
		return fmt.Errorf("pgembed: invalid database name %q", name)
	}
	out, err := c.output(ctx, "psql", "-h", c.socketDir, "-U", SuperUser, "-d", "postgres", "-XAtqc",
		"SELECT 1 FROM pg_database WHERE datname = '"+name+"'")
	if err != nil {
		return fmt.Errorf("pgembed: look up database %s: %w", name, err)
	}
	if strings.TrimSpace(out) == "1" {
		return nil
	}
	if err := c.run(ctx, "createdb", "-h", c.socketDir, "-U", SuperUser, name); err != nil {
		return fmt.Errorf("pgembed: create database %s: %w", name, err)
	}
	return nil
}

// ensureAppRole creates AppRole, or gives it back the attributes it must have.
// Roles are per cluster, and two commands may start at once: a concurrent CREATE is
// not an error, and ALTER runs only when something differs (two concurrent ALTERs
// of one role would fail).
const ensureAppRole = `DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '` + AppRole + `') THEN
        BEGIN
            CREATE ROLE ` + AppRole + ` LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    ELSIF EXISTS (SELECT FROM pg_roles WHERE rolname = '` + AppRole + `'
                     AND (rolsuper OR NOT rolcanlogin OR rolcreatedb OR rolcreaterole OR rolreplication OR rolbypassrls)) THEN
        ALTER ROLE ` + AppRole + ` LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
    END IF;
END
$$`

// EnsureAppRole creates the login role AppRole when it does not exist yet, and
// takes back any attribute (SUPERUSER, CREATEDB, ...) it was given since. It owns
// nothing until the host hands it a database (store.HandOver).
func (c *Cluster) EnsureAppRole(ctx context.Context) error {
	if _, err := c.output(ctx, "psql", "-h", c.socketDir, "-U", SuperUser, "-d", "postgres", "-XAtqc", ensureAppRole); err != nil {
		return fmt.Errorf("pgembed: create role %s: %w", AppRole, err)
	}
	return nil
}

// Adopted reports whether the server was already running when Start found it, so
// this process did not start it.
func (c *Cluster) Adopted() bool { return c.adopted }

// releaseWait is how long Release waits for the sessions of the caller's own, just
// closed, pool to leave before it counts the remaining ones as someone else's.
const releaseWait = 2 * time.Second

// Release is Stop for a command that shares the cluster: it stops the server only
// when this process started it and no one else is connected. A server it adopted
// (`lectern serve` running beside `lectern import`), or one another process still
// uses (a serve that adopted it meanwhile), keeps running, and its next user adopts
// it. Close the caller's own pool first.
func (c *Cluster) Release(ctx context.Context) error {
	if c.adopted {
		c.log.Info("leaving the PostgreSQL cluster running: this process did not start it", "dir", c.dir)
		return nil
	}
	deadline := time.Now().Add(releaseWait)
	for {
		n, err := c.otherSessions(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return c.Stop(ctx)
		}
		if time.Now().After(deadline) {
			c.log.Info("leaving the PostgreSQL cluster running: another process is connected", "dir", c.dir, "sessions", n)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// otherSessions counts the client sessions other than the one asking.
func (c *Cluster) otherSessions(ctx context.Context) (int, error) {
	if !c.running(ctx) {
		return 0, nil
	}
	out, err := c.output(ctx, "psql", "-h", c.socketDir, "-U", SuperUser, "-d", "postgres", "-XAtqc",
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
	if err != nil {
		return 0, fmt.Errorf("pgembed: count sessions: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("pgembed: count sessions: %q is not a number", strings.TrimSpace(out))
	}
	return n, nil
}

// Stop shuts the server down (fast mode: open sessions are rolled back) and waits.
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.running(ctx) {
		return nil
	}
	if err := c.run(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w", "-t", "60", "-s"); err != nil {
		return fmt.Errorf("pgembed: stop server: %w", err)
	}
	c.log.Info("stopped private PostgreSQL cluster", "dir", c.dir)
	return nil
}

// Crash stops the server at once, as a power cut or a kill -9 would: no
// checkpoint, every session cut mid-statement; the next Start recovers from the
// write-ahead log. It is for fault-injection tests (host/internal/faulttest).
func (c *Cluster) Crash(ctx context.Context) error {
	if err := c.run(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "immediate", "-w", "-t", "60", "-s"); err != nil {
		return fmt.Errorf("pgembed: crash server: %w", err)
	}
	return nil
}

// Remove stops the server and deletes the cluster's folder, and its socket folder
// when that lives elsewhere.
func (c *Cluster) Remove(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return err
	}
	if !strings.HasPrefix(c.socketDir, c.dir+string(filepath.Separator)) {
		_ = os.RemoveAll(c.socketDir)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("pgembed: remove %s: %w", c.dir, err)
	}
	return nil
}

func (c *Cluster) running(ctx context.Context) bool {
	if !fileExists(filepath.Join(c.dataDir, "postmaster.pid")) {
		return false
	}
	// pg_ctl status exits 0 when the server runs, 3 when it does not.
	return c.run(ctx, "pg_ctl", "status", "-D", c.dataDir) == nil
}

func (c *Cluster) prepareDirs() error {
	// The folder around the cluster (LECTERN_DATA_DIR) is ours: the postgres user
	// may pass through it (x) but not list it.
	parent := filepath.Dir(c.dir)
	if err := os.MkdirAll(parent, 0o711); err != nil {
		return fmt.Errorf("pgembed: create %s: %w", parent, err)
	}
	if c.owner != nil {
		if fi, err := os.Stat(parent); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(parent, fi.Mode().Perm()|0o001); err != nil {
				return fmt.Errorf("pgembed: let the postgres user pass through %s: %w", parent, err)
			}
		}
	}
	for _, d := range []string{c.dir, c.socketDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("pgembed: create %s: %w", d, err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
		if err := c.chown(d); err != nil {
			return err
		}
	}
	if c.owner != nil {
		// The postgres user must be able to reach the folder through its parents.
		if err := c.runIn(context.Background(), c.dir, "pg_ctl", "--version"); err != nil {
			return fmt.Errorf("pgembed: the postgres system user cannot enter %s (check the permissions of its parent folders): %w", c.dir, err)
		}
	}
	return nil
}

func (c *Cluster) initdb(ctx context.Context) error {
	c.log.Info("creating private PostgreSQL cluster", "dir", c.dataDir)
	err := c.run(ctx, "initdb", "-D", c.dataDir, "-U", SuperUser, "-E", "UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host=reject", "-N")
	if err != nil {
		// Leave no half-made cluster behind for the next start to trip over.
		_ = os.RemoveAll(c.dataDir)
		return fmt.Errorf("pgembed: initdb: %w", err)
	}
	conf := filepath.Join(c.dataDir, "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n# Lectern writes its settings into lectern.conf at every start.\ninclude_if_exists = 'lectern.conf'\n"); err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	return nil
}

// writeConf rewrites lectern.conf at every start, so a moved checkout or a changed
// option takes effect.
func (c *Cluster) writeConf(opts Options) error {
	var b strings.Builder
	fmt.Fprintf(&b, "listen_addresses = ''\n")
	fmt.Fprintf(&b, "unix_socket_directories = '%s'\n", strings.ReplaceAll(c.socketDir, "'", "''"))
	fmt.Fprintf(&b, "unix_socket_permissions = 0700\n")
	fmt.Fprintf(&b, "max_connections = %d\n", opts.MaxConnections)
	fmt.Fprintf(&b, "shared_buffers = %dMB\n", opts.SharedBuffersMB)
	fmt.Fprintf(&b, "timezone = 'UTC'\n")
	if !opts.Durable {
		fmt.Fprintf(&b, "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
	}
	path := filepath.Join(c.dataDir, "lectern.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pgembed: write %s: %w", path, err)
	}
	return c.chown(path)
}

func (c *Cluster) chown(path string) error {
	if c.owner == nil {
		return nil
	}
	if err := os.Chown(path, int(c.owner.uid), int(c.owner.gid)); err != nil {
		return fmt.Errorf("pgembed: hand %s to the postgres user: %w", path, err)
	}
	return nil
}

func (c *Cluster) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	if c.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: c.owner.uid, Gid: c.owner.gid}}
		cmd.Env = append(cmd.Env, "HOME="+c.owner.home, "USER=postgres", "LOGNAME=postgres")
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	return c.runIn(ctx, "/", name, args...)
}

func (c *Cluster) runIn(ctx context.Context, dir, name string, args ...string) error {
	_, err := c.outputIn(ctx, dir, name, args...)
	return err
}

func (c *Cluster) output(ctx context.Context, name string, args ...string) (string, error) {
	return c.outputIn(ctx, "/", name, args...)
}

func (c *Cluster) outputIn(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := c.command(ctx, dir, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if msg != "" {
			return "", fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return stdout.String(), nil
}

// socketDirFor keeps the socket path under the 107-byte limit of sun_path: inside the
// cluster folder when it fits, else in a per-cluster folder under the temp directory.
func socketDirFor(dir string) string {
	in := filepath.Join(dir, "run")
	if len(in)+len("/.s.PGSQL.5432") < 100 {
		return in
	}
	return filepath.Join(os.TempDir(), "lectern-pg-"+strconv.FormatUint(uint64(fnv32(dir)), 36))
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
