package source

import (
	"context"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// grpcServer serves the PaperSource service by calling the implementation.
type grpcServer struct {
	pluginv1.UnimplementedPaperSourceServer
	impl Source
	plug *shim.PluginServer
}

func pageSize(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, protocol.BadRequest("page_size %d is negative", n)
	case n == 0:
		return DefaultPageSize, nil
	case n > MaxPageSize:
		return MaxPageSize, nil
	}
	return int(n), nil
}

func (s *grpcServer) page(ctx context.Context, p *Page, err error) (*pluginv1.PapersPage, error) {
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	if p == nil {
		p = &Page{}
	}
	raw, err := convert.AppendPage(nil, p.Papers, p.NextCursor, p.TotalEstimate, s.plug.Name(ctx))
	if err != nil {
		return nil, convert.ErrToStatus(&protocol.Error{Code: protocol.CodeInternal, Message: "the source answered a page protobuf cannot carry: " + err.Error(), Cause: err})
	}
	return convert.PageMessage(raw), nil
}

func (s *grpcServer) Search(ctx context.Context, req *pluginv1.SearchRequest) (*pluginv1.PapersPage, error) {
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	f := req.GetFilters()
	p, err := s.impl.Search(ctx, &SearchRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Query:       req.GetQuery(),
		Filters: Filters{
			From:           convert.DateFromProto(f.GetFrom()),
			To:             convert.DateFromProto(f.GetTo()),
			Categories:     f.GetCategories(),
			Authors:        f.GetAuthors(),
			Venue:          f.GetVenue(),
			OpenAccessOnly: f.GetOpenAccessOnly(),
			WorkTypes:      f.GetWorkTypes(),
		},
		Sort:     Sort(req.GetSort()),
		Cursor:   req.GetCursor(),
		PageSize: size,
	})
	return s.page(ctx, p, err)
}

func (s *grpcServer) Get(ctx context.Context, req *pluginv1.GetRequest) (*pluginv1.GetResponse, error) {
	resp, err := s.impl.Get(ctx, &GetRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		IDs:         convert.IDsFromProto(req.GetIds()),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	if resp == nil {
		return nil, convert.ErrToStatus(protocol.NotFound("no paper for these identifiers"))
	}
	out := convert.PaperToProto(&resp.Paper)
	if out.Source == "" {
		out.Source = s.plug.Name(ctx)
	}
	return &pluginv1.GetResponse{Paper: out}, nil
}

func (s *grpcServer) Recent(ctx context.Context, req *pluginv1.RecentRequest) (*pluginv1.PapersPage, error) {
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	p, err := s.impl.Recent(ctx, &RecentRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Topics:      req.GetTopics(),
		Categories:  req.GetCategories(),
		Since:       convert.TimeFromProto(req.GetSince()),
		Cursor:      req.GetCursor(),
		PageSize:    size,
	})
	return s.page(ctx, p, err)
}

func (s *grpcServer) AuthorPapers(ctx context.Context, req *pluginv1.AuthorPapersRequest) (*pluginv1.PapersPage, error) {
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	a := req.GetAuthor()
	p, err := s.impl.AuthorPapers(ctx, &AuthorPapersRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Author:      AuthorRef{Name: a.GetName(), ORCID: a.GetOrcid(), SourceAuthorID: a.GetSourceAuthorId()},
		Since:       convert.TimeFromProto(req.GetSince()),
		Cursor:      req.GetCursor(),
		PageSize:    size,
	})
	return s.page(ctx, p, err)
}

func (s *grpcServer) citationsRequest(req *pluginv1.CitationsRequest) (*CitationsRequest, error) {
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	return &CitationsRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		IDs:         convert.IDsFromProto(req.GetIds()),
		Cursor:      req.GetCursor(),
		PageSize:    size,
	}, nil
}

func (s *grpcServer) Citations(ctx context.Context, req *pluginv1.CitationsRequest) (*pluginv1.PapersPage, error) {
	impl, ok := s.impl.(WithCitations)
	if !ok {
		return nil, convert.ErrToStatus(protocol.Unsupported("this source does not list citations"))
	}
	in, err := s.citationsRequest(req)
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	p, err := impl.Citations(ctx, in)
	return s.page(ctx, p, err)
}

func (s *grpcServer) References(ctx context.Context, req *pluginv1.CitationsRequest) (*pluginv1.PapersPage, error) {
	impl, ok := s.impl.(WithCitations)
	if !ok {
		return nil, convert.ErrToStatus(protocol.Unsupported("this source does not list references"))
	}
	in, err := s.citationsRequest(req)
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	p, err := impl.References(ctx, in)
	return s.page(ctx, p, err)
}
