// Command badproto is a test-only paper source built against protocol version 2:
// the host must refuse it at start, naming both versions.
package main

import (
	"context"

	"github.com/hashicorp/go-plugin"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

type future struct{ protocol.ConfigureDefaults }

func (future) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "badproto", Version: "9.0.0"}, nil
}

func (future) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return &source.Page{}, nil
}

func (future) Get(context.Context, *source.GetRequest) (*source.GetResponse, error) {
	return nil, protocol.NotFound("nothing here")
}

func (future) Recent(context.Context, *source.RecentRequest) (*source.Page, error) {
	return &source.Page{}, nil
}

func (future) AuthorPapers(context.Context, *source.AuthorPapersRequest) (*source.Page, error) {
	return &source.Page{}, nil
}

func main() {
	hs := protocol.Handshake()
	hs.ProtocolVersion = protocol.Version + 1
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{string(protocol.KindSource): &source.GRPCPlugin{Impl: future{}}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
