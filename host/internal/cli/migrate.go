package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lectern-research/lectern/host/internal/store"
)

func runMigrate(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("migrate", stderr)
	statusOnly := fs.Bool("status", false, "report the schema version and pending migrations without applying them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	log := newLogger(cfg, stderr)
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	defer db.Close()

	if *statusOnly {
		migs, err := store.EmbeddedMigrations()
		if err != nil {
			fmt.Fprintf(stderr, "lectern: %v\n", err)
			return 1
		}
		// Read as the migrating role: on an install an older version made, the
		// application's role owns nothing yet, and --status changes nothing.
		pool, closePool, err := db.migrationPool(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
			return 1
		}
		defer closePool()
		st, err := store.NewMigrator(pool, migs).Status(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
			return 1
		}
		fmt.Fprintf(stdout, "schema version %d of %d\n", st.Current, st.Latest)
		if len(st.Pending) > 0 {
			pending := make([]string, len(st.Pending))
			for i, v := range st.Pending {
				pending[i] = fmt.Sprintf("%04d", v)
			}
			fmt.Fprintf(stdout, "pending: %s\n", strings.Join(pending, ", "))
		}
		return 0
	}

	m, applied, err := migrateDatabase(ctx, db, log)
	for _, a := range applied {
		fmt.Fprintf(stdout, "applied %s (%d ms)\n", a.Name, a.Duration.Milliseconds())
	}
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "schema is current at version %d; nothing to apply\n", m.Latest())
	} else {
		fmt.Fprintf(stdout, "schema version %d\n", m.Latest())
	}
	return 0
}
