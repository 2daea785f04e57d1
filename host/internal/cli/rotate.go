package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/audit"
)

// runConfig implements `lectern config rotate-key [--apply]` (SPEC "Config key
// rotation"): with SERVICE_CONFIG_KEY_OLD set to the old key and SERVICE_CONFIG_KEY
// to the new one, it re-seals every secret. Without --apply it is a dry run that only
// counts.
func runConfig(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "rotate-key" {
		fmt.Fprintln(stderr, "usage: lectern config rotate-key [--apply]")
		return 2
	}
	fs := newFlagSet("config rotate-key", stderr)
	apply := fs.Bool("apply", false, "write the re-sealed values (default: dry run)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	if !cfg.ServiceConfigKey.IsSet() || !cfg.ServiceConfigKeyOld.IsSet() {
		fmt.Fprintln(stderr, "lectern: config rotate-key: set SERVICE_CONFIG_KEY_OLD to the old key and SERVICE_CONFIG_KEY to the new one")
		return 2
	}
	log := newLogger(cfg, stderr)
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	defer db.Close()
	pool := db.Pool
	if _, _, err := migrateDatabase(ctx, db, log); err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	// The settings store the host reads, with the keys it reads them with.
	settings, err := app.SettingsStore(cfg, pool)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	rep, err := settings.Rotate(ctx, *apply)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	verb := "would re-seal"
	if rep.Applied {
		verb = "re-sealed"
		audit.New(pool, log).Record(ctx, uuid.Nil, audit.ActionConfigKeyRotate, "cli:config rotate-key",
			map[string]any{"resealed": rep.Resealed, "unreadable": rep.Unreadable})
	}
	fmt.Fprintf(stdout, "%s %d secret(s) from the old key; %d already on the new key; %d unreadable under either key\n",
		verb, rep.Resealed, rep.Current, rep.Unreadable)
	if !rep.Applied {
		fmt.Fprintln(stdout, "dry run: nothing written; run again with --apply")
	} else {
		fmt.Fprintln(stdout, "done: restart the host, then remove SERVICE_CONFIG_KEY_OLD")
	}
	if rep.Unreadable > 0 {
		return 1
	}
	return 0
}
