// Package launch starts a plugin binary and connects to it the way the Lectern host
// does. The host's supervisor and the conformance kit (package plugintest) both use
// it, so a plugin that passes its conformance test starts the same way in the host.
//
// Start runs the binary with hashicorp/go-plugin over gRPC with automatic mutual TLS,
// the platform's handshake and a minimal environment (no host secrets reach the
// plugin), dispenses the client of the expected kind, calls Describe and refuses a
// plugin of another kind or protocol version with an error naming both versions.
//
// This package follows semantic versioning with the sdk module.
package launch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/source"
)

// DefaultStartTimeout is how long Start waits for the handshake by default.
const DefaultStartTimeout = 10 * time.Second

// passEnv are the host variables a plugin inherits: what a program needs to find
// files, certificates and proxies, and nothing else.
var passEnv = []string{
	"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}

// Config says how to start one plugin.
type Config struct {
	// Path is the plugin binary. Required.
	Path string
	// Kind is the kind the plugin must be. Required.
	Kind protocol.Kind
	// StartTimeout bounds the handshake. Default DefaultStartTimeout.
	StartTimeout time.Duration
	// SHA256, when set, is the binary's expected checksum; a mismatch refuses the
	// start. Default: not checked.
	SHA256 []byte
	// LogLevel is passed to the plugin in sdklog.LevelEnv (debug, info, warn,
	// error). Default: unset, which plugins read as info.
	LogLevel string
	// Logger receives the plugin's log lines, re-logged at their level under the
	// binary's name, and go-plugin's own messages. Default: discard (use Stderr to
	// see the raw lines).
	Logger hclog.Logger
	// Stderr receives a copy of every raw line the plugin writes to stderr. Default
	// none.
	Stderr io.Writer
	// SyncStdout and SyncStderr receive what plugin code writes to os.Stdout and
	// os.Stderr after serving started (never the log lines of sdklog). Plugins must
	// not write to stdout; the host logs anything that arrives as a warning.
	// Default: discard.
	SyncStdout, SyncStderr io.Writer
}

// Conn is a started plugin.
type Conn struct {
	// Client is go-plugin's handle on the process. Kill ends it.
	Client *plugin.Client
	// Plugin is the dispensed client of the configured kind: a source.WithCitations,
	// llm.Provider, refmanager.Manager or messenger.Transport.
	Plugin protocol.Plugin
	// Info is the plugin's Describe answer.
	Info *protocol.DescribeResponse
}

// Kill ends the plugin process (gracefully, then by force after two seconds).
func (c *Conn) Kill() { c.Client.Kill() }

// Exited reports whether the plugin process has ended.
func (c *Conn) Exited() bool { return c.Client.Exited() }

// Ping checks that the plugin still answers on its connection.
func (c *Conn) Ping() error {
	rpc, err := c.Client.Client()
	if err != nil {
		return err
	}
	return rpc.Ping()
}

// PluginSet returns the go-plugin set the host offers: one entry per kind, keyed by
// the kind's name, at protocol.Version.
func PluginSet() plugin.PluginSet {
	return plugin.PluginSet{
		string(protocol.KindSource):     &source.GRPCPlugin{},
		string(protocol.KindLLM):        &llm.GRPCPlugin{},
		string(protocol.KindRefManager): &refmanager.GRPCPlugin{},
		string(protocol.KindMessenger):  &messenger.GRPCPlugin{},
	}
}

// ClientConfig returns the go-plugin client configuration for cfg.
func ClientConfig(cfg Config) *plugin.ClientConfig {
	cmd := exec.Command(cfg.Path)
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if cfg.LogLevel != "" {
		cmd.Env = append(cmd.Env, sdklog.LevelEnv+"="+cfg.LogLevel)
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cc := &plugin.ClientConfig{
		HandshakeConfig:  protocol.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{protocol.Version: PluginSet()},
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     timeout,
		Logger:           logger,
		Stderr:           cfg.Stderr,
		SyncStdout:       cfg.SyncStdout,
		SyncStderr:       cfg.SyncStderr,
	}
	if len(cfg.SHA256) > 0 {
		cc.SecureConfig = &plugin.SecureConfig{Checksum: cfg.SHA256, Hash: sha256.New()}
	}
	return cc
}

// VersionMismatchError refuses a plugin built against another protocol version.
type VersionMismatchError struct {
	// Path is the plugin binary.
	Path string
	// Plugin is the protocol version the plugin speaks.
	Plugin int
	// Host is the protocol version this side speaks (protocol.Version).
	Host int
}

// Error names both versions.
func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("plugin %s speaks protocol version %d, but this host speaks protocol version %d: rebuild the plugin against an SDK of protocol version %d",
		e.Path, e.Plugin, e.Host, e.Host)
}

// KindMismatchError refuses a plugin of another kind than configured.
type KindMismatchError struct {
	// Path is the plugin binary.
	Path string
	// Want is the configured kind; Got is what the plugin serves.
	Want, Got protocol.Kind
}

// Error names both kinds.
func (e *KindMismatchError) Error() string {
	return fmt.Sprintf("plugin %s is a %q plugin, but it is configured as %q", e.Path, e.Got, e.Want)
}

// go-plugin's refusal: "incompatible API version with plugin. Plugin version: 2,
// Client versions: [1]".
var goPluginMismatch = regexp.MustCompile(`Plugin version: (\d+), Client versions`)

// Start starts the plugin and returns it connected and described. ctx bounds the
// Describe call (the handshake is bounded by cfg.StartTimeout). On any error the
// process is ended.
func Start(ctx context.Context, cfg Config) (conn *Conn, err error) {
	if !cfg.Kind.Valid() {
		return nil, fmt.Errorf("launch: unknown plugin kind %q", cfg.Kind)
	}
	client := plugin.NewClient(ClientConfig(cfg))
	defer func() {
		if err != nil {
			client.Kill()
		}
	}()
	rpc, err := client.Client()
	if err != nil {
		if m := goPluginMismatch.FindStringSubmatch(err.Error()); m != nil {
			v, _ := strconv.Atoi(m[1])
			return nil, &VersionMismatchError{Path: cfg.Path, Plugin: v, Host: protocol.Version}
		}
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return nil, fmt.Errorf("launch: %s: the binary's sha256 does not match the configured one: %w", cfg.Path, err)
		}
		return nil, fmt.Errorf("launch: start %s: %w", cfg.Path, err)
	}
	if v := client.NegotiatedVersion(); v != protocol.Version {
		return nil, &VersionMismatchError{Path: cfg.Path, Plugin: v, Host: protocol.Version}
	}
	raw, err := rpc.Dispense(string(cfg.Kind))
	if err != nil {
		return nil, fmt.Errorf("launch: dispense %s from %s: %w", cfg.Kind, cfg.Path, err)
	}
	p, ok := raw.(protocol.Plugin)
	if !ok {
		return nil, fmt.Errorf("launch: dispensed %T is not a plugin", raw)
	}
	info, err := p.Describe(ctx, &protocol.DescribeRequest{})
	if err != nil {
		if protocol.CodeOf(err) == protocol.CodeUnsupported {
			return nil, &KindMismatchError{Path: cfg.Path, Want: cfg.Kind, Got: "unknown"}
		}
		return nil, fmt.Errorf("launch: describe %s: %w", cfg.Path, err)
	}
	if info.ProtocolVersion != protocol.Version {
		return nil, &VersionMismatchError{Path: cfg.Path, Plugin: info.ProtocolVersion, Host: protocol.Version}
	}
	if info.Kind != cfg.Kind {
		return nil, &KindMismatchError{Path: cfg.Path, Want: cfg.Kind, Got: info.Kind}
	}
	return &Conn{Client: client, Plugin: p, Info: info}, nil
}
