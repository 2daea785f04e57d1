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
	"slices"
	"strings"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/web"
)

// runDashboard implements `lectern dashboard [--addr HOST:PORT] [--api URL]`: the web
// dashboard as its own process, rendering its pages from the API at --api and
// forwarding /api/* there (docs/dashboard.md). It reads only DASHBOARD_ADDR,
// DASHBOARD_API_URL and LOG_LEVEL: it needs no secret and no database.
func runDashboard(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("dashboard", stderr)
	addr := fs.String("addr", "", "listen address HOST:PORT (default: DASHBOARD_ADDR, else :3000)")
	api := fs.String("api", "", "base URL of the API (default: DASHBOARD_API_URL, else http://127.0.0.1:3001)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *addr == "" {
		*addr = envOrDefault(env, "DASHBOARD_ADDR")
	}
	if *api == "" {
		*api = envOrDefault(env, "DASHBOARD_API_URL")
	}
	if err := checkAddr(*addr); err != nil {
		fmt.Fprintf(stderr, "lectern: --addr / DASHBOARD_ADDR: %v\n", err)
		return 2
	}
	apiURL, err := url.Parse(*api)
	if err != nil || (apiURL.Scheme != "http" && apiURL.Scheme != "https") || apiURL.Host == "" {
		fmt.Fprintf(stderr, "lectern: --api / DASHBOARD_API_URL: %q must be an absolute http or https URL, such as http://127.0.0.1:3001\n", *api)
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(envOrDefault(env, "LOG_LEVEL"))); err != nil {
		fmt.Fprintf(stderr, "lectern: LOG_LEVEL: must be debug, info, warn or error\n")
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	dash, err := web.New(web.Config{APIURL: apiURL, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: listen on %s: %v\n", *addr, err)
		return 1
	}
	srv := newHTTPServer(ctx, dash, log)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("dashboard listening", "addr", ln.Addr().String(), "api", apiURL.String())
	fmt.Fprintf(stdout, "Lectern dashboard on http://%s, forwarding to %s\n", ln.Addr().String(), apiURL.String())
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "lectern: http server: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintf(stderr, "lectern: graceful shutdown: %v\n", err)
		return 1
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "lectern: http server: %v\n", err)
		return 1
	}
	return 0
}

// envOrDefault reads one variable of the option table, or its default.
func envOrDefault(env Env, name string) string {
	if v, ok := env(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	i := slices.IndexFunc(config.Options(), func(o config.Option) bool { return o.Name == name })
	if i < 0 {
		return ""
	}
	return config.Options()[i].Default
}

// withDashboard is the handler lectern serve answers on LISTEN_ADDR: with
// DASHBOARD_ENABLED the dashboard's pages in front of the API, whose handler they
// call in process (so the API sees each browser's own address); else the API alone.
func withDashboard(cfg *config.Config, api http.Handler, ln net.Listener, log *slog.Logger) (http.Handler, error) {
	if !cfg.DashboardEnabled {
		return api, nil
	}
	base, err := url.Parse("http://" + ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	dash, err := web.New(web.Config{APIURL: base, API: api, Logger: log})
	if err != nil {
		return nil, err
	}
	return dash, nil
}

// trustLoopback adds the loopback addresses to the trusted proxies when
// TRUSTED_PROXY_LOOPBACK is true, so a dashboard or reverse proxy on this machine
// passes on each browser's address (docs/dashboard.md, "Trusted proxy").
func trustLoopback(cfg *config.Config) {
	if !cfg.TrustedProxyLoopback || slices.Contains(cfg.TrustedProxyHosts, "*") {
		return
	}
	for _, a := range []string{"127.0.0.1", "::1"} {
		if !slices.Contains(cfg.TrustedProxyHosts, a) {
			cfg.TrustedProxyHosts = append(cfg.TrustedProxyHosts, a)
		}
	}
}
