package messenger

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// GRPCPlugin is the go-plugin glue of the messenger kind. The serve package sets
// Impl on the plugin side; the host leaves it nil and dispenses a Transport client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the implementation served; nil on the host side.
	Impl Transport
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the Plugin and MessengerTransport services of Impl on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	var caps []string
	if _, ok := p.Impl.(WithCommands); ok {
		caps = append(caps, protocol.CapabilityCommands)
	}
	if _, ok := p.Impl.(WithDownloads); ok {
		caps = append(caps, protocol.CapabilityDownloads)
	}
	plug := shim.NewPluginServer(p.Impl, protocol.KindMessenger, caps)
	pluginv1.RegisterPluginServer(s, plug)
	pluginv1.RegisterMessengerTransportServer(s, &grpcServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a client over conn that is a WithCommands and a
// WithDownloads. SetCommands and Download fail with protocol.ErrUnsupported when
// the plugin lacks the capability.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(conn), nil
}

// NewClient returns a client of the messenger plugin served on conn; it is a
// WithDownloads as well.
func NewClient(conn grpc.ClientConnInterface) WithCommands {
	return &grpcClient{PluginClient: shim.NewPluginClient(conn), c: pluginv1.NewMessengerTransportClient(conn)}
}
