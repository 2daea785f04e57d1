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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

func configured(t *testing.T, baseURL string, extra map[string]any) *Crossref {
	t.Helper()
	c := New(slog.New(slog.DiscardHandler))
	_, err := c.Configure(t.Context(), &protocol.ConfigureRequest{Settings: plugintest.FastSettings(baseURL, extra)})
	require.NoError(t, err)
	return c
}

type testBundle struct {
	src      *Crossref
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
		require.Equal(t, "crossref", p.Source)
		require.NotEmpty(t, p.IDs.DOI)
		require.Equal(t, "https://doi.org/"+p.IDs.DOI, p.LandingURL)
	}
}

func ptr(n int64) *int64 { return &n }

func names(as []paper.Author) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// TestFixtures replays every recorded Crossref response and checks the papers or
// typed errors it becomes. A recording without a case fails the test.
func TestFixtures(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "crossref")

	type call func(ctx context.Context, c *Crossref) (*source.Page, error)
	get := func(doi string) call {
		return func(ctx context.Context, c *Crossref) (*source.Page, error) {
			res, err := c.Get(ctx, &source.GetRequest{IDs: paper.IDs{DOI: doi}})
			if err != nil {
				return nil, err
			}
			return &source.Page{Papers: []paper.Paper{res.Paper}}, nil
		}
	}
	search := func(q string, size int) call {
		return func(ctx context.Context, c *Crossref) (*source.Page, error) {
			return c.Search(ctx, &source.SearchRequest{Query: q, PageSize: size})
		}
	}
	tests := []struct {
		fixture  string
		status   int
		call     call
		wantPath string
		wantErr  *protocol.Error
		check    func(t *testing.T, page *source.Page)
	}{
		{
			fixture: "members_98_works_cursor_first_page.json", status: 200,
			call: search("hindawi", 5), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 5)
				require.EqualValues(t, 138567, page.TotalEstimate)
				require.True(t, strings.HasPrefix(page.NextCursor, "c:5:DnF1ZXJ5VGhlbkZldGNo"), page.NextCursor)
				p := page.Papers[0]
				require.Equal(t, "10.4061/2010/505436", p.IDs.DOI)
				require.Len(t, p.Authors, 6)
				require.Equal(t, paper.Date{Year: 2010, Month: 12, Day: 5, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, "http://downloads.hindawi.com/archive/2010/505436.pdf", p.PDFURL)
				require.NotEmpty(t, p.Abstract)
				require.Equal(t, ptr(2), p.CitationCount)
				require.Len(t, p.References, refsWithDOI(t, dir, "members_98_works_cursor_first_page.json", 0))
				require.Equal(t, paper.Date{Year: 2016, Precision: paper.PrecisionYear}, page.Papers[1].Published)
				require.Equal(t, paper.Date{Year: 1997, Month: 5, Precision: paper.PrecisionMonth}, page.Papers[2].Published)
				require.Empty(t, page.Papers[2].PDFURL, "Wiley's links are not typed application/pdf")
				issue := page.Papers[4]
				require.Equal(t, "10.1002/humu.2018.39.issue-6", issue.IDs.DOI)
				require.Equal(t, "Human Mutation 39 (6)", issue.Title)
				require.Equal(t, "other", issue.WorkType)
			},
		},
		{
			fixture: "works_doi_10.1038_s42256-024-00832-8.json", status: 200,
			call: get("https://doi.org/10.1038/S42256-024-00832-8"), wantPath: "/works/10.1038/s42256-024-00832-8",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{DOI: "10.1038/s42256-024-00832-8"}, p.IDs)
				require.Equal(t, "Augmenting large language models with chemistry tools", p.Title)
				require.Len(t, p.Authors, 6)
				require.Equal(t, paper.Author{Name: "Andres M. Bran", GivenName: "Andres", FamilyName: "M. Bran"}, withoutAffiliations(p.Authors[0]))
				require.Equal(t, paper.Date{Year: 2024, Month: 5, Day: 8, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(238), p.CitationCount)
				require.Len(t, p.References, 58)
				require.Equal(t, "https://www.nature.com/articles/s42256-024-00832-8.pdf", p.PDFURL)
				require.True(t, strings.HasPrefix(p.Abstract, "Large language models (LLMs) have shown strong performance"), p.Abstract)
				require.NotContains(t, p.Abstract, "<")
				require.Equal(t, paper.Venue{Name: "Nature Machine Intelligence", Type: "journal", Volume: "6", Issue: p.Venue.Issue, Pages: "525-535",
					Publisher: "Springer Science and Business Media LLC", ISSN: p.Venue.ISSN}, p.Venue)
				require.True(t, p.OpenAccess)
				require.Equal(t, "https://creativecommons.org/licenses/by/4.0", p.License)
				require.Equal(t, "article", p.WorkType)
			},
		},
		{
			fixture: "works_doi_10.1063_1.4938384.json", status: 200,
			call: get("doi:10.1063/1.4938384"), wantPath: "/works/10.1063/1.4938384",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, []string{"Michael D. Skarlinski", "David J. Quesnel"}, names(p.Authors))
				require.Equal(t, "Skarlinski", p.Authors[0].FamilyName)
				require.Equal(t, paper.Date{Year: 2015, Month: 12, Day: 21, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(10), p.CitationCount)
				require.Len(t, p.References, 55)
				require.True(t, strings.HasPrefix(p.Abstract, "Metal-oxide layers are likely to be present"))
				require.Equal(t, "Journal of Applied Physics", p.Venue.Name)
			},
		},
		{
			fixture: "works_doi_10.1371_journal.pone.0033693.json", status: 200,
			call: get("10.1371/journal.pone.0033693"), wantPath: "/works/10.1371/journal.pone.0033693",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Len(t, p.Authors, 6)
				require.Equal(t, "Shankar Sadasivan", p.Authors[0].Name)
				require.Equal(t, paper.Date{Year: 2012, Month: 3, Day: 21, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(72), p.CitationCount)
				require.Len(t, p.References, 65)
				require.Empty(t, p.Abstract, "the recording has no abstract")
				require.Equal(t, "e33693", p.Venue.Pages)
			},
		},
		{
			fixture: "works_doi_arxiv_404_resource_not_found.txt", status: 404,
			call: get("10.48550/arXiv.2312.07559"), wantPath: "/works/10.48550/arxiv.2312.07559",
			wantErr: protocol.ErrNotFound,
		},
		{
			fixture: "works_doi_with_query_400_error.json", status: 400,
			call: get("10.1371/journal.pone.0033693"), wantPath: "/works/10.1371/journal.pone.0033693",
			wantErr: protocol.ErrBadRequest,
		},
		{
			fixture: "works_query_ecology_rows2.json", status: 200,
			call: search("ecology", 2), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 2)
				require.Empty(t, page.NextCursor, "no next-cursor in an answer without cursor")
				p := page.Papers[0]
				require.Equal(t, "10.1093/obo/9780199830060-0238", p.IDs.DOI)
				require.Equal(t, "Communicating Ecology", p.Title)
				require.Empty(t, p.Authors)
				require.Equal(t, "book", p.Venue.Type)
				require.True(t, strings.HasPrefix(p.Abstract, "Communication is perhaps the most important"))
				require.Len(t, page.Papers[1].Authors, 1)
			},
		},
		{
			fixture: "works_query_ecology_select_doi_title.json", status: 200,
			call: search("ecology", 20), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 20)
				require.Equal(t, "Urban Forest Ecology", page.Papers[19].Title)
				require.Nil(t, page.Papers[0].CitationCount)
			},
		},
		{
			fixture: "works_query_title_gibberish.json", status: 200,
			call: search("askldjrq3rjaw938h", 1), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Empty(t, page.Papers)
				require.Empty(t, page.NextCursor)
				require.Zero(t, page.TotalEstimate)
			},
		},
		{
			fixture: "works_query_title_paperqa_rows1.json", status: 200,
			call: search("PaperQA: Retrieval-Augmented Generative Agent for Scientific Research", 1), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, "10.1093/jamiaopen/ooae021", p.IDs.DOI)
				require.Len(t, p.Authors, 11)
				require.Equal(t, paper.Author{Name: "Hao Liu", GivenName: "Hao", FamilyName: "Liu", ORCID: "0000-0002-1975-1272"}, withoutAffiliations(p.Authors[0]))
				require.Equal(t, paper.Date{Year: 2024, Month: 1, Day: 4, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, ptr(4), p.CitationCount)
				require.True(t, strings.HasPrefix(p.Abstract, "Objective. To automate scientifi"), p.Abstract)
				require.Len(t, p.References, 17)
			},
		},
		{
			fixture: "works_query_title_perspective_explanations_molecular.json", status: 200,
			call: search("A Perspective on Explanations of Molecular Prediction Models", 1), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, "10.26434/chemrxiv-2022-qfv02", p.IDs.DOI)
				require.Equal(t, []string{"Geemi P. Wellawatte", "Heta A. Gandhi", "Aditi Seshadri", "Andrew D. White"}, names(p.Authors))
				require.Equal(t, ptr(1), p.CitationCount)
				require.True(t, p.Published.IsZero())
			},
		},
		{
			fixture: "works_query_title_select_4fields.json", status: 200,
			call: search("The Dilemma and Countermeasures of Music Education", 1), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, "10.1155/2022/8341966", p.IDs.DOI)
				require.Equal(t, []paper.Author{{Name: "Jiaye Han", GivenName: "Jiaye", FamilyName: "Han", ORCID: "0000-0003-3902-2613", Affiliations: []paper.Affiliation{
					{Name: "Pingdingshan Polytechnic College, PingDingShan, Henan 467001, China"},
					{Name: "National University of Life and Environmental Sciences of Ukraine, Kyiv 03041, Ukraine"},
				}}}, p.Authors)
				require.Equal(t, "Wireless Communications and Mobile Computing", p.Venue.Name)
			},
		},
		{
			fixture: "works_query_title_select_doi_title.json", status: 200,
			call: search("Augmenting large language models with chemistry tools", 1), wantPath: "/works",
			check: func(t *testing.T, page *source.Page) {
				require.Equal(t, paper.IDs{DOI: "10.1038/s42256-024-00832-8"}, page.Papers[0].IDs)
				require.Equal(t, "Augmenting large language models with chemistry tools", page.Papers[0].Title)
				require.Empty(t, page.NextCursor, "total-results is large, but the answer has no next-cursor")
			},
		},
	}
	covered := map[string]bool{
		// A BibTeX rendering (/works/{doi}/transform): this plugin asks for JSON only.
		"works_transform_bibtex_s42256-024-00832-8.bib": true,
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
			if strings.HasSuffix(tc.fixture, ".txt") {
				ct = "text/plain"
			}
			b := setup(t, tc.status, ct, plugintest.ReadFixture(t, dir, tc.fixture))
			page, err := tc.call(t.Context(), b.src)
			got := <-b.requests
			require.Equal(t, tc.wantPath, got.URL.Path)
			if tc.wantPath == "/works" {
				require.Equal(t, "*", got.URL.Query().Get("cursor"))
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

func withoutAffiliations(a paper.Author) paper.Author {
	a.Affiliations = nil
	return a
}

// refsWithDOI counts the references carrying a DOI of item i of a recorded list.
func refsWithDOI(t *testing.T, dir, fixture string, i int) int {
	t.Helper()
	var env struct {
		Message struct {
			Items []struct {
				Reference []map[string]any `json:"reference"`
			} `json:"items"`
		} `json:"message"`
	}
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, fixture), &env))
	n := 0
	for _, r := range env.Message.Items[i].Reference {
		if _, ok := r["DOI"]; ok {
			n++
		}
	}
	return n
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "crossref")
	b := setup(t, 400, "application/json", plugintest.ReadFixture(t, dir, "works_doi_with_query_400_error.json"))
	_, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{DOI: "10.1/x"}})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	require.Contains(t, err.Error(), "This route does not support field query parameters")

	b = setup(t, 404, "text/plain", plugintest.ReadFixture(t, dir, "works_doi_arxiv_404_resource_not_found.txt"))
	_, err = b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{DOI: "10.1/x"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	require.Contains(t, err.Error(), "Resource not found.")
}

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		want   *protocol.Error
	}{
		{401, protocol.ErrUnauthorized},
		{403, protocol.ErrUnauthorized},
		{404, protocol.ErrNotFound},
		{422, protocol.ErrBadRequest},
		{429, protocol.ErrRateLimited},
		{500, protocol.ErrUnavailable},
		{503, protocol.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.status, "text/plain", []byte("nope"))
			_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

const emptyList = `{"status":"ok","message-type":"work-list","message":{"total-results":0,"items":[],"items-per-page":0}}`

func TestRequests(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		call func(ctx context.Context, c *Crossref) error
		want map[string]string
	}{
		{"search with filters", func(ctx context.Context, c *Crossref) error {
			_, err := c.Search(ctx, &source.SearchRequest{Query: "graph", Sort: source.SortNewest, PageSize: 10, Filters: source.Filters{
				From: paper.Date{Year: 2020, Precision: paper.PrecisionYear}, To: paper.Date{Year: 2021, Month: 2, Precision: paper.PrecisionMonth},
				Authors: []string{"Ada Lovelace"}, Venue: "Nature", WorkTypes: []string{"article", "preprint"},
			}})
			return err
		}, map[string]string{
			"query": "graph", "sort": "published", "order": "desc", "rows": "10", "cursor": "*", "query.author": "Ada Lovelace",
			"query.container-title": "Nature", "filter": "from-pub-date:2020,until-pub-date:2021-02,type:journal-article,type:posted-content",
		}},
		{"most cited", func(ctx context.Context, c *Crossref) error {
			_, err := c.Search(ctx, &source.SearchRequest{Query: "graph", Sort: source.SortMostCited})
			return err
		}, map[string]string{"sort": "is-referenced-by-count", "order": "desc", "rows": "25"}},
		{"recent", func(ctx context.Context, c *Crossref) error {
			_, err := c.Recent(ctx, &source.RecentRequest{Topics: []string{"prime editing"}, Since: since})
			return err
		}, map[string]string{"query": "prime editing", "filter": "from-pub-date:2025-01-02", "sort": "published", "order": "desc"}},
		{"author by orcid", func(ctx context.Context, c *Crossref) error {
			_, err := c.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{ORCID: "https://orcid.org/0000-0003-3902-2613", Name: "Jiaye Han"}, Since: since})
			return err
		}, map[string]string{"filter": "orcid:0000-0003-3902-2613,from-pub-date:2025-01-02", "query.author": ""}},
		{"author by name", func(ctx context.Context, c *Crossref) error {
			_, err := c.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "Jiaye Han"}})
			return err
		}, map[string]string{"query.author": "Jiaye Han", "filter": ""}},
		{"mailto", func(ctx context.Context, c *Crossref) error {
			_, err := c.Search(ctx, &source.SearchRequest{Query: "x", Credentials: map[string]string{"mailto": "ada@example.org"}})
			return err
		}, map[string]string{"mailto": "ada@example.org"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, 200, "application/json", []byte(emptyList))
			require.NoError(t, tc.call(t.Context(), b.src))
			got := (<-b.requests).URL.Query()
			for k, v := range tc.want {
				require.Equal(t, v, got.Get(k), "query parameter %s", k)
			}
		})
	}
}

func TestCredentialsHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, 200, "application/json", []byte(emptyList))
	_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x", Credentials: map[string]string{"mailto": "ada@example.org", "api_key": "tok"}})
	require.NoError(t, err)
	r := <-b.requests
	require.Contains(t, r.UserAgent(), "lectern-crossref/"+version)
	require.Contains(t, r.UserAgent(), "mailto:ada@example.org")
	require.Equal(t, "Bearer tok", r.Header.Get("Crossref-Plus-API-Token"))
}

func TestPagination(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "crossref")
	var one map[string]any
	var env struct {
		Message map[string]any `json:"message"`
	}
	require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, "works_doi_10.1063_1.4938384.json"), &env))
	one = env.Message
	cursors := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cursors <- r.URL.Query().Get("cursor")
		// Crossref hands out a next-cursor on every page, the last included.
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "message": map[string]any{
			"total-results": 2, "next-cursor": "abc", "items": []any{one},
		}})
	}))
	t.Cleanup(srv.Close)
	c := configured(t, srv.URL, nil)
	page, err := c.Search(t.Context(), &source.SearchRequest{Query: "x", PageSize: 1})
	require.NoError(t, err)
	require.Equal(t, "*", <-cursors)
	require.Equal(t, "c:1:abc", page.NextCursor)
	page, err = c.Search(t.Context(), &source.SearchRequest{Query: "x", PageSize: 1, Cursor: page.NextCursor})
	require.NoError(t, err)
	require.Equal(t, "abc", <-cursors)
	require.Empty(t, page.NextCursor, "total-results reached")

	for _, bogus := range []string{"abc", "c:x:abc", "c:1:", "c:-1:abc"} {
		_, err := c.Search(t.Context(), &source.SearchRequest{Query: "x", Cursor: bogus})
		require.ErrorIs(t, err, protocol.ErrBadRequest, bogus)
	}
}

func TestNormalization(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	dates := []struct {
		name string
		in   dateParts
		want paper.Date
	}{
		{"day", dateParts{[][]*int{{n(2024), n(5), n(8)}}}, paper.Date{Year: 2024, Month: 5, Day: 8, Precision: paper.PrecisionDay}},
		{"month", dateParts{[][]*int{{n(1997), n(10)}}}, paper.Date{Year: 1997, Month: 10, Precision: paper.PrecisionMonth}},
		{"year", dateParts{[][]*int{{n(2016)}}}, paper.Date{Year: 2016, Precision: paper.PrecisionYear}},
		{"null", dateParts{[][]*int{{nil}}}, paper.Date{}},
		{"absent", dateParts{}, paper.Date{}},
		{"impossible", dateParts{[][]*int{{n(2024), n(2), n(30)}}}, paper.Date{}},
	}
	for _, tc := range dates {
		t.Run("date "+tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.in.date())
		})
	}
	texts := []struct{ name, in, want string }{
		{"jats", `<jats:title>Abstract</jats:title><jats:p>Large &amp; small <jats:italic>models</jats:italic>.</jats:p>`, "Large & small models."},
		{"sections", `<jats:sec><jats:title>Objective</jats:title><jats:p>To do.</jats:p></jats:sec><jats:sec><jats:title>Results</jats:title><jats:p>Done.</jats:p></jats:sec>`, "Objective. To do. Results. Done."},
		{"html", "<p>Plain\n   text</p>", "Plain text"},
		{"empty", "", ""},
	}
	for _, tc := range texts {
		t.Run("abstract "+tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, jatsText(tc.in))
		})
	}
	require.Equal(t, "10.1023/a:1007154515475", paper.NormalizeDOI("https://dx.doi.org/10.1023/A:1007154515475"))
	require.Equal(t, "", paper.NormalizeDOI("nope"))
	require.Equal(t, "0000-0003-3902-2613", bareORCID("https://orcid.org/0000-0003-3902-2613"))
	require.Equal(t, "2312.07559", paper.ArXivFromDOI("10.48550/arxiv.2312.07559"))
	require.Equal(t, "H2O in water", plain("H<sub>2</sub>O in water"))
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]any
		wantErr  bool
	}{
		{"empty", map[string]any{}, false},
		{"all", map[string]any{"base_url": "http://127.0.0.1:1", "rate_interval": "0s", "max_concurrency": float64(1), "max_attempts": float64(2),
			"backoff_base": "10ms", "max_backoff": "1s", "timeout": "2s"}, false},
		{"relative url", map[string]any{"base_url": "api.crossref.org"}, true},
		{"bad interval", map[string]any{"rate_interval": true}, true},
		{"zero concurrency", map[string]any{"max_concurrency": float64(0)}, true},
		{"unknown", map[string]any{"mailto": "x"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(slog.New(slog.DiscardHandler))
			_, err := c.Configure(t.Context(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Equal(t, defaultSettings(), c.set)
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

func TestRetries(t *testing.T) {
	t.Parallel()
	search := func(c *Crossref) error {
		_, err := c.Search(t.Context(), &source.SearchRequest{Query: "x"})
		return err
	}
	t.Run("429 with Retry-After then 503 then success", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(429, "1"), status(503, ""))
		c := configured(t, srv.URL, nil)
		start := time.Now()
		require.NoError(t, search(c))
		require.EqualValues(t, 3, n.Load())
		require.GreaterOrEqual(t, time.Since(start), time.Second)
	})
	t.Run("429 exhausted", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(429, "0"), status(429, "0"))
		c := configured(t, srv.URL, map[string]any{"max_attempts": float64(2)})
		require.ErrorIs(t, search(c), protocol.ErrRateLimited)
		require.EqualValues(t, 2, n.Load())
	})
	t.Run("long Retry-After returned to the caller", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, emptyList, status(429, "90"))
		c := configured(t, srv.URL, nil)
		var pe *protocol.Error
		require.ErrorAs(t, search(c), &pe)
		require.Equal(t, protocol.CodeRateLimited, pe.Code)
		require.Equal(t, 90*time.Second, pe.RetryAfter)
	})
	t.Run("5xx exhausted", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, emptyList, status(500, ""), status(502, ""))
		c := configured(t, srv.URL, map[string]any{"max_attempts": float64(2)})
		require.ErrorIs(t, search(c), protocol.ErrUnavailable)
		require.EqualValues(t, 2, n.Load())
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
		c := configured(t, srv.URL, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("waiting for a concurrency slot", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		arrived := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-release
			_, _ = w.Write([]byte(emptyList))
		}))
		t.Cleanup(func() { srv.Close() })
		c := configured(t, srv.URL, map[string]any{"max_concurrency": float64(1)})
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := c.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.NoError(t, err)
		})
		<-arrived
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Search(ctx, &source.SearchRequest{Query: "y"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
		close(release)
		wg.Wait()
	})
}

// fakeCrossref serves the recorded works in the shapes the plugin asks for:
// /works/{doi} (the recorded text 404 otherwise) and cursor-paged /works lists.
func fakeCrossref(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	var pool []map[string]any
	seen := map[string]bool{}
	add := func(w map[string]any) {
		doi, _ := w["DOI"].(string)
		titles, _ := w["title"].([]any)
		if doi != "" && len(titles) > 0 && !seen[strings.ToLower(doi)] {
			seen[strings.ToLower(doi)] = true
			pool = append(pool, w)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		var env struct {
			Status  string         `json:"status"`
			Message map[string]any `json:"message"`
		}
		if json.Unmarshal(plugintest.ReadFixture(t, dir, filepath.Base(f)), &env) != nil || env.Status != "ok" {
			continue
		}
		if items, ok := env.Message["items"].([]any); ok {
			for _, it := range items {
				add(it.(map[string]any))
			}
			continue
		}
		add(env.Message)
	}
	notFound := plugintest.ReadFixture(t, dir, "works_doi_arxiv_404_resource_not_found.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if doi, ok := strings.CutPrefix(r.URL.Path, "/works/"); ok {
			for _, it := range pool {
				if strings.EqualFold(it["DOI"].(string), doi) {
					_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "message-type": "work", "message": it})
					return
				}
			}
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(notFound)
			return
		}
		q := r.URL.Query()
		hits := pool
		if name := q.Get("query.author"); name != "" {
			hits = nil
			for _, it := range pool {
				as, _ := it["author"].([]any)
				for _, a := range as {
					m := a.(map[string]any)
					if fmt.Sprint(m["given"], " ", m["family"]) == name {
						hits = append(hits, it)
						break
					}
				}
			}
		}
		rows, _ := strconv.Atoi(q.Get("rows"))
		off := 0
		if c := q.Get("cursor"); c != "*" {
			off, _ = strconv.Atoi(strings.TrimPrefix(c, "off"))
		}
		off = min(off, len(hits))
		end := min(off+rows, len(hits))
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "message-type": "work-list", "message": map[string]any{
			"total-results": len(hits), "items-per-page": rows, "next-cursor": fmt.Sprintf("off%d", end), "items": hits[off:end],
		}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConformance(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "crossref")
	srv := fakeCrossref(t, dir)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindSource, Query: "language models", PageSize: 4,
		Settings:    map[string]any{"base_url": srv.URL, "rate_interval": "0s", "backoff_base": "1ms"},
		Credentials: map[string]string{"mailto": "conformance@example.org"},
	})
}
