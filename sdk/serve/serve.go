// Package serve runs a plugin: a plugin's main is one call to the helper of its kind.
//
//	func main() { serve.Source(example.New(sdklog.New(nil))) }
//
// The helpers apply the platform's one handshake (protocol.Handshake), serve gRPC
// only (no net/rpc), recover panics in calls so one bad request cannot kill the
// process, and return only when the host ends the plugin.
//
// This package follows semantic versioning with the sdk module.
package serve

import (
	"log/slog"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lectern-research/lectern/sdk/internal/shim"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/source"
)

// Opt changes how a plugin is served.
type Opt func(*options)

type options struct {
	logger   *slog.Logger
	test     *plugin.ServeTestConfig
	grpcOpts []grpc.ServerOption
}

// WithLogger sets the logger the SDK itself uses (for recovered panics). Default
// sdklog.New(nil).
func WithLogger(l *slog.Logger) Opt {
	return func(o *options) { o.logger = l }
}

// WithTestConfig serves in go-plugin's test mode, inside the calling process,
// reporting a reattach config on tc.ReattachConfigCh instead of talking to a host
// over stdout. For in-process tests only. Default: normal serving.
func WithTestConfig(tc *plugin.ServeTestConfig) Opt {
	return func(o *options) { o.test = tc }
}

// WithGRPCServerOptions adds gRPC server options (message size limits, ...). Default
// none.
func WithGRPCServerOptions(opts ...grpc.ServerOption) Opt {
	return func(o *options) { o.grpcOpts = append(o.grpcOpts, opts...) }
}

// Source serves a paper source until the host ends the plugin.
func Source(impl source.Source, opts ...Opt) {
	run(protocol.KindSource, &source.GRPCPlugin{Impl: impl}, opts)
}

// LLM serves an LLM provider until the host ends the plugin.
func LLM(impl llm.Provider, opts ...Opt) {
	run(protocol.KindLLM, &llm.GRPCPlugin{Impl: impl}, opts)
}

// RefManager serves a reference manager until the host ends the plugin.
func RefManager(impl refmanager.Manager, opts ...Opt) {
	run(protocol.KindRefManager, &refmanager.GRPCPlugin{Impl: impl}, opts)
}

// Messenger serves a messenger transport until the host ends the plugin.
func Messenger(impl messenger.Transport, opts ...Opt) {
	run(protocol.KindMessenger, &messenger.GRPCPlugin{Impl: impl}, opts)
}

func run(kind protocol.Kind, p plugin.Plugin, opts []Opt) {
	o := &options{}
	for _, opt := range opts {
		opt(o)
	}
	if o.logger == nil {
		o.logger = sdklog.New(nil)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: protocol.Handshake(),
		Plugins:         plugin.PluginSet{string(kind): p},
		GRPCServer: func(base []grpc.ServerOption) *grpc.Server {
			all := append(base, o.grpcOpts...)
			all = append(all,
				grpc.ChainUnaryInterceptor(shim.RecoverUnary(o.logger)),
				grpc.ChainStreamInterceptor(shim.RecoverStream(o.logger)),
			)
			return grpc.NewServer(all...)
		},
		Test: o.test,
	})
}
