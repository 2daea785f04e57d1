package refmanager

import (
	"context"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
)

// grpcServer serves the RefManager service by calling the implementation.
type grpcServer struct {
	pluginv1.UnimplementedRefManagerServer
	impl Manager
	plug *shim.PluginServer
}

func noteToProto(n Note) *pluginv1.Note {
	out := &pluginv1.Note{Key: n.Key, ParentItemKey: n.ParentItemKey, Html: n.HTML, Version: n.Version}
	if a := n.Annotation; a != nil {
		out.Annotation = &pluginv1.Annotation{Type: a.Type, Text: a.Text, PageLabel: a.PageLabel}
	}
	return out
}

func noteFromProto(n *pluginv1.Note) Note {
	out := Note{Key: n.GetKey(), ParentItemKey: n.GetParentItemKey(), HTML: n.GetHtml(), Version: n.GetVersion()}
	if a := n.GetAnnotation(); a != nil {
		out.Annotation = &Annotation{Type: a.GetType(), Text: a.GetText(), PageLabel: a.GetPageLabel()}
	}
	return out
}

func (s *grpcServer) Push(ctx context.Context, req *pluginv1.PushRequest) (*pluginv1.PushResponse, error) {
	in := &PushRequest{Credentials: convert.CredentialsFrom(req.GetCredentials()), LibraryID: req.GetLibraryId(),
		Collection: req.GetCollection(), SinceVersion: req.GetSinceVersion()}
	for _, it := range req.GetItems() {
		in.Items = append(in.Items, PushItem{Marker: it.GetMarker(), Paper: convert.PaperFromProto(it.GetPaper()), Key: it.GetKey()})
	}
	resp, err := s.impl.Push(ctx, in)
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.PushResponse{LibraryVersion: resp.LibraryVersion, CollectionKey: resp.CollectionKey}
	for _, r := range resp.Results {
		out.Results = append(out.Results, &pluginv1.PushResult{Marker: r.Marker, Key: r.Key,
			Outcome: pluginv1.PushOutcome(r.Outcome), Error: r.Error})
	}
	return out, nil
}

func (s *grpcServer) Libraries(ctx context.Context, req *pluginv1.LibrariesRequest) (*pluginv1.LibrariesResponse, error) {
	resp, err := s.impl.Libraries(ctx, &LibrariesRequest{Credentials: convert.CredentialsFrom(req.GetCredentials())})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.LibrariesResponse{}
	for _, l := range resp.Libraries {
		out.Libraries = append(out.Libraries, &pluginv1.Library{
			Id: l.ID, Name: l.Name, Type: pluginv1.LibraryType(l.Type), Version: l.Version, Writable: l.Writable,
		})
	}
	return out, nil
}

func (s *grpcServer) ItemsSince(ctx context.Context, req *pluginv1.ItemsSinceRequest) (*pluginv1.ItemsSinceResponse, error) {
	resp, err := s.impl.ItemsSince(ctx, &ItemsSinceRequest{
		Credentials:  convert.CredentialsFrom(req.GetCredentials()),
		LibraryID:    req.GetLibraryId(),
		SinceVersion: req.GetSinceVersion(),
		Cursor:       req.GetCursor(),
		PageSize:     int(req.GetPageSize()),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.ItemsSinceResponse{LibraryVersion: resp.LibraryVersion, NextCursor: resp.NextCursor, Through: resp.Through}
	name := s.plug.Name(ctx)
	for i := range resp.Items {
		it := &resp.Items[i]
		p := convert.PaperToProto(&it.Paper)
		if p.Source == "" {
			p.Source = name
		}
		out.Items = append(out.Items, &pluginv1.RefItem{
			Key: it.Key, Version: it.Version, Paper: p, Collections: it.Collections, Tags: it.Tags, Deleted: it.Deleted,
		})
	}
	return out, nil
}

func (s *grpcServer) Notes(ctx context.Context, req *pluginv1.NotesRequest) (*pluginv1.NotesResponse, error) {
	resp, err := s.impl.Notes(ctx, &NotesRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		LibraryID:   req.GetLibraryId(),
		ItemKey:     req.GetItemKey(),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.NotesResponse{}
	for _, n := range resp.Notes {
		out.Notes = append(out.Notes, noteToProto(n))
	}
	return out, nil
}

func (s *grpcServer) WriteNote(ctx context.Context, req *pluginv1.WriteNoteRequest) (*pluginv1.WriteNoteResponse, error) {
	resp, err := s.impl.WriteNote(ctx, &WriteNoteRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		LibraryID:   req.GetLibraryId(),
		Note:        noteFromProto(req.GetNote()),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.WriteNoteResponse{Note: noteToProto(resp.Note)}, nil
}
