package pgembed

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestSocketDirStaysUnderTheSunPathLimit(t *testing.T) {
	t.Parallel()
	short := "/srv/lectern/pg"
	require.Equal(t, "/srv/lectern/pg/run", socketDirFor(short))

	long := "/srv/" + strings.Repeat("very-long-folder-name/", 6) + "pg"
	got := socketDirFor(long)
	require.True(t, strings.HasPrefix(got, filepath.Join(os.TempDir(), "lectern-pg-")), got)
	require.Less(t, len(got)+len("/.s.PGSQL.5432"), 100)
	require.Equal(t, got, socketDirFor(long), "the same cluster always gets the same socket folder")
	require.NotEqual(t, got, socketDirFor(long+"2"))
}

func TestFindsASupportedPostgres(t *testing.T) {
	t.Parallel()
	dir, _, err := searchBinaries(context.Background())
	require.NoError(t, err, "this machine needs PostgreSQL %d+ (make test installs it)", MinMajorVersion)
	for _, bin := range []string{"initdb", "pg_ctl", "postgres"} {
		require.True(t, isExecutable(filepath.Join(dir, bin)), bin)
	}
}

func TestVersionOrder(t *testing.T) {
	t.Parallel()
	require.Equal(t, 17, versionOf("/usr/lib/postgresql/17/bin"))
	require.Equal(t, 16, versionOf("/usr/pgsql-16/bin"))
	require.Equal(t, 0, versionOf("/usr/local/pgsql/bin"))
}

// testOptions places a cluster in a new folder outside the test's own temporary
// folder (its path must stay short enough for a socket name, and passable by the
// postgres user), removed at the end of the test.
func testOptions(t *testing.T) Options {
	t.Helper()
	dir, err := os.MkdirTemp("", "lectern-pgembed-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dir) })
	return Options{Dir: filepath.Join(dir, "pg"), Logger: slog.New(slog.DiscardHandler)}
}

// TestClusterIsSocketOnlyAndAdoptable starts a real cluster, checks it opens no TCP
// port, then starts it again on the same folder, as a host restarted after a crash
// would, and finds the running server adopted.
func TestClusterIsSocketOnlyAndAdoptable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testOptions(t)

	c, err := Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Remove(context.Background()) })

	conn, err := pgx.Connect(ctx, c.ConnString("postgres"))
	require.NoError(t, err)
	var listen, perms string
	var buffersMB int
	require.NoError(t, conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen))
	require.NoError(t, conn.QueryRow(ctx, "SHOW unix_socket_permissions").Scan(&perms))
	require.NoError(t, conn.QueryRow(ctx, "SELECT setting::int * 8 / 1024 FROM pg_settings WHERE name = 'shared_buffers'").Scan(&buffersMB))
	require.Empty(t, listen, "no TCP listener")
	require.Equal(t, "0700", perms)
	require.Equal(t, DefaultSharedBuffersMB(memoryMB()), buffersMB, "shared_buffers sized to the machine")
	conn.Close(ctx)

	fi, err := os.Stat(c.socketDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	again, err := Start(ctx, opts)
	require.NoError(t, err, "a second start adopts the running server")
	require.NoError(t, again.EnsureDatabase(ctx, "lectern"))
	require.NoError(t, again.EnsureDatabase(ctx, "lectern"), "EnsureDatabase is idempotent")
	require.Error(t, again.EnsureDatabase(ctx, "bad name; DROP"))

	require.NoError(t, again.Stop(ctx))
	require.NoFileExists(t, filepath.Join(opts.Dir, "data", "postmaster.pid"))
	require.NoError(t, again.Remove(ctx))
	require.NoDirExists(t, opts.Dir)
}

// TestReleaseLeavesAServerOthersUse is `lectern import` beside `make run`: a command
// that adopted the running server never stops it, and the one that started it leaves
// it up while another process is connected (issue 14 item 12).
func TestReleaseLeavesAServerOthersUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testOptions(t)
	pid := filepath.Join(opts.Dir, "data", "postmaster.pid")

	first, err := Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = first.Remove(context.Background()) })
	require.False(t, first.Adopted())

	// The second command (import) adopts the server and releases it.
	second, err := Start(ctx, opts)
	require.NoError(t, err)
	require.True(t, second.Adopted())
	require.NoError(t, second.Release(ctx))
	require.FileExists(t, pid, "a command that adopted the server leaves it running")

	// The starter releases while someone else (a serve that adopted it) is connected.
	conn, err := pgx.Connect(ctx, first.ConnString("postgres"))
	require.NoError(t, err)
	require.NoError(t, first.Release(ctx))
	require.FileExists(t, pid, "a server someone still uses keeps running")
	require.NoError(t, conn.Ping(ctx), "and their session still works")
	require.NoError(t, conn.Close(ctx))

	require.NoError(t, first.Release(ctx))
	require.NoFileExists(t, pid, "the starter stops its server once nobody else uses it")
}

// TestAppRoleIsALoginWithoutPowers checks the role the host connects as: it logs in
// over the socket, has none of the attributes that bypass the audit log's rules,
// and gets them taken back when someone gave them to it.
func TestAppRoleIsALoginWithoutPowers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := Start(ctx, testOptions(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Remove(context.Background()) })

	require.NoError(t, c.EnsureAppRole(ctx))
	require.NoError(t, c.EnsureAppRole(ctx), "EnsureAppRole is idempotent")
	app, err := pgx.Connect(ctx, c.AppConnString("postgres"))
	require.NoError(t, err, "the role logs in over the socket")
	defer app.Close(ctx)
	powers := func() string {
		t.Helper()
		var role string
		var super, createDB, createRole, replication, bypassRLS bool
		require.NoError(t, app.QueryRow(ctx, `
			SELECT current_user, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls
			  FROM pg_roles WHERE rolname = current_user`).Scan(&role, &super, &createDB, &createRole, &replication, &bypassRLS))
		require.Equal(t, AppRole, role)
		return fmt.Sprint(super, createDB, createRole, replication, bypassRLS)
	}
	require.Equal(t, "false false false false false", powers())

	su, err := pgx.Connect(ctx, c.ConnString("postgres"))
	require.NoError(t, err)
	defer su.Close(ctx)
	_, err = su.Exec(ctx, "ALTER ROLE "+AppRole+" SUPERUSER CREATEROLE BYPASSRLS")
	require.NoError(t, err)
	require.Equal(t, "true false true false true", powers())
	require.NoError(t, c.EnsureAppRole(ctx))
	require.Equal(t, "false false false false false", powers(), "the next start takes them back")
}
