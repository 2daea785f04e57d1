// Package shim holds the gRPC pieces every plugin kind shares: the server and client
// of the common Plugin service (Describe, Configure) and the call helpers the kind
// packages' client shims use.
package shim

import (
	"context"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// PluginServer serves Describe and Configure for an implementation of any kind.
type PluginServer struct {
	pluginv1.UnimplementedPluginServer
	impl protocol.Plugin
	kind protocol.Kind
	caps []string

	once sync.Once
	desc *protocol.DescribeResponse
	err  error
}

// NewPluginServer returns the Plugin service of impl, a plugin of kind whose
// optional interfaces add caps to what its Describe announces.
func NewPluginServer(impl protocol.Plugin, kind protocol.Kind, caps []string) *PluginServer {
	return &PluginServer{impl: impl, kind: kind, caps: caps}
}

// Describe completes the implementation's answer with the kind, the protocol
// version and the discovered capabilities.
func (s *PluginServer) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	d, err := s.Identity(ctx)
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return convert.DescribeToProto(d), nil
}

// Identity returns the completed Describe answer, computed once.
func (s *PluginServer) Identity(ctx context.Context) (*protocol.DescribeResponse, error) {
	s.once.Do(func() {
		d, err := s.impl.Describe(ctx, &protocol.DescribeRequest{})
		if err == nil {
			err = convert.ValidateDescribe(d)
		}
		if err != nil {
			s.err = &protocol.Error{Code: protocol.CodeInternal, Message: err.Error(), Cause: err}
			return
		}
		out := *d
		out.Kind = s.kind
		out.ProtocolVersion = protocol.Version
		out.Capabilities = slices.Clone(d.Capabilities)
		for _, c := range s.caps {
			if !slices.Contains(out.Capabilities, c) {
				out.Capabilities = append(out.Capabilities, c)
			}
		}
		slices.Sort(out.Capabilities)
		s.desc = &out
	})
	return s.desc, s.err
}

// Name returns the plugin's name, or "" when Describe fails.
func (s *PluginServer) Name(ctx context.Context) string {
	d, err := s.Identity(ctx)
	if err != nil {
		return ""
	}
	return d.Name
}

// Configure hands the settings to the implementation.
func (s *PluginServer) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	in, err := convert.ConfigureFromProto(req)
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	if _, err := s.impl.Configure(ctx, in); err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.ConfigureResponse{}, nil
}

// PluginClient calls the Plugin service of a plugin.
type PluginClient struct {
	c pluginv1.PluginClient
}

// NewPluginClient returns a client of the Plugin service on conn.
func NewPluginClient(conn grpc.ClientConnInterface) PluginClient {
	return PluginClient{c: pluginv1.NewPluginClient(conn)}
}

// Describe asks the plugin who it is.
func (p PluginClient) Describe(ctx context.Context, _ *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	resp, err := p.c.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return nil, convert.StatusToErr(ctx, err)
	}
	return convert.DescribeFromProto(resp), nil
}

// Configure hands the plugin its settings.
func (p PluginClient) Configure(ctx context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	in, err := convert.ConfigureToProto(req)
	if err != nil {
		return nil, err
	}
	if _, err := p.c.Configure(ctx, in); err != nil {
		return nil, convert.StatusToErr(ctx, err)
	}
	return &protocol.ConfigureResponse{}, nil
}

// Call runs one unary RPC and maps its error for the host.
func Call[Req, Resp any](ctx context.Context, rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	resp, err := rpc(ctx, req)
	if err != nil {
		var zero Resp
		return zero, convert.StatusToErr(ctx, err)
	}
	return resp, nil
}
