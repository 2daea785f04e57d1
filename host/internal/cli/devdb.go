package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"github.com/lectern-research/lectern/host/internal/pgembed"
)

// runDevDB implements `lectern devdb exec [--dir DIR] -- COMMAND [ARGS...]`: it starts
// a throwaway private cluster (fsync off), runs COMMAND with TEST_DATABASE_URL pointing
// at it, then stops the cluster and deletes it. `make test` runs the whole suite this
// way, so every test package of a run shares one cluster and nothing is left behind.
func runDevDB(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(stderr, "usage: lectern devdb exec [--dir DIR] -- COMMAND [ARGS...]")
		return 2
	}
	fs := newFlagSet("devdb exec", stderr)
	dir := fs.String("dir", "", "cluster folder (default: a new temporary folder)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	command := fs.Args()
	if len(command) == 0 {
		fmt.Fprintln(stderr, "lectern devdb exec: no command given (put it after --)")
		return 2
	}
	clusterDir := *dir
	if clusterDir == "" {
		tmp, err := os.MkdirTemp("", "lectern-devdb-")
		if err != nil {
			fmt.Fprintf(stderr, "lectern devdb: %v\n", err)
			return 1
		}
		clusterDir = tmp
	}

	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: clusterDir, Install: true, MaxConnections: 300,
		Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		fmt.Fprintf(stderr, "lectern devdb: %s\n", oneLine(err.Error()))
		_ = os.RemoveAll(clusterDir)
		return 1
	}
	defer func() {
		// A cluster that was already running under --dir is someone else's: leave it.
		end := cluster.Remove
		if cluster.Adopted() {
			end = cluster.Release
		}
		if err := end(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(stderr, "lectern devdb: %v\n", err)
		}
	}()

	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), pgembed.TestURLEnv+"="+cluster.ConnString("postgres"))
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "lectern devdb: %v\n", err)
		return 1
	}
	return 0
}
