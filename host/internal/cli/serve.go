package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/buildinfo"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/httpapi"
)

// shutdownGrace is how long serve waits for in-flight requests after SIGTERM.
const shutdownGrace = 30 * time.Second

func runServe(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", stderr)
	addr := fs.String("addr", "", "listen address HOST:PORT of the API and dashboard (default: LISTEN_ADDR, else 127.0.0.1:3001)")
	role := fs.String("role", "", "what this host runs: api, worker or all (default: LECTERN_ROLE, else all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	if *role != "" {
		r, err := config.ParseRole(*role)
		if err != nil {
			fmt.Fprintf(stderr, "lectern: --role: %v\n", err)
			return 2
		}
		cfg.Role = r
	}
	if *addr != "" {
		if err := checkAddr(*addr); err != nil {
			fmt.Fprintf(stderr, "lectern: --addr: %v\n", err)
			return 2
		}
		cfg.ListenAddr = *addr
	}
	if err := checkServingTools(); err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	log := newLogger(cfg, stderr)
	for _, name := range cfg.DeprecatedSet {
		log.Warn("ignoring deprecated variable", "variable", name)
	}
	log.Info("starting lectern", "version", buildinfo.Version(), "environment", cfg.Environment, "role", cfg.Role, "config", cfg)

	if err := serve(ctx, cfg, log); err != nil {
		log.Error("lectern stopped", "error", err)
		for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
			fmt.Fprintf(stderr, "lectern: %s\n", line)
		}
		return 1
	}
	return 0
}

// serve migrates the database, builds the host (app.Build), starts its job queue
// and serves HTTP on cfg.ListenAddr until ctx ends; then it drains in-flight
// requests for up to shutdownGrace, and stops the queue. cfg.Role decides what
// runs (docs/operations.md, "Scaling out"): an api host serves the API and the
// dashboard and works no job; a worker host works jobs and runs the bot, and
// serves only its health on cfg.ListenAddr; all does both.
func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	defer ln.Close()

	if err := ensureDevConfigKey(cfg, log); err != nil {
		return err
	}
	if err := ensureDevBackupKey(cfg, log); err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	migrator, _, err := migrateDatabase(ctx, db, log)
	if err != nil {
		// The host refuses to start on a schema it could not bring up to date.
		return err
	}

	trustLoopback(cfg)
	host, err := app.Build(ctx, app.Options{Config: cfg, Pool: db.Pool, Logger: log, Migrator: migrator,
		Version: buildinfo.Version(), StartPlugins: app.AllPlugins})
	if err != nil {
		// Each refusal is a sentence: a plugins file line, a vector store.
		return err
	}
	defer host.Close()
	if err := host.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if err := host.Stop(stopCtx); err != nil {
			log.Error("stop job queue", "error", err)
		}
	}()
	handler, err := roleHandler(ctx, cfg, host, ln, log)
	if err != nil {
		return err
	}
	watched := watchBackups(ctx, cfg, log)
	defer watched()
	srv := newHTTPServer(ctx, handler, log)
	// Job streams never go idle; tell them the server is closing so Shutdown
	// need not wait out its grace for them.
	srv.RegisterOnShutdown(host.Jobs.CloseStreams)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "role", cfg.Role, "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String())
	if cfg.DashboardEnabled && cfg.Role != config.RoleWorker {
		log.Info("dashboard ready: open it in a browser", "url", cfg.PublicBaseURL)
	}

	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("stopped")
	return nil
}

// roleHandler is what the host serves on ln for its role, and starts the
// messenger bot on the hosts that run it: an api host serves the API (and the
// dashboard) without the bot; a worker host serves its health alone and runs
// the bot against BOT_API_URL; an all host serves both and its bot calls ln.
func roleHandler(ctx context.Context, cfg *config.Config, host *app.App, ln net.Listener, log *slog.Logger) (http.Handler, error) {
	if cfg.Role == config.RoleWorker {
		if apiURL, err := url.Parse(cfg.BotAPIURL); err == nil {
			startBot(ctx, host, apiURL, log)
		}
		return workerHealth(host.Pool), nil
	}
	handler, err := withDashboard(cfg, host.Handler, ln, log)
	if err != nil {
		return nil, err
	}
	if cfg.Role != config.RoleAPI {
		if apiURL, err := url.Parse("http://" + ln.Addr().String()); err == nil {
			// The messenger bot, when a messenger plugin is enabled: a client of
			// this very listener (docs/messenger.md).
			startBot(ctx, host, apiURL, log)
		}
	}
	return handler, nil
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// newHTTPServer is the http.Server of lectern serve and lectern dashboard, with the
// bounds of httpapi (docs/configuration.md, "Server limits"): headers in 10 s, a
// request in a minute, a response in two; routes with large bodies and event
// streams lift their own deadlines.
func newHTTPServer(ctx context.Context, handler http.Handler, log *slog.Logger) *http.Server {
	return newBoundedServer(ctx, handler, httpapi.DefaultLimits(), log)
}

// newBoundedServer is newHTTPServer with the given limits; tests shorten them to
// watch each bound act (limits_test.go).
func newBoundedServer(ctx context.Context, handler http.Handler, lim httpapi.Limits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

// watchBackups runs the backup sidecar's loop (`lectern backup watch`) inside the
// server on the embedded default (no DATABASE_URL, a host that works jobs), so
// `make run` makes its daily restore point and answers "Back up now" and a restore
// from the panel without a second process. A deployment with its own database
// runs the sidecar beside the server instead (deploy/compose.yaml), and
// LECTERN_BACKUP_WATCH=off turns the loop off. The returned func stops the loop
// and waits for it.
func watchBackups(ctx context.Context, cfg *config.Config, log *slog.Logger) func() {
	if cfg.DatabaseURL.IsSet() || cfg.Role == config.RoleAPI || !cfg.BackupWatch {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc, closeDB, err := backupService(ctx, cfg, func(string) (string, bool) { return "", false }, log)
		if err != nil {
			log.Warn("backups: not watching; run `lectern backup watch` beside the server", "error", err)
			return
		}
		defer closeDB()
		log.Info("backups: watching", "folder", cfg.BackupFolder(), "every", cfg.BackupInterval.String())
		if err := svc.Watch(ctx, 2*time.Second); err != nil {
			log.Warn("backups: not watching; another backup sidecar may be running", "error", err)
		}
	}()
	return func() { cancel(); <-done }
}
