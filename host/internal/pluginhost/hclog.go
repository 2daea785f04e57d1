package pluginhost

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter is the hclog.Logger go-plugin's ClientConfig requires, writing to a
// slog.Logger. go-plugin re-logs each plugin log line through it at the line's level,
// under Named(<binary>), so plugin lines reach the host's log as slog records tagged
// with the plugin's name.
type hclogAdapter struct {
	log  *slog.Logger
	name string
	args []any
}

var _ hclog.Logger = (*hclogAdapter)(nil)

// newHCLog returns an hclog.Logger writing to l.
func newHCLog(l *slog.Logger) hclog.Logger {
	return &hclogAdapter{log: l}
}

// slog level for hclog's trace: below debug, as sdklog.LevelTrace.
const levelTrace = slog.LevelDebug - 4

func toSlog(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return levelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	lvl := toSlog(level)
	ctx := context.Background()
	if !a.log.Enabled(ctx, lvl) {
		return
	}
	all := make([]any, 0, len(a.args)+len(args)+2)
	if a.name != "" {
		all = append(all, "logger", a.name)
	}
	all = append(all, a.args...)
	all = append(all, args...)
	a.log.Log(ctx, lvl, msg, all...)
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(l slog.Level) bool { return a.log.Enabled(context.Background(), l) }
func (a *hclogAdapter) IsTrace() bool             { return a.enabled(levelTrace) }
func (a *hclogAdapter) IsDebug() bool             { return a.enabled(slog.LevelDebug) }
func (a *hclogAdapter) IsInfo() bool              { return a.enabled(slog.LevelInfo) }
func (a *hclogAdapter) IsWarn() bool              { return a.enabled(slog.LevelWarn) }
func (a *hclogAdapter) IsError() bool             { return a.enabled(slog.LevelError) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.args }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.args = append(append([]any{}, a.args...), args...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	c := *a
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

// SetLevel is ignored: the slog handler owns the level.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

// GetLevel reports the lowest level the slog handler lets through; go-plugin drops
// plugin lines below it before parsing them.
func (a *hclogAdapter) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if a.enabled(toSlog(l)) {
			return l
		}
	}
	return hclog.Off
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return lineWriter(func(line string) { a.Info(line) })
}

// lineWriter calls itself once per written chunk, without the trailing newline.
type lineWriter func(line string)

func (w lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w(line)
		}
	}
	return len(p), nil
}
