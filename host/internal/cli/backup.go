package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/lectern-research/lectern/host/internal/backup"
	"github.com/lectern-research/lectern/host/internal/buildinfo"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

const backupUsage = `usage: lectern backup <command>

commands:
  now              make one restore point (kind manual)
  list [--json]    the restore points, newest first
  verify <point>   the test restore: restore into a scratch database, check the
                   manifest's signature, checksums and every table's row count
  prune            apply the retention rules (LECTERN_BACKUP_KEEP_LAST, _MAX_AGE)
  watch [--poll D] the sidecar: scheduled points every LECTERN_BACKUP_INTERVAL,
                   and the requests the admin panel leaves in the trigger folder

See docs/operations.md "Backup and restore".
`

// failAfterEnv names the test-only hook that fails a restore right after a step
// (backup.Config.FailAfterStep); it is ignored in production.
const failAfterEnv = "LECTERN_BACKUP_TEST_FAIL_AFTER"

// runBackup implements `lectern backup`.
func runBackup(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, backupUsage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	fs := newFlagSet("backup "+cmd, stderr)
	asJSON := fs.Bool("json", false, "print JSON (list)")
	poll := fs.Duration("poll", 2*time.Second, "how often watch looks at the trigger folder")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	switch cmd {
	case "now", "list", "verify", "prune", "watch":
	default:
		fmt.Fprintf(stderr, "lectern backup: unknown command %q\n\n%s", cmd, backupUsage)
		return 2
	}
	if cmd == "verify" && fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: lectern backup verify <point>")
		return 2
	}
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	log := newLogger(cfg, stderr)
	if err := ensureDevBackupKey(cfg, log); err != nil {
		return backupFailed(stderr, err)
	}
	svc, closeDB, err := backupService(ctx, cfg, env, log)
	if err != nil {
		fmt.Fprintf(stderr, "lectern backup: %s\n", oneLine(err.Error()))
		return 1
	}
	defer closeDB()

	switch cmd {
	case "now":
		name, err := svc.Create(ctx, backup.KindManual)
		if err != nil {
			return backupFailed(stderr, err)
		}
		fmt.Fprintln(stdout, name)
	case "list":
		points, err := svc.List()
		if err != nil {
			return backupFailed(stderr, err)
		}
		printPoints(stdout, points, *asJSON)
	case "verify":
		rep, err := svc.Verify(ctx, fs.Arg(0))
		if err != nil {
			return backupFailed(stderr, err)
		}
		fmt.Fprintf(stdout, "%s: verified: %d tables, %d rows, %d PDFs match the manifest\n", rep.Point, rep.Tables, rep.Rows, rep.PDFs)
	case "prune":
		deleted, err := svc.Prune()
		if err != nil {
			return backupFailed(stderr, err)
		}
		for _, d := range deleted {
			fmt.Fprintf(stdout, "pruned %s\n", d)
		}
	case "watch":
		sigCtx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		if err := svc.Watch(sigCtx, *poll); err != nil {
			return backupFailed(stderr, err)
		}
	}
	return 0
}

func backupFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "lectern backup: %s\n", oneLine(err.Error()))
	return 1
}

func printPoints(w io.Writer, points []backup.Point, asJSON bool) {
	if asJSON {
		if points == nil {
			points = []backup.Point{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(points)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POINT\tKIND\tSIZE\tAPP\tSCHEMA\tCOMPAT\tENCRYPTED\tPROBLEM")
	for _, p := range points {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%t\t%s\n", p.Name, p.Kind, p.Size, p.AppVersion, p.SchemaVersion, p.Compat, p.Encrypted, p.Problem)
	}
	_ = tw.Flush()
}

// backupService builds the sidecar's Service from the configuration: the
// database of DATABASE_URL, or the embedded cluster's as its superuser.
func backupService(ctx context.Context, cfg *config.Config, env Env, log *slog.Logger) (*backup.Service, func(), error) {
	key, err := backup.SigningKey(cfg.BackupSigningKey.Value(), cfg.ServiceAPIKey.Value())
	if err != nil {
		return nil, nil, err
	}
	recipients, err := backup.ParseRecipients(cfg.BackupAgeRecipients)
	if err != nil {
		return nil, nil, err
	}
	bc := backup.Config{
		Dir: cfg.BackupFolder(), TriggerDir: cfg.BackupTriggerFolder(), PDFDir: filepath.Join(cfg.DataDir, "pdfs"),
		SigningKey: key, Recipients: recipients,
		KeepLast: cfg.BackupKeepLast, MaxAge: cfg.BackupMaxAge, Interval: cfg.BackupInterval,
		AppVersion: buildinfo.Version(), Logger: log,
		Secrets: map[string]string{
			"SERVICE_API_KEY":        cfg.ServiceAPIKey.Value(),
			"SERVICE_CONFIG_KEY":     cfg.ServiceConfigKey.Value(),
			"SERVICE_MODEL_HMAC_KEY": cfg.ServiceModelHMACKey.Value(),
			"GATEWAY_SALT_KEY":       cfg.GatewaySaltKey.Value(),
			"DATABASE_PASSWORD":      urlPassword(cfg.DatabaseURL.Value()),
		},
	}
	if cfg.BackupAgeIdentityFile != "" {
		if bc.Identities, err = backup.ReadIdentities(cfg.BackupAgeIdentityFile); err != nil {
			return nil, nil, err
		}
	}
	if v, ok := env(failAfterEnv); ok && v != "" && !cfg.IsProduction() {
		bc.FailAfterStep = v
	}
	migs, err := store.EmbeddedMigrations()
	if err != nil {
		return nil, nil, err
	}
	db, closeDB, err := backupDatabase(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	svc, err := backup.New(bc, db, migs)
	if err != nil {
		closeDB()
		return nil, nil, err
	}
	return svc, closeDB, nil
}

// backupDatabase is the database the sidecar works on: DATABASE_URL (its role
// must be allowed to create, rename and drop databases for a restore), or the
// embedded cluster, attached to (or started) under LECTERN_DATA_DIR/pg.
func backupDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger) (backup.Database, func(), error) {
	if cfg.DatabaseURL.IsSet() {
		return backup.Database{URL: cfg.DatabaseURL.Value()}, func() {}, nil
	}
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(cfg.DataDir, "pg"), Durable: true, Install: true, Logger: log})
	if err != nil {
		return backup.Database{}, nil, fmt.Errorf("embedded database (set DATABASE_URL to use your own): %w", err)
	}
	release := func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := cluster.Release(stopCtx); err != nil {
			log.Error("stop embedded database", "error", err)
		}
	}
	if err := cluster.EnsureDatabase(ctx, embeddedDatabase); err != nil {
		release()
		return backup.Database{}, nil, err
	}
	return backup.Database{URL: cluster.ConnString(embeddedDatabase), AppRole: pgembed.AppRole}, release, nil
}

func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
