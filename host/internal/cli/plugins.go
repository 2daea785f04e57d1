package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

const pluginsUsage = `usage: lectern plugins <command>

commands:
  list    list the plugins of plugins.toml (LECTERN_PLUGINS_FILE) and whether their
          binaries exist
  check   start every configured plugin, enabled or not, and run the SDK's
          conformance checks on it (--plugin NAME: only that one). The plugins
          are checked at once, each within its own deadline (--timeout, default
          5m), so a slow or unreachable one never holds up or cancels the others

Run-time changes an admin made (enabled flag, settings) are not shown here: see
GET /api/admin/plugins.
`

// runPlugins runs `lectern plugins list|check`.
func runPlugins(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, pluginsUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return runPluginsList(args[1:], env, stdout, stderr)
	case "check":
		return runPluginsCheck(ctx, args[1:], env, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, pluginsUsage)
		return 0
	}
	fmt.Fprintf(stderr, "lectern plugins: unknown command %q\n\n%s", args[0], pluginsUsage)
	return 2
}

// loadPlugins reads plugins.toml, printing each refusal with its file and line.
func loadPlugins(env Env, stderr io.Writer) (string, []pluginhost.Entry, bool) {
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return "", nil, false
	}
	entries, err := pluginhost.LoadFile(cfg.PluginsFile)
	if err != nil {
		var errs pluginhost.ConfigErrors
		if errors.As(err, &errs) {
			for _, e := range errs {
				fmt.Fprintf(stderr, "lectern: %s\n", e.Error())
			}
			return "", nil, false
		}
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return "", nil, false
	}
	return cfg.PluginsFile, entries, true
}

func runPluginsList(args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("plugins list", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	file, entries, ok := loadPlugins(env, stderr)
	if !ok {
		return 1
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "no plugins configured in %s\n", file)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tENABLED\tVERSIONS\tBINARY\tPATH")
	for _, e := range entries {
		versions := e.Version.String()
		if versions == "" {
			versions = "any"
		}
		binary := "ok"
		if _, err := os.Stat(e.Path); err != nil {
			binary = "missing"
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", e.Name, e.Kind, e.Enabled, versions, binary, e.Path)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	return 0
}

// defaultPluginDeadline bounds the whole check of one plugin (`plugins check --timeout`).
const defaultPluginDeadline = 5 * time.Minute

// pluginOutcome is what the check of one plugin came to.
type pluginOutcome struct {
	report *plugintest.Report
	err    error
	// timedOut: the plugin's own deadline ended its checks; interrupted: the
	// command was (Ctrl-C) before they finished.
	timedOut, interrupted bool
}

// checkPlugins checks every plugin at once, each under its own deadline, so a slow
// or unreachable one never cancels the others' checks; only ctx (Ctrl-C) ends them
// all. Outcomes are in the order of entries.
func checkPlugins(ctx context.Context, entries []pluginhost.Entry, deadline time.Duration) []pluginOutcome {
	out := make([]pluginOutcome, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() {
			begin := time.Now()
			pctx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			report, err := plugintest.Check(pctx, plugintest.Options{
				Path: e.Path, Kind: e.Kind, Settings: e.Settings, Timeout: e.CallTimeout,
			})
			// A call's own deadline can end a moment before the plugin's, so a
			// check that used up the plugin's time counts as timed out too.
			out[i] = pluginOutcome{report: report, err: err,
				interrupted: ctx.Err() != nil,
				timedOut: ctx.Err() == nil && (errors.Is(pctx.Err(), context.DeadlineExceeded) ||
					time.Since(begin) >= deadline*99/100)}
		})
	}
	wg.Wait()
	return out
}

func runPluginsCheck(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("plugins check", stderr)
	only := fs.String("plugin", "", "check only the plugin with this name")
	deadline := fs.Duration("timeout", defaultPluginDeadline, "deadline of each plugin's whole check (the plugins are checked at once)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *deadline <= 0 {
		fmt.Fprintln(stderr, "lectern plugins check: --timeout must be positive, e.g. 2m")
		return 2
	}
	file, entries, ok := loadPlugins(env, stderr)
	if !ok {
		return 1
	}
	if *only != "" {
		var picked []pluginhost.Entry
		for _, e := range entries {
			if e.Name == *only {
				picked = append(picked, e)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(stderr, "lectern: no plugin named %q in %s\n", *only, file)
			return 1
		}
		entries = picked
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "no plugins configured in %s\n", file)
		return 0
	}
	failed := 0
	for i, o := range checkPlugins(ctx, entries, *deadline) {
		e := entries[i]
		if o.interrupted {
			failed++
			fmt.Fprintf(stdout, "FAIL  %s  interrupted before its checks finished\n", e.ID())
			continue
		}
		if o.err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL  %s  %s\n      %s\n", e.ID(), e.Path, oneLine(o.err.Error()))
			if o.timedOut {
				fmt.Fprintf(stdout, "      did not start within its deadline of %s (--timeout)\n", *deadline)
			}
			continue
		}
		report := o.report
		verdict := "PASS"
		if !e.Version.Allows(report.Info.Version) || report.Failed() || o.timedOut {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "%s  %s %s (protocol %d)\n", verdict, e.ID(), report.Info.Version, report.Info.ProtocolVersion)
		if !e.Version.Allows(report.Info.Version) {
			fmt.Fprintf(stdout, "      version %s is outside the accepted range %q\n", report.Info.Version, e.Version.String())
		}
		if o.timedOut {
			fmt.Fprintf(stdout, "      did not finish its checks within its deadline of %s (--timeout); is its service reachable?\n", *deadline)
		}
		for _, r := range report.Results {
			if r.Err != nil {
				fmt.Fprintf(stdout, "  fail  %s: %s\n", r.Check, oneLine(r.Err.Error()))
				continue
			}
			fmt.Fprintf(stdout, "  ok    %s\n", r.Check)
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d plugins failed\n", failed, len(entries))
		return 1
	}
	fmt.Fprintf(stdout, "all %d plugins passed\n", len(entries))
	return 0
}
