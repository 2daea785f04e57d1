package source

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// GRPCPlugin is the go-plugin glue of the source kind. The serve package sets Impl
// on the plugin side; the host leaves it nil and dispenses a Source client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the implementation served; nil on the host side.
	Impl Source
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the Plugin and PaperSource services of Impl on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	var caps []string
	if _, ok := p.Impl.(WithCitations); ok {
		caps = append(caps, protocol.CapabilityCitations)
	}
	plug := shim.NewPluginServer(p.Impl, protocol.KindSource, caps)
	pluginv1.RegisterPluginServer(s, plug)
	pluginv1.RegisterPaperSourceServer(s, &grpcServer{impl: p.Impl, plug: plug})
	return nil
}

// GRPCClient returns a WithCitations client over conn. Citations and References
// fail with protocol.ErrUnsupported when the plugin lacks the capability.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn), nil
}

// NewClient returns a client of the source plugin served on conn. The host and the
// conformance kit get one from go-plugin's Dispense; tests may dial a plugin
// themselves.
func NewClient(conn grpc.ClientConnInterface) WithCitations {
	return &grpcClient{PluginClient: shim.NewPluginClient(conn), c: pluginv1.NewPaperSourceClient(conn), conn: conn}
}
