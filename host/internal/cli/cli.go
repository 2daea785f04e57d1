// Package cli is the `lectern` command: its subcommands, their flags, and the wiring
// from configuration to the running host.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/lectern-research/lectern/host/internal/buildinfo"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/store"
)

// Env is how the command reads its environment; it has the signature of
// os.LookupEnv so tests pass a map.
type Env func(key string) (string, bool)

const usage = `usage: lectern <command> [flags]

commands:
  serve     run the host: migrate the database, then serve the API and the web
            dashboard (--addr HOST:PORT)
  dashboard run the web dashboard alone, forwarding to an API elsewhere
            (--addr HOST:PORT, --api URL; docs/dashboard.md)
  bot       run the messenger bot alone, calling an API elsewhere (--api URL;
            needs DATABASE_URL; docs/messenger.md)
  migrate   apply pending database migrations and exit (--status: only report)
  version   print the version and the schema version this binary expects
  config    rotate-key [--apply]: re-seal secrets from SERVICE_CONFIG_KEY_OLD to
            SERVICE_CONFIG_KEY (a dry run without --apply)
  import    --user EMAIL <folder>: ingest every PDF under folder into that user's
            library, with a progress bar and a summary
  plugins   list | check [--plugin NAME]: the plugins of plugins.toml, and the
            SDK conformance checks run against each
  fsrs      replay <log.csv> | fit <log.csv>: FSRS-6 memory states and parameter
            fitting for a review log (docs/fsrs.md)
  eval      rag [--set written|fulltext] [--role answer] | quotes
            [--dataset FILE] [--json]: answer quality on the built-in datasets
            (RAG evidence, pages, abstention and citations; quote verifier
            precision and recall), see docs/evals.md
  backup    now | list | verify <point> | prune | watch: restore points and
            the backup sidecar (docs/operations.md "Backup and restore")
  devdb     run a command next to a throwaway private PostgreSQL cluster
            (devdb exec -- go test ./...), as make test does

Configuration comes from environment variables: see docs/configuration.md.
`

// Run runs the command line args (without the program name) and returns the exit
// code. ctx ends the command (serve stops gracefully when it is cancelled).
func Run(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, env, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, env, stdout, stderr)
	case "version", "--version", "-v":
		return runVersion(stdout, stderr)
	case "devdb":
		return runDevDB(ctx, rest, env, stdout, stderr)
	case "config":
		return runConfig(ctx, rest, env, stdout, stderr)
	case "fsrs":
		return runFSRS(ctx, rest, env, stdout, stderr)
	case "plugins":
		return runPlugins(ctx, rest, env, stdout, stderr)
	case "import":
		return runImport(ctx, rest, env, stdout, stderr)
	case "dashboard":
		return runDashboard(ctx, rest, env, stdout, stderr)
	case "bot":
		return runBot(ctx, rest, env, stdout, stderr)
	case "eval":
		return runEval(ctx, rest, env, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, env, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "lectern: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// loadConfig reads the configuration. On refusal it prints one line per refused
// variable, each naming the variable and the rule, and returns nil.
func loadConfig(env Env, stderr io.Writer) *config.Config {
	cfg, err := config.Load(env)
	if err == nil {
		return cfg
	}
	var errs config.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			fmt.Fprintf(stderr, "lectern: %s\n", e.Error())
		}
		return nil
	}
	fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
	return nil
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel}))
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("lectern "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func runVersion(stdout, stderr io.Writer) int {
	migs, err := store.EmbeddedMigrations()
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "lectern %s\nschema version %d\n", buildinfo.Version(), len(migs))
	return 0
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
