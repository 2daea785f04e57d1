package backup

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/pgembed"
)

// serverMajor is the PostgreSQL major version of the server behind pool.
func serverMajor(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var num int
	if err := pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&num); err != nil {
		return 0, fmt.Errorf("backup: read the server's version: %w", err)
	}
	return num / 10000, nil
}

// pgCommand builds a pg_dump or pg_restore call against database name. The
// password travels in PGPASSWORD, not on the command line other processes can
// read.
func (s *Service) pgCommand(ctx context.Context, major int, tool, name string, args ...string) (*exec.Cmd, error) {
	bin, err := pgembed.FindClient(ctx, tool, major)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(withDatabase(s.db.URL, name))
	if err != nil {
		return nil, fmt.Errorf("backup: database URL: %w", err)
	}
	env := os.Environ()
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			env = append(env, "PGPASSWORD="+pw)
			u.User = url.User(u.User.Username())
		}
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--dbname="+u.String())...)
	cmd.Env = env
	return cmd, nil
}

// runTool runs cmd, and on failure returns an error carrying the tool's last
// lines of output for the log.
func runTool(cmd *exec.Cmd, tool string) error {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("backup: %s failed: %w: %s", tool, err, lastLines(stderr.String(), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// tableCounts counts the rows of every table of the database, in q's snapshot.
// Keys are "schema.table".
func tableCounts(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (map[string]int64, error) {
	rows, err := q.Query(ctx, `
		SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		   AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
		 ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("backup: list tables: %w", err)
	}
	var names [][2]string
	for rows.Next() {
		var n [2]string
		if err := rows.Scan(&n[0], &n[1]); err != nil {
			rows.Close()
			return nil, fmt.Errorf("backup: list tables: %w", err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backup: list tables: %w", err)
	}
	out := make(map[string]int64, len(names))
	for _, n := range names {
		var count int64
		if err := q.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{n[0], n[1]}.Sanitize()).Scan(&count); err != nil {
			return nil, fmt.Errorf("backup: count %s.%s: %w", n[0], n[1], err)
		}
		out[n[0]+"."+n[1]] = count
	}
	return out, nil
}
