package source

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	"github.com/lectern-research/lectern/sdk/internal/convert"
)

// pageCodec is the gRPC codec of the host's paging calls. Requests go out as
// protobuf like any other; a PapersPage answer is decoded straight into
// paper.Paper values (convert.DecodePage) instead of into the generated types and
// then copied. It keeps the name "proto", so the plugin sees an ordinary protobuf
// call and the wire is unchanged.
type pageCodec struct{ proto encoding.CodecV2 }

// pageCall makes a call use pageCodec.
var pageCall = grpc.ForceCodecV2(pageCodec{proto: encoding.GetCodecV2(proto.Name)})

func (c pageCodec) Name() string { return proto.Name }

func (c pageCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

// Unmarshal decodes a page into *convert.WirePage and anything else as protobuf.
// The received bytes are gathered into a pooled buffer, which goes back to the
// pool at once: the decoded page keeps a copy of its own.
func (c pageCodec) Unmarshal(data mem.BufferSlice, v any) error {
	page, ok := v.(*convert.WirePage)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	decoded, err := convert.DecodePage(buf.ReadOnlyData())
	if err != nil {
		return fmt.Errorf("decode a page of papers: %w", err)
	}
	*page = decoded
	return nil
}
