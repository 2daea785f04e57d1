package source_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// fake is a source answering from one rich paper and recording what it was asked.
type fake struct {
	protocol.ConfigureDefaults
	p        paper.Paper
	lastReq  *source.SearchRequest
	settings map[string]any
}

func (f *fake) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "fake", Version: "1.0.0"}, nil
}

func (f *fake) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	f.settings = req.Settings
	return &protocol.ConfigureResponse{}, nil
}

func (f *fake) Search(_ context.Context, req *source.SearchRequest) (*source.Page, error) {
	f.lastReq = req
	return &source.Page{Papers: []paper.Paper{f.p}, NextCursor: "next", TotalEstimate: 7}, nil
}

func (f *fake) Get(_ context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.DOI != f.p.IDs.DOI {
		return nil, protocol.NotFound("no %s", req.IDs.DOI)
	}
	return &source.GetResponse{Paper: f.p}, nil
}

func (f *fake) Recent(context.Context, *source.RecentRequest) (*source.Page, error) {
	return nil, protocol.RateLimited(2*time.Second, "slow down")
}

func (f *fake) AuthorPapers(ctx context.Context, _ *source.AuthorPapersRequest) (*source.Page, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func richPaper() paper.Paper {
	n := int64(42)
	return paper.Paper{
		IDs: paper.IDs{
			DOI: "10.1145/3368089.3409742", ArXivID: "2101.00001", ArXivVersion: 3, OpenAlexID: "W2741809807",
			SemanticScholarID: "649def34f8be52c8b66281af98ae884c09aef38b", PubMedID: "31452104", PMCID: "PMC6709623",
		},
		Title: "Attention Is All You Need",
		Authors: []paper.Author{{
			Name: "Ashish Vaswani", GivenName: "Ashish", FamilyName: "Vaswani", ORCID: "0000-0002-1825-0097",
			Affiliations:   []paper.Affiliation{{Name: "Google Brain", ROR: "https://ror.org/00njsd438", Country: "US"}},
			SourceAuthorID: "A1",
		}},
		Abstract:      "The dominant sequence transduction models ...",
		Published:     paper.Date{Year: 2017, Month: 6, Precision: paper.PrecisionMonth},
		Venue:         paper.Venue{Name: "NeurIPS", Type: "conference", Volume: "30", Pages: "5998-6008", Publisher: "Curran", ISSN: []string{"1049-5258"}},
		LandingURL:    "https://arxiv.org/abs/1706.03762",
		PDFURL:        "https://arxiv.org/pdf/1706.03762",
		CitationCount: &n,
		References:    []paper.IDs{{DOI: "10.1162/neco.1997.9.8.1735"}},
		Categories:    []string{"cs.CL", "cs.LG"},
		OpenAccess:    true,
		License:       "CC-BY-4.0",
		WorkType:      "article",
		Language:      "en",
		UpdatedAt:     time.Date(2023, 8, 2, 10, 0, 0, 0, time.UTC),
	}
}

func connect(t *testing.T, impl source.Source) source.WithCitations {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"source": &source.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("source")
	require.NoError(t, err)
	return raw.(source.WithCitations)
}

func TestPaperCrossesTheWireIntact(t *testing.T) {
	t.Parallel()
	f := &fake{p: richPaper()}
	c := connect(t, f)
	page, err := c.Search(t.Context(), &source.SearchRequest{
		Credentials: map[string]string{"api_key": "k"},
		Query:       "attention",
		Filters:     source.Filters{From: paper.Date{Year: 2017, Precision: paper.PrecisionYear}, Categories: []string{"cs.CL"}, OpenAccessOnly: true},
		Sort:        source.SortNewest,
		Cursor:      "c1",
	})
	require.NoError(t, err)
	want := richPaper()
	want.Source = "fake" // filled from Describe
	require.Equal(t, []paper.Paper{want}, page.Papers)
	require.Equal(t, "next", page.NextCursor)
	require.EqualValues(t, 7, page.TotalEstimate)

	require.Equal(t, "k", f.lastReq.Credentials["api_key"])
	require.Equal(t, source.DefaultPageSize, f.lastReq.PageSize)
	require.Equal(t, source.SortNewest, f.lastReq.Sort)
	require.Equal(t, "c1", f.lastReq.Cursor)
	require.Equal(t, []string{"cs.CL"}, f.lastReq.Filters.Categories)
	require.True(t, f.lastReq.Filters.OpenAccessOnly)
	require.Equal(t, 2017, f.lastReq.Filters.From.Year)
}

func TestDescribeAndConfigure(t *testing.T) {
	t.Parallel()
	f := &fake{p: richPaper()}
	c := connect(t, f)
	info, err := c.Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.Equal(t, protocol.KindSource, info.Kind)
	require.Equal(t, protocol.Version, info.ProtocolVersion)
	require.False(t, info.HasCapability(protocol.CapabilityCitations))

	_, err = c.Configure(t.Context(), &protocol.ConfigureRequest{Settings: map[string]any{"rows": float64(5), "mode": "fast"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"rows": float64(5), "mode": "fast"}, f.settings)
}

func TestTypedErrorsAndCapabilities(t *testing.T) {
	t.Parallel()
	c := connect(t, &fake{p: richPaper()})
	ctx := t.Context()

	_, err := c.Get(ctx, &source.GetRequest{IDs: paper.IDs{DOI: "10.1/none"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)

	_, err = c.Recent(ctx, &source.RecentRequest{Topics: []string{"x"}})
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, protocol.CodeRateLimited, pe.Code)
	require.Equal(t, 2*time.Second, pe.RetryAfter)

	_, err = c.Citations(ctx, &source.CitationsRequest{IDs: paper.IDs{DOI: "10.1/x"}})
	require.ErrorIs(t, err, protocol.ErrUnsupported)

	_, err = c.Search(ctx, &source.SearchRequest{Query: "q", PageSize: -1})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestCancellationReachesThePlugin(t *testing.T) {
	t.Parallel()
	c := connect(t, &fake{p: richPaper()})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "x"}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
