package source

import (
	"context"

	"google.golang.org/grpc"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
)

// grpcClient is the host's view of a source plugin: it implements WithCitations by
// calling the plugin over gRPC with the caller's context.
type grpcClient struct {
	shim.PluginClient
	c    pluginv1.PaperSourceClient
	conn grpc.ClientConnInterface
}

var _ WithCitations = (*grpcClient)(nil)

// page calls a paging RPC (one answering a PapersPage) and decodes the answer
// straight into a Page, through pageCodec.
func (c *grpcClient) page(ctx context.Context, method string, req any) (*Page, error) {
	var out convert.WirePage
	if err := c.conn.Invoke(ctx, method, req, &out, pageCall); err != nil {
		return nil, convert.StatusToErr(ctx, err)
	}
	return &Page{Papers: out.Papers, NextCursor: out.NextCursor, TotalEstimate: out.TotalEstimate}, nil
}

func (c *grpcClient) Search(ctx context.Context, req *SearchRequest) (*Page, error) {
	f := req.Filters
	return c.page(ctx, pluginv1.PaperSource_Search_FullMethodName, &pluginv1.SearchRequest{
		Credentials: convert.Credentials(req.Credentials),
		Query:       req.Query,
		Filters: &pluginv1.SearchFilters{
			From:           convert.DateToProto(f.From),
			To:             convert.DateToProto(f.To),
			Categories:     f.Categories,
			Authors:        f.Authors,
			Venue:          f.Venue,
			OpenAccessOnly: f.OpenAccessOnly,
			WorkTypes:      f.WorkTypes,
		},
		Sort:     pluginv1.SearchSort(req.Sort),
		Cursor:   req.Cursor,
		PageSize: int32(req.PageSize),
	})
}

func (c *grpcClient) Get(ctx context.Context, req *GetRequest) (*GetResponse, error) {
	resp, err := shim.Call(ctx, c.c.Get, &pluginv1.GetRequest{
		Credentials: convert.Credentials(req.Credentials),
		Ids:         convert.IDsToProto(req.IDs),
	})
	if err != nil {
		return nil, err
	}
	return &GetResponse{Paper: convert.PaperFromProto(resp.GetPaper())}, nil
}

func (c *grpcClient) Recent(ctx context.Context, req *RecentRequest) (*Page, error) {
	return c.page(ctx, pluginv1.PaperSource_Recent_FullMethodName, &pluginv1.RecentRequest{
		Credentials: convert.Credentials(req.Credentials),
		Topics:      req.Topics,
		Categories:  req.Categories,
		Since:       convert.TimeToProto(req.Since),
		Cursor:      req.Cursor,
		PageSize:    int32(req.PageSize),
	})
}

func (c *grpcClient) AuthorPapers(ctx context.Context, req *AuthorPapersRequest) (*Page, error) {
	return c.page(ctx, pluginv1.PaperSource_AuthorPapers_FullMethodName, &pluginv1.AuthorPapersRequest{
		Credentials: convert.Credentials(req.Credentials),
		Author: &pluginv1.AuthorRef{
			Name: req.Author.Name, Orcid: req.Author.ORCID, SourceAuthorId: req.Author.SourceAuthorID,
		},
		Since:    convert.TimeToProto(req.Since),
		Cursor:   req.Cursor,
		PageSize: int32(req.PageSize),
	})
}

func citationsToProto(req *CitationsRequest) *pluginv1.CitationsRequest {
	return &pluginv1.CitationsRequest{
		Credentials: convert.Credentials(req.Credentials),
		Ids:         convert.IDsToProto(req.IDs),
		Cursor:      req.Cursor,
		PageSize:    int32(req.PageSize),
	}
}

func (c *grpcClient) Citations(ctx context.Context, req *CitationsRequest) (*Page, error) {
	return c.page(ctx, pluginv1.PaperSource_Citations_FullMethodName, citationsToProto(req))
}

func (c *grpcClient) References(ctx context.Context, req *CitationsRequest) (*Page, error) {
	return c.page(ctx, pluginv1.PaperSource_References_FullMethodName, citationsToProto(req))
}
