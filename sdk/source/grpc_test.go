package source_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
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

// pager answers every paging call with its papers, and Search with papers made
// from the query, so concurrent calls can tell their answers apart.
type pager struct {
	protocol.ConfigureDefaults
	papers []paper.Paper
}

func (p *pager) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "pager", Version: "1.0.0"}, nil
}

func (p *pager) Search(_ context.Context, req *source.SearchRequest) (*source.Page, error) {
	if p.papers != nil {
		return &source.Page{Papers: p.papers, NextCursor: "n", TotalEstimate: 9}, nil
	}
	return &source.Page{Papers: queryPapers(req.Query, req.PageSize), NextCursor: "after " + req.Query}, nil
}

func (p *pager) Get(context.Context, *source.GetRequest) (*source.GetResponse, error) {
	return nil, protocol.NotFound("none")
}

func (p *pager) Recent(context.Context, *source.RecentRequest) (*source.Page, error) {
	return &source.Page{Papers: p.papers}, nil
}

func (p *pager) AuthorPapers(context.Context, *source.AuthorPapersRequest) (*source.Page, error) {
	return &source.Page{Papers: p.papers}, nil
}

func (p *pager) Citations(context.Context, *source.CitationsRequest) (*source.Page, error) {
	return &source.Page{Papers: p.papers}, nil
}

func (p *pager) References(context.Context, *source.CitationsRequest) (*source.Page, error) {
	return nil, nil
}

// queryPapers are n papers whose every text names q.
func queryPapers(q string, n int) []paper.Paper {
	out := make([]paper.Paper, n)
	for i := range out {
		c := int64(i)
		out[i] = paper.Paper{
			IDs:      paper.IDs{SourceID: fmt.Sprintf("%s/%d", q, i)},
			Title:    "Title about " + q,
			Authors:  []paper.Author{{Name: "Author of " + q, Affiliations: []paper.Affiliation{{Name: "Lab of " + q}}}},
			Abstract: strings.Repeat(q+" ", 20), Categories: []string{q}, CitationCount: &c,
		}
	}
	return out
}

func TestPagesKeepEveryFieldOnEveryPagingCall(t *testing.T) {
	t.Parallel()
	unicode := richPaper()
	unicode.Title = "Über Graphen: 図の学習 — ναι 🚀 (עברית) e\u0301"
	unicode.Authors[0].Name = "Zoë Ünal"
	unicode.Categories = []string{"cs.CL", "", "物理"}
	unicode.UpdatedAt = time.Date(1969, 7, 20, 20, 17, 40, 999999999, time.FixedZone("EDT", -4*3600))
	zero := int64(0)
	empty := paper.Paper{
		Title: "Empty lists", Source: "other", Authors: []paper.Author{}, Categories: []string{},
		References: []paper.IDs{}, Venue: paper.Venue{ISSN: []string{}}, CitationCount: &zero,
	}
	c := connect(t, &pager{papers: []paper.Paper{unicode, {}, empty}})

	wantUnicode := unicode
	wantUnicode.Source = "pager"
	wantUnicode.UpdatedAt = unicode.UpdatedAt.UTC()
	want := []paper.Paper{
		wantUnicode,
		{Source: "pager"}, // an empty source is filled from Describe
		// Protobuf has no empty list: empty ones arrive as nil. A zero count is not none.
		{Title: "Empty lists", Source: "other", CitationCount: &zero},
	}
	ctx := t.Context()
	calls := map[string]func() (*source.Page, error){
		"search": func() (*source.Page, error) { return c.Search(ctx, &source.SearchRequest{Query: "q"}) },
		"recent": func() (*source.Page, error) { return c.Recent(ctx, &source.RecentRequest{Topics: []string{"t"}}) },
		"author": func() (*source.Page, error) {
			return c.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "a"}})
		},
		"citations": func() (*source.Page, error) {
			return c.Citations(ctx, &source.CitationsRequest{IDs: paper.IDs{DOI: "10.1/x"}})
		},
	}
	for name, call := range calls {
		page, err := call()
		require.NoError(t, err, name)
		require.Equal(t, want, page.Papers, name)
	}
	// A nil page is an empty one.
	page, err := c.References(ctx, &source.CitationsRequest{IDs: paper.IDs{DOI: "10.1/x"}})
	require.NoError(t, err)
	require.Empty(t, page.Papers)
	require.Empty(t, page.NextCursor)
}

func TestAPageTheWireCannotCarryIsAnError(t *testing.T) {
	t.Parallel()
	bad := richPaper()
	bad.Abstract = string([]byte{'C', 'a', 'f', 0xe9})
	c := connect(t, &pager{papers: []paper.Paper{bad}})
	_, err := c.Search(t.Context(), &source.SearchRequest{Query: "q"})
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, protocol.CodeInternal, pe.Code)
	require.Contains(t, pe.Message, "not valid UTF-8")
}

// TestConcurrentPagesStayApart runs many searches at once over one connection (the
// host's case): each answer must hold its own query's papers, whole. Run it with
// -race: the decoder borrows gRPC's pooled receive buffers.
func TestConcurrentPagesStayApart(t *testing.T) {
	t.Parallel()
	c := connect(t, &pager{})
	const workers, calls = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				q := fmt.Sprintf("w%d-c%d-%s", w, i, strings.Repeat("é", w*50))
				size := 1 + (w+i)%40
				page, err := c.Search(t.Context(), &source.SearchRequest{Query: q, PageSize: size})
				if err != nil {
					errs <- err
					return
				}
				want := queryPapers(q, size)
				for k := range want {
					want[k].Source = "pager"
				}
				if !reflect.DeepEqual(want, page.Papers) || page.NextCursor != "after "+q {
					errs <- fmt.Errorf("search %q got another answer: %d papers, cursor %q", q, len(page.Papers), page.NextCursor)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
