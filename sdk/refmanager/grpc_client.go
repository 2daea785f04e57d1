package refmanager

import (
	"context"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
)

// grpcClient is the host's view of a reference-manager plugin.
type grpcClient struct {
	shim.PluginClient
	c pluginv1.RefManagerClient
}

var _ Manager = (*grpcClient)(nil)

func (c *grpcClient) Libraries(ctx context.Context, req *LibrariesRequest) (*LibrariesResponse, error) {
	resp, err := shim.Call(ctx, c.c.Libraries, &pluginv1.LibrariesRequest{Credentials: convert.Credentials(req.Credentials)})
	if err != nil {
		return nil, err
	}
	out := &LibrariesResponse{}
	for _, l := range resp.GetLibraries() {
		out.Libraries = append(out.Libraries, Library{
			ID: l.GetId(), Name: l.GetName(), Type: LibraryType(l.GetType()), Version: l.GetVersion(), Writable: l.GetWritable(),
		})
	}
	return out, nil
}

func (c *grpcClient) ItemsSince(ctx context.Context, req *ItemsSinceRequest) (*ItemsSinceResponse, error) {
	resp, err := shim.Call(ctx, c.c.ItemsSince, &pluginv1.ItemsSinceRequest{
		Credentials:  convert.Credentials(req.Credentials),
		LibraryId:    req.LibraryID,
		SinceVersion: req.SinceVersion,
		Cursor:       req.Cursor,
		PageSize:     int32(req.PageSize),
	})
	if err != nil {
		return nil, err
	}
	out := &ItemsSinceResponse{LibraryVersion: resp.GetLibraryVersion(), NextCursor: resp.GetNextCursor(), Through: resp.GetThrough()}
	for _, it := range resp.GetItems() {
		out.Items = append(out.Items, Item{
			Key: it.GetKey(), Version: it.GetVersion(), Paper: convert.PaperFromProto(it.GetPaper()),
			Collections: it.GetCollections(), Tags: it.GetTags(), Deleted: it.GetDeleted(),
		})
	}
	return out, nil
}

func (c *grpcClient) Notes(ctx context.Context, req *NotesRequest) (*NotesResponse, error) {
	resp, err := shim.Call(ctx, c.c.Notes, &pluginv1.NotesRequest{
		Credentials: convert.Credentials(req.Credentials), LibraryId: req.LibraryID, ItemKey: req.ItemKey,
	})
	if err != nil {
		return nil, err
	}
	out := &NotesResponse{}
	for _, n := range resp.GetNotes() {
		out.Notes = append(out.Notes, noteFromProto(n))
	}
	return out, nil
}

func (c *grpcClient) WriteNote(ctx context.Context, req *WriteNoteRequest) (*WriteNoteResponse, error) {
	resp, err := shim.Call(ctx, c.c.WriteNote, &pluginv1.WriteNoteRequest{
		Credentials: convert.Credentials(req.Credentials), LibraryId: req.LibraryID, Note: noteToProto(req.Note),
	})
	if err != nil {
		return nil, err
	}
	return &WriteNoteResponse{Note: noteFromProto(resp.GetNote())}, nil
}

func (c *grpcClient) Push(ctx context.Context, req *PushRequest) (*PushResponse, error) {
	in := &pluginv1.PushRequest{Credentials: convert.Credentials(req.Credentials), LibraryId: req.LibraryID,
		Collection: req.Collection, SinceVersion: req.SinceVersion}
	for i := range req.Items {
		it := &req.Items[i]
		in.Items = append(in.Items, &pluginv1.PushItem{Marker: it.Marker, Paper: convert.PaperToProto(&it.Paper), Key: it.Key})
	}
	resp, err := shim.Call(ctx, c.c.Push, in)
	if err != nil {
		return nil, err
	}
	out := &PushResponse{LibraryVersion: resp.GetLibraryVersion(), CollectionKey: resp.GetCollectionKey()}
	for _, r := range resp.GetResults() {
		out.Results = append(out.Results, PushResult{Marker: r.GetMarker(), Key: r.GetKey(),
			Outcome: PushOutcome(r.GetOutcome()), Error: r.GetError()})
	}
	return out, nil
}
