// Package sdklog gives a plugin a log/slog logger whose lines the host understands.
//
// The host reads a plugin's stderr line by line (hashicorp/go-plugin). A JSON line
// with the keys @level, @message and @timestamp (layout
// 2006-01-02T15:04:05.000000Z07:00) is re-logged in the host's log at that level,
// tagged with the plugin's name; any other line is demoted to debug. A plain slog
// JSON handler writes level/msg/time, so this package renames those keys.
//
// Plugins never write to stdout: the handshake travels there.
//
// This package follows semantic versioning with the sdk module.
package sdklog

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// TimeLayout is the timestamp layout the host parses.
const TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// LevelEnv is the environment variable through which the host passes its log level
// (debug, info, warn, error) to the plugins it starts.
const LevelEnv = "LECTERN_PLUGIN_LOG_LEVEL"

// stderr is the process's real standard error, captured before go-plugin redirects
// os.Stderr to its gRPC stdio stream once serving starts.
var stderr io.Writer = os.Stderr

// LevelTrace is below slog.LevelDebug; the host logs it as trace.
const LevelTrace = slog.LevelDebug - 4

// Options configure a handler.
type Options struct {
	// Level is the minimum level written. Default: the level named by LevelEnv, else
	// slog.LevelInfo.
	Level slog.Leveler
	// AddSource adds the source file and line. Default false.
	AddSource bool
}

// New returns a logger writing host-readable JSON lines to the process's standard
// error. opts may be nil.
func New(opts *Options) *slog.Logger {
	return slog.New(NewHandler(stderr, opts))
}

// NewHandler returns a slog.Handler writing host-readable JSON lines to w. opts may be
// nil.
func NewHandler(w io.Writer, opts *Options) slog.Handler {
	if opts == nil {
		opts = &Options{}
	}
	level := opts.Level
	if level == nil {
		level = LevelFromEnv()
	}
	return slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		AddSource:   opts.AddSource,
		ReplaceAttr: replaceAttr,
	})
}

// LevelFromEnv returns the level named by LevelEnv, or slog.LevelInfo.
func LevelFromEnv() slog.Level {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(LevelEnv))) {
	case "trace":
		return LevelTrace
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

func replaceAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.LevelKey:
		lvl, _ := a.Value.Any().(slog.Level)
		return slog.String("@level", levelName(lvl))
	case slog.MessageKey:
		return slog.String("@message", a.Value.String())
	case slog.TimeKey:
		t := a.Value.Time()
		if t.IsZero() {
			t = time.Now()
		}
		return slog.String("@timestamp", t.Format(TimeLayout))
	}
	return a
}

func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}
