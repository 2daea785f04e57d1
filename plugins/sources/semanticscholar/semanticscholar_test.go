package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// testBundle is a source configured against a fake upstream.
type testBundle struct {
	src *SemanticScholar
	up  *upstream
}

// setup returns the source pointed at the recorded-answer upstream, without rate
// spacing and with millisecond backoff.
func setup(t *testing.T) *testBundle {
	t.Helper()
	up, srv := newUpstream(t)
	return &testBundle{src: configured(t, srv.URL, nil), up: up}
}

func configured(t *testing.T, baseURL string, extra map[string]any) *SemanticScholar {
	t.Helper()
	s := New(slog.New(slog.DiscardHandler))
	settings := map[string]any{"base_url": baseURL, "rate_interval": "0s", "backoff": "1ms", "max_backoff": "5ms"}
	for k, v := range extra {
		settings[k] = v
	}
	_, err := s.Configure(t.Context(), &protocol.ConfigureRequest{Settings: settings})
	require.NoError(t, err)
	return s
}

// requireWellFormed checks every paper as the conformance kit does.
func requireWellFormed(t *testing.T, papers []paper.Paper) {
	t.Helper()
	for i := range papers {
		require.NoError(t, papers[i].Validate(), "paper %d", i)
		require.Equal(t, pluginName, papers[i].Source)
	}
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]any
		wantErr  bool
	}{
		{"empty", map[string]any{}, false},
		{"all", map[string]any{"base_url": "http://127.0.0.1:1/graph/v1", "rate_interval": "0s", "max_retries": float64(2),
			"backoff": "10ms", "max_backoff": "1s", "max_retry_after": float64(5), "timeout": "3s"}, false},
		{"seconds as number", map[string]any{"rate_interval": 1.05}, false},
		{"relative base url", map[string]any{"base_url": "/graph"}, true},
		{"ftp base url", map[string]any{"base_url": "ftp://example.org"}, true},
		{"bad duration", map[string]any{"backoff": "soon"}, true},
		{"negative interval", map[string]any{"rate_interval": "-1s"}, true},
		{"zero timeout", map[string]any{"timeout": "0s"}, true},
		{"fractional retries", map[string]any{"max_retries": 1.5}, true},
		{"too many retries", map[string]any{"max_retries": float64(11)}, true},
		{"credential as setting", map[string]any{"api_key": "secret"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := New(slog.New(slog.DiscardHandler))
			_, err := s.Configure(t.Context(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestSearchRecordedPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()

	first, err := b.src.Search(ctx, &source.SearchRequest{Query: "turing", PageSize: 100})
	require.NoError(t, err)
	require.Len(t, first.Papers, 100)
	requireWellFormed(t, first.Papers)
	require.Equal(t, "7cbc2a7843411a1768ab762930707af0a3c33a19", first.Papers[0].IDs.SemanticScholarID)
	require.Equal(t, "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B, A Large-Scale Generative Language Model", first.Papers[0].Title)
	require.Equal(t, "https://www.semanticscholar.org/paper/7cbc2a7843411a1768ab762930707af0a3c33a19", first.Papers[0].LandingURL)
	require.EqualValues(t, searchCap, first.TotalEstimate) // 70499 recorded, capped at what is reachable
	require.Equal(t, "100", first.NextCursor)

	second, err := b.src.Search(ctx, &source.SearchRequest{Query: "turing", PageSize: 100, Cursor: first.NextCursor})
	require.NoError(t, err)
	require.Len(t, second.Papers, 100)
	requireWellFormed(t, second.Papers)
	require.Equal(t, "ac7a3d2983b75bd4f44903892a5df295a0f859ff", second.Papers[0].IDs.SemanticScholarID)
	require.Equal(t, "How to Run Turing Machines on Encrypted Data", second.Papers[0].Title)
	require.Equal(t, "200", second.NextCursor)

	calls := b.up.Requests()
	require.Len(t, calls, 2)
	for i, want := range []string{"0", "100"} {
		q := calls[i].URL.Query()
		require.Equal(t, "/paper/search", calls[i].URL.Path)
		require.Equal(t, "turing", q.Get("query"))
		require.Equal(t, want, q.Get("offset"))
		require.Equal(t, "100", q.Get("limit"))
		require.Equal(t, listFields, q.Get("fields"))
	}
}

func TestSearchEmptyAndCap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()

	empty, err := b.src.Search(ctx, &source.SearchRequest{Query: "n0 r3sult s3arch t3rm"})
	require.NoError(t, err)
	require.Empty(t, empty.Papers)
	require.Empty(t, empty.NextCursor)
	require.Zero(t, empty.TotalEstimate)

	// The last reachable offset asks for just one result and ends the paging.
	last, err := b.src.Search(ctx, &source.SearchRequest{Query: "turing", PageSize: 25, Cursor: "999"})
	require.NoError(t, err)
	require.Empty(t, last.NextCursor)
	calls := b.up.Requests()
	require.Equal(t, "1", calls[len(calls)-1].URL.Query().Get("limit"))

	for _, cursor := range []string{"1000", "-5", "abc", "010", "lectern-conformance-bogus-cursor"} {
		_, err := b.src.Search(ctx, &source.SearchRequest{Query: "turing", Cursor: cursor})
		require.ErrorIs(t, err, protocol.ErrBadRequest, cursor)
	}
	_, err = b.src.Search(ctx, &source.SearchRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestSearchFiltersAndPaging(t *testing.T) {
	t.Parallel()
	b := setup(t)
	page, err := b.src.Search(t.Context(), &source.SearchRequest{
		Query: "turing",
		Filters: source.Filters{
			From:           paper.Date{Year: 2020, Month: 1, Day: 1, Precision: paper.PrecisionDay},
			To:             paper.Date{Year: 2021, Precision: paper.PrecisionYear},
			Categories:     []string{"computer science", "cs.LG"},
			Authors:        []string{"Alan Turing"},
			Venue:          "Mind",
			OpenAccessOnly: true,
			WorkTypes:      []string{"review", "JournalArticle"},
		},
		PageSize: 10,
		Cursor:   "20",
	})
	require.NoError(t, err)
	require.Len(t, page.Papers, 10)
	require.Equal(t, "30", page.NextCursor)

	q := b.up.Requests()[0].URL.Query()
	require.Equal(t, "turing Alan Turing", q.Get("query"))
	require.Equal(t, "2020-01-01:2021-12-31", q.Get("publicationDateOrYear"))
	require.Equal(t, "Mind", q.Get("venue"))
	require.Equal(t, "Computer Science", q.Get("fieldsOfStudy"))
	require.Equal(t, "Review,JournalArticle", q.Get("publicationTypes"))
	require.True(t, q.Has("openAccessPdf"))
	require.Equal(t, "20", q.Get("offset"))
	require.Equal(t, "10", q.Get("limit"))
}

func TestGetManyFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{DOI: "https://doi.org/10.1038/S42256-024-00832-8"}})
	require.NoError(t, err)
	p := got.Paper
	requireWellFormed(t, []paper.Paper{p})
	require.Equal(t, paper.IDs{
		DOI: "10.1038/s42256-024-00832-8", ArXivID: "2304.05376", SemanticScholarID: "354dcdebf3f8b5feeed5c62090e0bc1f0c28db06",
		PubMedID: "38799228", PMCID: "PMC11116106",
	}, p.IDs)
	require.Equal(t, "Augmenting large language models with chemistry tools", p.Title)
	require.Len(t, p.Authors, 6)
	require.Equal(t, paper.Author{Name: "Andrés M Bran", SourceAuthorID: "2216007369"}, p.Authors[0])
	require.Equal(t, "P. Schwaller", p.Authors[5].Name)
	require.Equal(t, paper.Date{Year: 2023, Month: 4, Day: 11, Precision: paper.PrecisionDay}, p.Published)
	require.Equal(t, paper.Venue{Name: "Nature Machine Intelligence", Type: "journal", Volume: "6", Pages: "525-535"}, p.Venue)
	require.NotNil(t, p.CitationCount)
	require.EqualValues(t, 500, *p.CitationCount)
	require.True(t, p.OpenAccess)
	require.Equal(t, "https://www.nature.com/articles/s42256-024-00832-8.pdf", p.PDFURL)
	require.Equal(t, "CCBY", p.License)
	require.Equal(t, "https://www.semanticscholar.org/paper/354dcdebf3f8b5feeed5c62090e0bc1f0c28db06", p.LandingURL)
	require.Equal(t, "article", p.WorkType)

	call := b.up.Requests()[0]
	require.Equal(t, "/paper/DOI:10.1038/s42256-024-00832-8", call.URL.Path)
	require.Equal(t, detailFields, call.URL.Query().Get("fields"))
}

func TestGetFullDetails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{DOI: "10.1093/MIND/LIX.236.433"}})
	require.NoError(t, err)
	p := got.Paper
	requireWellFormed(t, []paper.Paper{p})
	require.Equal(t, "2d5673caa9e6af3a7b82a43f19ee920992db07ad", p.IDs.SemanticScholarID)
	require.Equal(t, "10.1093/mind/lix.236.433", p.IDs.DOI) // recorded upper-case
	require.Equal(t, "Computing Machinery and Intelligence", p.Title)
	require.True(t, strings.HasPrefix(p.Abstract, "I propose to consider the question, “Can machines think?”"))
	require.Equal(t, paper.Date{Year: 1950, Month: 10, Day: 1, Precision: paper.PrecisionDay}, p.Published)
	require.Equal(t, paper.Venue{Name: "Mind", Type: "journal", Volume: "LIX", Pages: "433-460"}, p.Venue)
	require.EqualValues(t, 10059, *p.CitationCount)
	require.Equal(t, []paper.Author{{Name: "A. Turing", SourceAuthorID: "2262347"}}, p.Authors)
	require.Equal(t, []string{"Computer Science", "Sociology"}, p.Categories)
	require.Equal(t, "review", p.WorkType)
	require.False(t, p.OpenAccess)
	require.Empty(t, p.PDFURL)
	// 14 recorded references, 6 of them unresolved (no paperId, no external id).
	require.Len(t, p.References, 8)
	require.Equal(t, paper.IDs{DOI: "10.2307/3610576", SemanticScholarID: "348f436fd9a3965f5ff17db031a9f43426f89b8e"}, p.References[0])
	require.Equal(t, "18153422", p.References[1].PubMedID)
	require.Equal(t, "10.1007/s00605-006-0423-7", p.References[4].DOI)
}

func TestGetBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{PubMedID: "99999999", DOI: "10.1038/s42256-024-00832-8", OpenAlexID: "W1"}})
	require.NoError(t, err)
	require.Equal(t, "354dcdebf3f8b5feeed5c62090e0bc1f0c28db06", got.Paper.IDs.SemanticScholarID)

	call := b.up.Requests()[0]
	require.Equal(t, http.MethodPost, call.Method)
	require.Equal(t, "/paper/batch", call.URL.Path)
	require.Equal(t, detailFields, call.URL.Query().Get("fields"))

	_, err = b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{PubMedID: "99999999", ArXivID: "2101.99999"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
}

func TestBatchRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ids := []string{"c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce", "cb1ebd913c3724c599f6b276b14b5c6253da68f3", "0f40b1f08821e22e859c6050916cec3667778613"}
	got, err := b.src.api().paperBatch(t.Context(), "", ids)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, want := range []int{3, 4, 3} {
		require.Equal(t, ids[i], got[i].PaperID)
		require.Len(t, got[i].Authors, want)
	}
	require.Equal(t, s2Author{AuthorID: "81141608", Name: "Marianne Bertrand"}, got[0].Authors[0])
	require.Equal(t, "2259683", got[1].Authors[0].AuthorID) // E. Duflo on all three
	// Without titles (fields=authors) the records are not papers Lectern can keep.
	_, ok := toPaper(got[0])
	require.False(t, ok)
}

func TestRecordedErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name  string
		path  string
		query url.Values
		want  *protocol.Error
		msg   string
	}{
		{"paper 404", "/paper/0", url.Values{"fields": {"title"}}, protocol.ErrNotFound, "Paper with id 0 not found"},
		{"author 404", "/author/0", url.Values{"fields": {"name"}}, protocol.ErrNotFound, "Author with id 0 not found"},
		{"title match 404", "/paper/search/match", url.Values{"query": {"askldjrq3rjaw938h"}}, protocol.ErrNotFound, "Title match not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out json.RawMessage
			err := b.src.api().get(t.Context(), "", tc.path, tc.query, &out)
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), tc.msg)
		})
	}

	_, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{DOI: "10.0000/lectern-conformance-missing"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	_, err = b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{OpenAlexID: "W2741809807"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	_, err = b.src.Get(t.Context(), &source.GetRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestRecordedMatchesAndAuthor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var match s2PaperPage
	err := b.src.api().get(t.Context(), "", "/paper/search/match", url.Values{"query": {"Attention is All you Need"}}, &match)
	require.NoError(t, err)
	papers := toPapers(match.Data)
	require.Len(t, papers, 1)
	p := papers[0]
	requireWellFormed(t, papers)
	require.Equal(t, paper.IDs{ArXivID: "1706.03762", SemanticScholarID: "204e3073870fae3d05bcbc2f6a8e263d9b72e776"}, p.IDs)
	require.Len(t, p.Authors, 8)
	require.Equal(t, paper.Date{Year: 2017, Month: 6, Day: 12, Precision: paper.PrecisionDay}, p.Published)
	require.EqualValues(t, 136941, *p.CitationCount)
	require.Empty(t, p.PDFURL) // recorded openAccessPdf.url is ""
	require.Equal(t, paper.Venue{Name: "Neural Information Processing Systems", Type: "journal", Pages: "5998-6008"}, p.Venue)

	err = b.src.api().get(t.Context(), "", "/paper/search/match", url.Values{"query": {"mining association rules between"}}, &match)
	require.NoError(t, err)
	require.Equal(t, "6fe8c5bf8dddaadf10c765133d38dfef5714347f", match.Data[0].PaperID)
	require.Equal(t, "Mining association rules between sets of items in large databases", toPapers(match.Data)[0].Title)

	var title s2Paper
	err = b.src.api().get(t.Context(), "", "/paper/10.1093/mind/lix.236.433", url.Values{"fields": {"title"}}, &title)
	require.NoError(t, err)
	require.Equal(t, "2d5673caa9e6af3a7b82a43f19ee920992db07ad", title.PaperID)

	var author s2Author
	require.NoError(t, b.src.api().get(t.Context(), "", "/author/2262347", url.Values{"fields": {"name"}}, &author))
	require.Equal(t, s2Author{AuthorID: "2262347", Name: "A. Turing"}, author)
}

func TestAuthorPapers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	since := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

	// By name: the best /author/search match (2262347 of 59 recorded), then its papers.
	page, err := b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "A. Turing"}, Since: since, PageSize: 25})
	require.NoError(t, err)
	require.Equal(t, "2262347:25", page.NextCursor)
	require.NotEmpty(t, page.Papers)
	requireWellFormed(t, page.Papers)
	for i, p := range page.Papers {
		require.False(t, periodEnd(p.Published).Before(since), p.Title)
		if i > 0 {
			require.False(t, p.Published.Time().After(page.Papers[i-1].Published.Time()), "newest first")
		}
	}
	calls := b.up.Requests()
	require.Equal(t, "/author/search", calls[0].URL.Path)
	require.Equal(t, "A. Turing", calls[0].URL.Query().Get("query"))
	require.Equal(t, "/author/2262347/papers", calls[1].URL.Path)

	total := len(page.Papers)
	for cursor := page.NextCursor; cursor != ""; {
		next, err := b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "A. Turing"}, Since: since, PageSize: 25, Cursor: cursor})
		require.NoError(t, err)
		requireWellFormed(t, next.Papers)
		total += len(next.Papers)
		cursor = next.NextCursor
	}
	require.Less(t, total, 60) // 60 recorded papers, the older and undated ones dropped
	require.Len(t, b.up.Requests(), 4)

	// By id: the recorded first page of /author/1723755/papers (100 of 9 pages).
	byID, err := b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{SourceAuthorID: "1723755"}, PageSize: 100})
	require.NoError(t, err)
	require.Len(t, byID.Papers, 100)
	require.Equal(t, "01063e45d9fc9635d29d8d78aa24ed8de351f36a", byID.Papers[0].IDs.SemanticScholarID)
	require.Equal(t, "1723755:100", byID.NextCursor)

	none, err := b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "Nobody Atall"}})
	require.NoError(t, err)
	require.Empty(t, none.Papers)
	require.Empty(t, none.NextCursor)

	_, err = b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{SourceAuthorID: "0"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	for _, req := range []*source.AuthorPapersRequest{
		{},
		{Author: source.AuthorRef{ORCID: "0000-0002-1825-0097"}},
		{Author: source.AuthorRef{SourceAuthorID: "../paper/x"}},
		{Author: source.AuthorRef{Name: "A. Turing"}, Cursor: "25"},
		{Author: source.AuthorRef{Name: "A. Turing"}, Cursor: "x:25"},
	} {
		_, err := b.src.AuthorPapers(ctx, req)
		require.ErrorIs(t, err, protocol.ErrBadRequest, "%+v", req)
	}
}

func TestCitationsAndReferences(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	ids := paper.IDs{SemanticScholarID: "2d5673caa9e6af3a7b82a43f19ee920992db07ad"}

	refs, err := b.src.References(ctx, &source.CitationsRequest{IDs: paper.IDs{DOI: "10.2139/ssrn.2250500"}, PageSize: 50})
	require.NoError(t, err)
	requireWellFormed(t, refs.Papers)
	require.Len(t, refs.Papers, 40) // 50 recorded edges, 10 without a paperId
	require.Equal(t, "e945ca4fdcf45b1a118f1462db7afa12629a131f", refs.Papers[0].IDs.SemanticScholarID)
	require.Equal(t, "Group lending or individual lending? Evidence from a randomised field experiment in Mongolia", refs.Papers[0].Title)
	require.Equal(t, "50", refs.NextCursor)
	require.Equal(t, "/paper/DOI:10.2139/ssrn.2250500/references", b.up.Requests()[0].URL.Path)

	cites, err := b.src.Citations(ctx, &source.CitationsRequest{IDs: ids, PageSize: 100, Cursor: "900"})
	require.NoError(t, err)
	requireWellFormed(t, cites.Papers)
	require.Len(t, cites.Papers, 100)
	require.Empty(t, cites.NextCursor) // the 1000 recorded citations end here
	first, err := b.src.Citations(ctx, &source.CitationsRequest{IDs: ids, PageSize: 10})
	require.NoError(t, err)
	require.Equal(t, "619922f86647f431ab4e105683f1780605dd745d", first.Papers[0].IDs.SemanticScholarID)
	require.Equal(t, "10.1109/jas.2024.124407", first.Papers[0].IDs.DOI)
	require.Equal(t, "10", first.NextCursor)

	_, err = b.src.Citations(ctx, &source.CitationsRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	_, err = b.src.References(ctx, &source.CitationsRequest{IDs: paper.IDs{OpenAlexID: "W1"}})
	require.ErrorIs(t, err, protocol.ErrNotFound)
}

func TestRecent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	since := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	page, err := b.src.Recent(t.Context(), &source.RecentRequest{Topics: []string{"turing"}, Categories: []string{"Computer Science", "cs.AI"}, Since: since, PageSize: 20})
	require.NoError(t, err)
	require.Equal(t, "20", page.NextCursor)
	q := b.up.Requests()[0].URL.Query()
	require.Equal(t, "turing", q.Get("query"))
	require.Equal(t, "2024-05-01:", q.Get("publicationDateOrYear"))
	require.Equal(t, "Computer Science", q.Get("fieldsOfStudy"))

	_, err = b.src.Recent(t.Context(), &source.RecentRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

// scripted serves the given statuses in turn, then 200 with an empty search page.
func scripted(t *testing.T, steps ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return plugintest.Scripted(t, plugintest.Reply(http.StatusOK, "", "application/json", `{"total": 0, "offset": 0, "data": []}`), steps...)
}

func status(code int, retryAfter string) func(w http.ResponseWriter) {
	return plugintest.Reply(code, retryAfter, "application/json", `{"message": "recorded failure"}`)
}

func TestRetriesAndErrorMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		steps     []func(http.ResponseWriter)
		extra     map[string]any
		want      *protocol.Error
		wantCalls int32
		retryAt   time.Duration
	}{
		{"429 then ok", []func(http.ResponseWriter){status(429, "0"), status(429, "")}, nil, nil, 3, 0},
		{"5xx then ok", []func(http.ResponseWriter){status(500, ""), status(502, ""), status(503, "0")}, nil, nil, 4, 0},
		{"429 exhausted", []func(http.ResponseWriter){status(429, "0"), status(429, "0"), status(429, "0")}, map[string]any{"max_retries": float64(2)}, protocol.ErrRateLimited, 3, 0},
		{"429 retry-after beyond bound", []func(http.ResponseWriter){status(429, "1")}, map[string]any{"max_retry_after": "10ms"}, protocol.ErrRateLimited, 1, time.Second},
		{"429 long retry-after", []func(http.ResponseWriter){status(429, "120")}, nil, protocol.ErrRateLimited, 1, 2 * time.Minute},
		{"5xx exhausted", []func(http.ResponseWriter){status(503, ""), status(503, ""), status(503, "")}, map[string]any{"max_retries": float64(2)}, protocol.ErrUnavailable, 3, 0},
		{"400", []func(http.ResponseWriter){status(400, "")}, nil, protocol.ErrBadRequest, 1, 0},
		{"401", []func(http.ResponseWriter){status(401, "")}, nil, protocol.ErrUnauthorized, 1, 0},
		{"403", []func(http.ResponseWriter){status(403, "")}, nil, protocol.ErrUnauthorized, 1, 0},
		{"404", []func(http.ResponseWriter){status(404, "")}, nil, protocol.ErrNotFound, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, calls := scripted(t, tc.steps...)
			s := configured(t, srv.URL, tc.extra)
			_, err := s.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.Equal(t, tc.wantCalls, calls.Load())
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			var perr *protocol.Error
			require.True(t, errors.As(err, &perr))
			require.Equal(t, tc.retryAt, perr.RetryAfter)
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	srv, calls := scripted(t, status(429, "1"))
	s := configured(t, srv.URL, nil)
	start := time.Now()
	_, err := s.Search(t.Context(), &source.SearchRequest{Query: "x"})
	require.NoError(t, err)
	require.EqualValues(t, 2, calls.Load())
	require.GreaterOrEqual(t, time.Since(start), time.Second)
}

func TestRateLimitAcrossConcurrentCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		writeJSON(w, http.StatusOK, []byte(`{"total": 0, "offset": 0, "data": []}`))
	}))
	t.Cleanup(srv.Close)
	s := configured(t, srv.URL, map[string]any{"rate_interval": "40ms"})
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			_, err := s.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Len(t, at, 5)
	first, last := at[0], at[0]
	for _, ts := range at {
		first, last = minTime(first, ts), maxTime(last, ts)
	}
	require.GreaterOrEqual(t, last.Sub(first), 120*time.Millisecond) // 4 gaps of 40ms, minus connection slack
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	busy, _ := scripted(t, status(503, "30"), status(503, "30"))
	slow := configured(t, hang.URL, map[string]any{"rate_interval": "10s"})

	tests := []struct {
		name string
		src  *SemanticScholar
	}{
		{"in flight", configured(t, hang.URL, nil)},
		{"in backoff", configured(t, busy.URL, nil)},
		{"waiting for the rate limiter", slow},
	}
	// Use up the slow source's first slot so the next call must wait 10s.
	warm, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	_, _ = slow.Search(warm, &source.SearchRequest{Query: "x"})
	cancel()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := tc.src.Search(ctx, &source.SearchRequest{Query: "x"})
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), 2*time.Second)
		})
	}
}

func TestAPIKeyHeader(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("x-api-key") + "|" + r.URL.RawQuery)
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, []byte(`{"total": 0, "offset": 0, "data": []}`))
	}))
	t.Cleanup(srv.Close)
	s := configured(t, srv.URL, nil)
	_, err := s.Search(t.Context(), &source.SearchRequest{Query: "x", Credentials: map[string]string{"api_key": "s3cret"}})
	require.NoError(t, err)
	key, query, _ := strings.Cut(got.Load().(string), "|")
	require.Equal(t, "s3cret", key)
	require.NotContains(t, query, "s3cret")

	_, err = s.Search(t.Context(), &source.SearchRequest{Query: "x"})
	require.NoError(t, err)
	key, _, _ = strings.Cut(got.Load().(string), "|")
	require.Empty(t, key)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	_, srv := newUpstream(t)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindSource, Query: "turing",
		Settings: map[string]any{"base_url": srv.URL, "rate_interval": "0s", "backoff": "1ms"},
	})
}
