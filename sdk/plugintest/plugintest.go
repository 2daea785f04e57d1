// Package plugintest is the conformance kit: it starts a built plugin binary through
// the same client code the host uses (package launch) and checks the contract of its
// kind. A plugin author runs it from a Go test:
//
//	func TestConformance(t *testing.T) {
//		bin := plugintest.Build(t, ".")
//		plugintest.Run(t, plugintest.Options{Path: bin, Kind: protocol.KindSource, Query: "graph"})
//	}
//
// `lectern plugins check` runs the same checks (Check) on every configured plugin.
//
// For every kind it checks Describe (name, semantic version, kind) and the protocol
// version. For a paper source it also checks that searches return well-formed papers,
// that pagination ends, that Get finds what Search returned, that bad requests and
// unknown papers fail with the typed errors, that the citations capability is
// announced truthfully, and that cancelled calls leave the plugin responsive. For an
// LLM provider it checks the model list and the typed error for an empty embedding
// request. For a messenger transport it checks that malformed sends, edits and
// button answers fail with BadRequest before any credentials are needed, that the
// commands capability is announced truthfully, and that the update stream ends
// soon after its context does; with Options.ChatID it also sends, edits and sends
// an over-long message to that chat (a fake messenger's, or a test chat of your
// own). For a reference manager it checks that malformed listings, note reads and
// pushes fail with BadRequest, and that listing libraries without credentials is
// Unauthorized; with Options.Credentials it also pages through the first library
// from the start and checks that the pages end and Through only moves forward.
//
// For the fuzz targets of a plugin's decoders, AddFixtureSeeds seeds a target from
// the shared recordings and CheckPapers checks what a decoder made of an input:
// valid papers, valid UTF-8, and no more text than four times the input (the
// first-party sources use them; docs/reliability.md).
//
// This package follows semantic versioning with the sdk module.
package plugintest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-research/lectern/sdk/launch"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Defaults of Options.
const (
	DefaultQuery    = "the"
	DefaultMaxPages = 50
	DefaultPageSize = 10
	DefaultTimeout  = 30 * time.Second
)

// Options configure a conformance run.
type Options struct {
	// Path is the plugin binary. Required.
	Path string
	// Kind is the kind the plugin must be. Required.
	Kind protocol.Kind
	// Settings are passed to Configure before the checks. Default none.
	Settings map[string]any
	// Credentials are sent with every call. Default none.
	Credentials map[string]string
	// Query is a search (sources only) that finds at least one paper and at most
	// MaxPages pages of PageSize. Default DefaultQuery.
	Query string
	// MaxPages bounds the pagination check. Default DefaultMaxPages.
	MaxPages int
	// ChatID (messengers only) is a chat the checks may post to. Default none:
	// the checks that send are skipped, and the update stream may fail for want
	// of credentials as long as it fails with a typed error.
	ChatID string
	// PageSize is the page size the checks ask for. Default DefaultPageSize.
	PageSize int
	// Timeout bounds each check. Default DefaultTimeout.
	Timeout time.Duration
	// Stderr receives the plugin's raw stderr lines. Default discard.
	Stderr io.Writer
}

func (o *Options) defaults() {
	if o.Query == "" {
		o.Query = DefaultQuery
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
}

// Result is the outcome of one check.
type Result struct {
	// Check names the check ("describe", "pagination_ends", ...).
	Check string
	// Err says why the check failed; nil when it passed.
	Err error
}

// Report is the outcome of a conformance run.
type Report struct {
	// Info is the plugin's Describe answer.
	Info *protocol.DescribeResponse
	// Results in the order the checks ran.
	Results []Result
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	for _, res := range r.Results {
		if res.Err != nil {
			return true
		}
	}
	return false
}

// Check starts the plugin, runs every check of its kind and stops it. The error is
// for a plugin that could not be started or configured at all (a refused protocol
// version, a wrong kind, a binary that is not a plugin).
func Check(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	conn, err := launch.Start(ctx, launch.Config{Path: opts.Path, Kind: opts.Kind, Stderr: opts.Stderr})
	if err != nil {
		return nil, err
	}
	defer conn.Kill()
	if opts.Settings != nil {
		cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		_, err := conn.Plugin.Configure(cctx, &protocol.ConfigureRequest{Settings: opts.Settings})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("plugintest: configure %s: %w", opts.Path, err)
		}
	}
	r := &runner{opts: opts, conn: conn}
	report := &Report{Info: conn.Info}
	for _, c := range r.checks() {
		cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		err := c.run(cctx)
		cancel()
		report.Results = append(report.Results, Result{Check: c.name, Err: err})
	}
	return report, nil
}

// Run runs Check from a test, one subtest per check.
func Run(t *testing.T, opts Options) {
	t.Helper()
	if opts.Stderr == nil {
		opts.Stderr = testWriter{t}
	}
	report, err := Check(t.Context(), opts)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	for _, res := range report.Results {
		t.Run(res.Check, func(t *testing.T) {
			if res.Err != nil {
				t.Error(res.Err)
			}
		})
	}
}

// Build compiles the Go main package pkg (a directory or import path) into a
// temporary folder of the test and returns the binary's path. extraArgs go to
// `go build` before the package (for example "-ldflags", "-X main.v=2").
func Build(t testing.TB, pkg string, extraArgs ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "plugin")
	args := append([]string{"build", "-o", bin}, extraArgs...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plugintest: go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type check struct {
	name string
	run  func(ctx context.Context) error
}

type runner struct {
	opts Options
	conn *launch.Conn
}

func (r *runner) checks() []check {
	all := []check{
		{"describe", r.describe},
		{"protocol_version", r.protocolVersion},
	}
	switch r.opts.Kind {
	case protocol.KindSource:
		all = append(all, r.sourceChecks()...)
	case protocol.KindLLM:
		all = append(all, r.llmChecks()...)
	case protocol.KindMessenger:
		all = append(all, r.messengerChecks()...)
	case protocol.KindRefManager:
		all = append(all, r.refManagerChecks()...)
	}
	return all
}

var (
	nameRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	semverRE = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

func (r *runner) describe(ctx context.Context) error {
	info, err := r.conn.Plugin.Describe(ctx, &protocol.DescribeRequest{})
	if err != nil {
		return fmt.Errorf("describe failed: %w", err)
	}
	if !nameRE.MatchString(info.Name) {
		return fmt.Errorf("name %q must be lowercase letters, digits, - or _, starting with a letter", info.Name)
	}
	if !semverRE.MatchString(info.Version) {
		return fmt.Errorf("version %q is not a semantic version", info.Version)
	}
	if info.Kind != r.opts.Kind {
		return fmt.Errorf("kind is %q, want %q", info.Kind, r.opts.Kind)
	}
	return nil
}

func (r *runner) protocolVersion(ctx context.Context) error {
	if v := r.conn.Client.NegotiatedVersion(); v != protocol.Version {
		return fmt.Errorf("handshake negotiated protocol version %d, want %d", v, protocol.Version)
	}
	if r.conn.Info.ProtocolVersion != protocol.Version {
		return fmt.Errorf("describe says protocol version %d, want %d", r.conn.Info.ProtocolVersion, protocol.Version)
	}
	return nil
}
