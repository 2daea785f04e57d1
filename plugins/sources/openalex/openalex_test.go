package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

func configured(t *testing.T, baseURL string, extra map[string]any) *OpenAlex {
	t.Helper()
	o := New(slog.New(slog.DiscardHandler))
	_, err := o.Configure(t.Context(), &protocol.ConfigureRequest{Settings: plugintest.FastSettings(baseURL, extra)})
	require.NoError(t, err)
	return o
}

type testBundle struct {
	src      *OpenAlex
	requests <-chan *http.Request
}

// setup starts a server answering every request with status, content type and
// body, and a source pointed at it.
func setup(t *testing.T, status int, contentType string, body []byte) *testBundle {
	t.Helper()
	srv, reqs := plugintest.Canned(t, status, contentType, body)
	return &testBundle{src: configured(t, srv.URL, nil), requests: reqs}
}

func requireWellFormed(t *testing.T, papers []paper.Paper) {
	t.Helper()
	for i := range papers {
		p := &papers[i]
		require.NoError(t, p.Validate(), "paper %d", i)
		require.Equal(t, "openalex", p.Source)
		require.NotEmpty(t, p.IDs.OpenAlexID)
		require.NotEmpty(t, p.IDs.DOI)
		require.NotNil(t, p.CitationCount)
		require.NotEqual(t, paper.PrecisionUnknown, p.Published.Precision)
		require.NotEmpty(t, p.LandingURL)
	}
}

func ptr(n int64) *int64 { return &n }

// TestFixtures replays every recorded OpenAlex response and checks the papers or
// typed errors it becomes. A recording without a case fails the test.
func TestFixtures(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "openalex")

	type call func(ctx context.Context, o *OpenAlex) (*source.Page, error)
	get := func(ids paper.IDs) call {
		return func(ctx context.Context, o *OpenAlex) (*source.Page, error) {
			res, err := o.Get(ctx, &source.GetRequest{IDs: ids})
			if err != nil {
				return nil, err
			}
			return &source.Page{Papers: []paper.Paper{res.Paper}}, nil
		}
	}
	search := func(q string) call {
		return func(ctx context.Context, o *OpenAlex) (*source.Page, error) {
			return o.Search(ctx, &source.SearchRequest{Query: q})
		}
	}
	tests := []struct {
		fixture   string
		status    int
		call      call
		wantPath  string
		wantQuery map[string]string
		wantErr   *protocol.Error
		check     func(t *testing.T, page *source.Page)
	}{
		{
			fixture: "works_doi_10.1007_s40278-023-41815-2.json", status: 200,
			call:     get(paper.IDs{DOI: "https://doi.org/10.1007/S40278-023-41815-2"}),
			wantPath: "/works/doi:10.1007/s40278-023-41815-2",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{OpenAlexID: "W4381738344", DOI: "10.1007/s40278-023-41815-2"}, p.IDs)
				require.Equal(t, "Convalescent-anti-sars-cov-2-plasma/immune-globulin", p.Title)
				require.Empty(t, p.Authors)
				require.Equal(t, paper.Date{Year: 2023, Month: 6, Day: 23, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(0), p.CitationCount)
				require.Equal(t, "Reactions Weekly", p.Venue.Name)
				require.Equal(t, "1962", p.Venue.Volume)
				require.Equal(t, "1", p.Venue.Issue)
				require.Equal(t, "145", p.Venue.Pages)
				require.Equal(t, []string{"0114-9954", "1179-2051"}, p.Venue.ISSN)
				require.Len(t, p.References, 1)
				require.False(t, p.OpenAccess)
				require.Empty(t, p.PDFURL)
				require.Equal(t, "https://doi.org/10.1007/s40278-023-41815-2", p.LandingURL)
			},
		},
		{
			fixture: "works_doi_10.1016_j.xgen.2025.100814.json", status: 200,
			call:     get(paper.IDs{DOI: "10.1016/J.XGEN.2025.100814"}),
			wantPath: "/works/doi:10.1016/j.xgen.2025.100814",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{OpenAlexID: "W4408732759", DOI: "10.1016/j.xgen.2025.100814", PubMedID: "40120586"}, p.IDs)
				require.Len(t, p.Authors, 6)
				require.Equal(t, paper.Author{
					Name: "Michael Herger", ORCID: "0000-0002-5390-2695", SourceAuthorID: "A5067011895",
					Affiliations: []paper.Affiliation{{Name: "The Francis Crick Institute", ROR: "https://ror.org/04tnbqb63", Country: "GB"}},
				}, p.Authors[0])
				require.Equal(t, paper.Date{Year: 2025, Month: 3, Day: 1, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(3), p.CitationCount)
				require.Len(t, p.References, 59)
				require.Equal(t, paper.IDs{OpenAlexID: "W1973260880"}, p.References[0])
				require.True(t, p.OpenAccess)
				require.Equal(t, "Cell Genomics", p.Venue.Name)
				require.Equal(t, "journal", p.Venue.Type)
				require.Equal(t, "CRISPR and Genetic Engineering", p.Categories[0])
				require.Empty(t, p.Abstract, "the recording has abstract_inverted_index null")
				require.Equal(t, "article", p.WorkType)
				require.Equal(t, "en", p.Language)
				require.Equal(t, time.Date(2025, 7, 18, 1, 3, 41, 562229000, time.UTC), p.UpdatedAt)
			},
		},
		{
			fixture: "works_doi_10.1023_a_1007154515475.json", status: 200,
			call:     get(paper.IDs{OpenAlexID: "https://openalex.org/W1554322594"}),
			wantPath: "/works/W1554322594",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{OpenAlexID: "W1554322594", DOI: "10.1023/a:1007154515475", PubMedID: "11330823"}, p.IDs)
				require.Equal(t, []string{"Subrata Adak", "Debasish Bandyopadhyay", "Uday Bandyopadhyay", "Ranajit K. Banerjee"}, names(p.Authors))
				require.Equal(t, ptr(7), p.CitationCount)
				require.Len(t, p.References, 36)
				require.Equal(t, paper.Venue{
					Name: "Molecular and Cellular Biochemistry", Type: "journal", Volume: "218", Issue: "1/2", Pages: "1-11",
					Publisher: p.Venue.Publisher, ISSN: []string{"0300-8177", "1573-4919"},
				}, p.Venue)
				require.Equal(t, paper.Date{Year: 2001, Month: 1, Day: 1, Precision: paper.PrecisionDay}, p.Published)
			},
		},
		{
			fixture: "works_doi_not_found_404.html", status: 404,
			call:     get(paper.IDs{DOI: "10.1046/j.1365-2699.2003.00795"}),
			wantPath: "/works/doi:10.1046/j.1365-2699.2003.00795",
			wantErr:  protocol.ErrNotFound,
		},
		{
			fixture: "works_filter_title_search_native_oxide_copper.json", status: 200,
			call:      search("Effect of native oxide layers on copper thin-film tensile properties"),
			wantPath:  "/works",
			wantQuery: map[string]string{"search": "Effect of native oxide layers on copper thin-film tensile properties", "cursor": "*", "per_page": "25"},
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 1)
				require.EqualValues(t, 1, page.TotalEstimate)
				require.Empty(t, page.NextCursor)
				p := page.Papers[0]
				require.Equal(t, paper.IDs{OpenAlexID: "W2277923667", DOI: "10.1063/1.4938384"}, p.IDs)
				require.True(t, strings.HasPrefix(p.Abstract, "Metal-oxide layers are likely to be present on metallic nano-structures"), p.Abstract)
				require.Equal(t, []string{"Michael Skarlinski", "David J. Quesnel"}, names(p.Authors))
				require.Equal(t, "University of Rochester", p.Authors[0].Affiliations[0].Name)
				require.Equal(t, ptr(9), p.CitationCount)
				require.Equal(t, paper.Date{Year: 2015, Month: 12, Day: 21, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, "Journal of Applied Physics", p.Venue.Name)
				require.Len(t, p.References, 58)
			},
		},
		{
			fixture: "works_filter_title_search_paperqa.json", status: 200,
			call:     search("PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"),
			wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 1)
				p := page.Papers[0]
				require.Equal(t, paper.IDs{OpenAlexID: "W4389761608", DOI: "10.48550/arxiv.2312.07559", ArXivID: "2312.07559"}, p.IDs)
				require.Equal(t, "preprint", p.WorkType)
				require.Len(t, p.Authors, 6)
				require.Equal(t, paper.Author{Name: "Jakub Lála", ORCID: "0000-0002-5424-5260", SourceAuthorID: p.Authors[0].SourceAuthorID}, p.Authors[0])
				require.Equal(t, ptr(27), p.CitationCount)
				require.Equal(t, "https://arxiv.org/abs/2312.07559", p.LandingURL)
				require.Equal(t, "https://arxiv.org/pdf/2312.07559", p.PDFURL)
				require.Equal(t, "repository", p.Venue.Type)
				require.True(t, strings.HasPrefix(p.Abstract, "Large Language Models (LLMs) generalize well"))
			},
		},
	}

	covered := map[string]bool{
		// Field-restricted records (select=open_access,doi): decoded in TestPartialRecords.
		"works_doi_select_open_access_not_oa.json": true,
		"works_doi_select_open_access_oa_nar.json": true,
	}
	for _, tc := range tests {
		covered[tc.fixture] = true
	}
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range files {
		require.True(t, covered[f.Name()], "fixture %s has no test case", f.Name())
	}

	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			ct := "application/json"
			if strings.HasSuffix(tc.fixture, ".html") {
				ct = "text/html; charset=utf-8"
			}
			b := setup(t, tc.status, ct, plugintest.ReadFixture(t, dir, tc.fixture))
			page, err := tc.call(t.Context(), b.src)
			got := (<-b.requests).URL
			require.Equal(t, tc.wantPath, got.Path)
			require.Equal(t, selectFields, got.Query().Get("select"))
			for k, v := range tc.wantQuery {
				require.Equal(t, v, got.Query().Get(k), "query parameter %s", k)
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			requireWellFormed(t, page.Papers)
			tc.check(t, page)
		})
	}
}

func names(as []paper.Author) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// TestPartialRecords decodes the recorded select=open_access,doi answers: the
// DOI and open-access fields normalize, and a record without a title is no paper.
func TestPartialRecords(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "openalex")
	tests := []struct {
		fixture string
		doi     string
		oa      bool
		pdf     string
	}{
		{"works_doi_select_open_access_not_oa.json", "10.1002/wrna.1370", false, ""},
		{"works_doi_select_open_access_oa_nar.json", "10.1093/nar/gkw1164", true, "https://academic.oup.com/nar/article-pdf/45/1/311/9249485/gkw1164.pdf"},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			var w work
			require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, tc.fixture), &w))
			require.Equal(t, tc.doi, paper.NormalizeDOI(w.DOI))
			require.Equal(t, tc.oa, w.OpenAccess.IsOA)
			if tc.pdf != "" {
				require.True(t, looksLikePDF(w.OpenAccess.OAURL))
				require.Equal(t, tc.pdf, httpURL(w.OpenAccess.OAURL))
			}
			_, ok := workPaper(&w)
			require.False(t, ok)
			w.Title = "Some title"
			p, ok := workPaper(&w)
			require.True(t, ok)
			require.Equal(t, tc.pdf, p.PDFURL)
			require.Equal(t, tc.oa, p.OpenAccess)
			require.Equal(t, "https://doi.org/"+tc.doi, p.LandingURL)
		})
	}
}

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   *protocol.Error
	}{
		{"400 json", 400, `{"error":"Invalid query parameters error.","message":"cursor is invalid"}`, protocol.ErrBadRequest},
		{"401", 401, `{"error":"invalid api key"}`, protocol.ErrUnauthorized},
		{"403", 403, `forbidden`, protocol.ErrUnauthorized},
		{"403 rate limit", 403, `{"error":"Rate limit exceeded"}`, protocol.ErrRateLimited},
		{"404 html", 404, `<h1>Not Found</h1>`, protocol.ErrNotFound},
		{"429", 429, `{"error":"Rate limit exceeded"}`, protocol.ErrRateLimited},
		{"500", 500, `oops`, protocol.ErrUnavailable},
		{"503", 503, `oops`, protocol.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.status, "application/json", []byte(tc.body))
			_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.ErrorIs(t, err, tc.want)
		})
	}
	b := setup(t, 400, "application/json", []byte(`{"error":"Invalid query parameters error.","message":"cursor is invalid"}`))
	_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x"})
	require.Contains(t, err.Error(), "cursor is invalid")
}

func TestRequests(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		call func(ctx context.Context, o *OpenAlex) error
		want map[string]string
	}{
		{"search with filters", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Search(ctx, &source.SearchRequest{Query: "graph", Sort: source.SortNewest, PageSize: 10, Filters: source.Filters{
				From: paper.Date{Year: 2020, Precision: paper.PrecisionYear}, To: paper.Date{Year: 2021, Month: 2, Precision: paper.PrecisionMonth},
				Authors: []string{"Ada Lovelace"}, OpenAccessOnly: true, WorkTypes: []string{"article", "preprint"}, Categories: []string{"T10878"},
			}})
			return err
		}, map[string]string{
			"search": "graph", "sort": "publication_date:desc", "per_page": "10", "cursor": "*",
			"filter": "from_publication_date:2020-01-01,to_publication_date:2021-02-28,raw_author_name.search:Ada Lovelace,topics.id:T10878,open_access.is_oa:true,type:article|preprint",
		}},
		{"most cited", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Search(ctx, &source.SearchRequest{Query: "graph", Sort: source.SortMostCited})
			return err
		}, map[string]string{"sort": "cited_by_count:desc"}},
		{"recent", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Recent(ctx, &source.RecentRequest{Topics: []string{"prime editing", "crispr"}, Since: since})
			return err
		}, map[string]string{"search": `"prime editing" OR crispr`, "filter": "from_publication_date:2025-01-02", "sort": "publication_date:desc"}},
		{"recent by topic id", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Recent(ctx, &source.RecentRequest{Categories: []string{"https://openalex.org/T10878"}, Since: since})
			return err
		}, map[string]string{"search": "", "filter": "from_publication_date:2025-01-02,topics.id:T10878"}},
		{"author by id", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{SourceAuthorID: "https://openalex.org/A5067011895", Name: "x"}, Since: since})
			return err
		}, map[string]string{"filter": "authorships.author.id:A5067011895,from_publication_date:2025-01-02"}},
		{"author by orcid", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{ORCID: "https://orcid.org/0000-0002-5390-2695"}})
			return err
		}, map[string]string{"filter": "authorships.author.orcid:0000-0002-5390-2695"}},
		{"author by name", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "Michael Herger"}})
			return err
		}, map[string]string{"filter": "raw_author_name.search:Michael Herger"}},
		{"citations", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Citations(ctx, &source.CitationsRequest{IDs: paper.IDs{OpenAlexID: "W4408732759"}})
			return err
		}, map[string]string{"filter": "cites:W4408732759"}},
		{"credentials", func(ctx context.Context, o *OpenAlex) error {
			_, err := o.Search(ctx, &source.SearchRequest{Query: "x", Credentials: map[string]string{"mailto": "ada@example.org", "api_key": "k"}})
			return err
		}, map[string]string{"mailto": "ada@example.org", "api_key": "k"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, 200, "application/json", []byte(`{"meta":{"count":0,"next_cursor":null},"results":[]}`))
			require.NoError(t, tc.call(t.Context(), b.src))
			got := (<-b.requests).URL.Query()
			for k, v := range tc.want {
				require.Equal(t, v, got.Get(k), "query parameter %s", k)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "openalex")
	var one map[string]any
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, "works_doi_10.1016_j.xgen.2025.100814.json"), &one))
	cursors := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.URL.Query().Get("cursor")
		cursors <- c
		next := any("abc")
		if c == "abc" {
			next = nil // OpenAlex's last page
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"meta": map[string]any{"count": 2, "next_cursor": next}, "results": []any{one}})
	}))
	t.Cleanup(srv.Close)
	o := configured(t, srv.URL, nil)
	page, err := o.Search(t.Context(), &source.SearchRequest{Query: "x", PageSize: 1})
	require.NoError(t, err)
	require.Equal(t, "*", <-cursors)
	require.Equal(t, "c:1:abc", page.NextCursor)
	page, err = o.Search(t.Context(), &source.SearchRequest{Query: "x", PageSize: 1, Cursor: page.NextCursor})
	require.NoError(t, err)
	require.Equal(t, "abc", <-cursors)
	require.Empty(t, page.NextCursor)

	for _, bogus := range []string{"abc", "c:x:abc", "c:1:", "c:-1:abc"} {
		_, err := o.Search(t.Context(), &source.SearchRequest{Query: "x", Cursor: bogus})
		require.ErrorIs(t, err, protocol.ErrBadRequest, bogus)
	}
}

func TestIdentifiers(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, got, want string }{
		{"work url", openAlexID("https://openalex.org/W4408732759"), "W4408732759"},
		{"work lower", openAlexID("w123"), "W123"},
		{"not a work", openAlexID("A123"), ""},
		{"author url", openAlexAuthorID("https://openalex.org/A5067011895"), "A5067011895"},
		{"orcid url", bareORCID("https://orcid.org/0000-0002-5390-2695"), "0000-0002-5390-2695"},
		{"orcid x", bareORCID("0000-0002-1694-233x"), "0000-0002-1694-233X"},
		{"doi url", paper.NormalizeDOI("https://doi.org/10.1023/A:1007154515475"), "10.1023/a:1007154515475"},
		{"doi prefix", paper.NormalizeDOI("doi:10.1093/NAR/gkw1164"), "10.1093/nar/gkw1164"},
		{"not a doi", paper.NormalizeDOI("W123"), ""},
		{"arxiv doi", paper.ArXivFromDOI("10.48550/arxiv.2312.07559"), "2312.07559"},
		{"old arxiv doi", paper.ArXivFromDOI("10.48550/arxiv.math.gt/0309136"), "math.GT/0309136"},
		{"arxiv url", arxivFromURL("https://arxiv.org/abs/2312.07559v2"), "2312.07559"},
		{"pmcid", pmcid("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3628373"), "PMC3628373"},
		{"abstract", invertedAbstract(map[string][]int{"a": {0, 2}, "b": {1}, "end.": {3}}), "a b a end."},
		{"pages", pages("1", "11"), "1-11"},
		{"one page", pages("145", "145"), "145"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.got)
		})
	}
	require.Equal(t, paper.Date{Year: 2019, Precision: paper.PrecisionYear}, publicationDate("", 2019))
	require.Equal(t, paper.Date{}, publicationDate("", 0))
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]any
		wantErr  bool
	}{
		{"empty", map[string]any{}, false},
		{"all", map[string]any{"base_url": "http://127.0.0.1:1", "rate_interval": "0s", "max_attempts": float64(2),
			"backoff_base": "10ms", "max_backoff": "1s", "timeout": "2s"}, false},
		{"relative url", map[string]any{"base_url": "api.openalex.org"}, true},
		{"bad interval", map[string]any{"rate_interval": "soon"}, true},
		{"fractional attempts", map[string]any{"max_attempts": 1.5}, true},
		{"unknown", map[string]any{"mailto": "x"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := New(slog.New(slog.DiscardHandler))
			_, err := o.Configure(t.Context(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Equal(t, defaultSettings(), o.set)
				return
			}
			require.NoError(t, err)
		})
	}
}

// flaky answers the scripted statuses in turn, then body.
func flaky(t *testing.T, body string, script ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return plugintest.Scripted(t, plugintest.Reply(http.StatusOK, "", "", body), script...)
}

func status(code int, retryAfter string) func(w http.ResponseWriter) {
	return plugintest.Reply(code, retryAfter, "", "")
}

const emptyList = `{"meta":{"count":0,"next_cursor":null},"results":[]}`

func TestRetries(t *testing.T) {
	t.Parallel()
	search := func(o *OpenAlex) error {
		_, err := o.Search(t.Context(), &source.SearchRequest{Query: "x"})
		return err
	}
	t.Run("429 with Retry-After then 500 then success", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(429, "1"), status(500, ""))
		o := configured(t, srv.URL, nil)
		start := time.Now()
		require.NoError(t, search(o))
		require.EqualValues(t, 3, n.Load())
		require.GreaterOrEqual(t, time.Since(start), time.Second)
	})
	t.Run("429 exhausted", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(429, ""), status(429, ""))
		o := configured(t, srv.URL, map[string]any{"max_attempts": float64(2)})
		require.ErrorIs(t, search(o), protocol.ErrRateLimited)
		require.EqualValues(t, 2, n.Load())
	})
	t.Run("long Retry-After returned to the caller", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, emptyList, status(429, "3600"))
		o := configured(t, srv.URL, nil)
		err := search(o)
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, protocol.CodeRateLimited, pe.Code)
		require.Equal(t, time.Hour, pe.RetryAfter)
	})
	t.Run("5xx exhausted", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(502, ""), status(503, ""), status(504, ""))
		o := configured(t, srv.URL, map[string]any{"max_attempts": float64(3)})
		require.ErrorIs(t, search(o), protocol.ErrUnavailable)
		require.EqualValues(t, 3, n.Load())
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	t.Run("slow upstream", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(func() { close(release); srv.Close() })
		o := configured(t, srv.URL, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := o.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("backoff", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, emptyList, status(503, "30"))
		o := configured(t, srv.URL, map[string]any{"max_backoff": "1m"})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(30*time.Millisecond, cancel)
		start := time.Now()
		_, err := o.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, time.Since(start), time.Second)
	})
}

// fakeOpenAlex serves the recorded works in the shapes the plugin asks for:
// singleton look-ups by id or DOI (the recorded HTML 404 otherwise) and cursor-paged
// lists with the filters the plugin uses.
func fakeOpenAlex(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	var pool []map[string]any
	seen := map[string]bool{}
	add := func(w map[string]any) {
		if id, _ := w["id"].(string); id != "" && !seen[id] {
			seen[id] = true
			pool = append(pool, w)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, filepath.Base(f)), &doc))
		if rs, ok := doc["results"].([]any); ok {
			for _, r := range rs {
				add(r.(map[string]any))
			}
			continue
		}
		add(doc)
	}
	notFound := plugintest.ReadFixture(t, dir, "works_doi_not_found_404.html")
	str := func(w map[string]any, k string) string { s, _ := w[k].(string); return s }
	authorOf := func(w map[string]any, pred func(a map[string]any) bool) bool {
		as, _ := w["authorships"].([]any)
		return slices.ContainsFunc(as, func(a any) bool {
			au, _ := a.(map[string]any)["author"].(map[string]any)
			return pred(au)
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key, ok := strings.CutPrefix(r.URL.Path, "/works/"); ok {
			for _, wk := range pool {
				if openAlexID(str(wk, "id")) == strings.ToUpper(key) || "doi:"+paper.NormalizeDOI(str(wk, "doi")) == key {
					_ = json.NewEncoder(w).Encode(wk)
					return
				}
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(notFound)
			return
		}
		q := r.URL.Query()
		hits := pool
		for _, f := range strings.Split(q.Get("filter"), ",") {
			k, v, _ := strings.Cut(f, ":")
			var keep func(wk map[string]any) bool
			switch k {
			case "openalex":
				keep = func(wk map[string]any) bool { return slices.Contains(strings.Split(v, "|"), openAlexID(str(wk, "id"))) }
			case "cites":
				keep = func(wk map[string]any) bool {
					refs, _ := wk["referenced_works"].([]any)
					return slices.Contains(refs, any("https://openalex.org/"+v))
				}
			case "authorships.author.id":
				keep = func(wk map[string]any) bool {
					return authorOf(wk, func(a map[string]any) bool { return openAlexAuthorID(str(a, "id")) == v })
				}
			case "raw_author_name.search":
				keep = func(wk map[string]any) bool {
					return authorOf(wk, func(a map[string]any) bool { return str(a, "display_name") == v })
				}
			}
			if keep != nil {
				hits = slices.DeleteFunc(slices.Clone(hits), func(wk map[string]any) bool { return !keep(wk) })
			}
		}
		per, _ := strconv.Atoi(q.Get("per_page"))
		off := 0
		if c := q.Get("cursor"); c != "*" && c != "" {
			off, _ = strconv.Atoi(strings.TrimPrefix(c, "off"))
		}
		off = min(off, len(hits))
		end := min(off+per, len(hits))
		var next any
		if end < len(hits) {
			next = fmt.Sprintf("off%d", end)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"meta": map[string]any{"count": len(hits), "per_page": per, "next_cursor": next}, "results": hits[off:end],
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConformance(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "openalex")
	srv := fakeOpenAlex(t, dir)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindSource, Query: "graph", PageSize: 2,
		Settings:    map[string]any{"base_url": srv.URL, "rate_interval": "0s", "backoff_base": "1ms"},
		Credentials: map[string]string{"mailto": "conformance@example.org"},
	})
}
