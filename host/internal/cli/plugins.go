package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

const pluginsUsage = `usage: lectern plugins <command>

commands:
  list    list the plugins of plugins.toml (LECTERN_PLUGINS_FILE) and whether their
          binaries exist
  check   start every configured plugin, enabled or not, and run the SDK's
          conformance checks on it (--plugin NAME: only that one)

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

func runPluginsCheck(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("plugins check", stderr)
	only := fs.String("plugin", "", "check only the plugin with this name")
	if err := fs.Parse(args); err != nil {
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
	for _, e := range entries {
		report, err := plugintest.Check(ctx, plugintest.Options{
			Path: e.Path, Kind: e.Kind, Settings: e.Settings, Timeout: e.CallTimeout,
		})
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL  %s  %s\n      %s\n", e.ID(), e.Path, oneLine(err.Error()))
			continue
		}
		verdict := "PASS"
		if !e.Version.Allows(report.Info.Version) {
			verdict = "FAIL"
		}
		if report.Failed() {
			verdict = "FAIL"
		}
		if verdict == "FAIL" {
			failed++
		}
		fmt.Fprintf(stdout, "%s  %s %s (protocol %d)\n", verdict, e.ID(), report.Info.Version, report.Info.ProtocolVersion)
		if !e.Version.Allows(report.Info.Version) {
			fmt.Fprintf(stdout, "      version %s is outside the accepted range %q\n", report.Info.Version, e.Version.String())
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
