package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
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

// fastSettings point both endpoints at the server root and turn pacing and
// backoff down for tests.
func fastSettings(root string) map[string]any {
	return plugintest.FastSettings(root+"/api/query", map[string]any{"oai_base_url": root + "/oai2"})
}

type testBundle struct {
	src      *Arxiv
	requests chan *url.URL
}

// setup starts a server answering every query-API request with status and body,
// and an arXiv source pointed at it. OAI-PMH requests get oaiBody when given, else
// HTTP 500.
func setup(t *testing.T, status int, body []byte, oaiBody ...[]byte) *testBundle {
	t.Helper()
	reqs := make(chan *url.URL, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case reqs <- r.URL:
		default:
		}
		if r.URL.Path == "/oai2" {
			if len(oaiBody) == 0 {
				http.Error(w, "no OAI-PMH answer in this test", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/xml")
			_, _ = w.Write(oaiBody[0])
			return
		}
		w.Header().Set("Content-Type", "application/atom+xml")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	src := New(slog.New(slog.DiscardHandler))
	_, err := src.Configure(t.Context(), &protocol.ConfigureRequest{Settings: fastSettings(srv.URL)})
	require.NoError(t, err)
	return &testBundle{src: src, requests: reqs}
}

func requireWellFormed(t *testing.T, papers []paper.Paper) {
	t.Helper()
	for i := range papers {
		p := &papers[i]
		require.NoError(t, p.Validate(), "paper %d", i)
		require.Equal(t, "arxiv", p.Source)
		require.NotEmpty(t, p.IDs.ArXivID)
		require.Positive(t, p.IDs.ArXivVersion)
		require.NotEmpty(t, p.Abstract)
		require.NotEmpty(t, p.Authors)
		require.Equal(t, paper.PrecisionDay, p.Published.Precision)
		require.True(t, strings.HasPrefix(p.PDFURL, "https://arxiv.org/pdf/"), p.PDFURL)
		require.NotContains(t, p.Abstract, "\n")
	}
}

// TestFixtures replays every recorded query-API response of arXiv and checks the
// papers or typed errors they become. A new query_* or search_* recording without a
// case fails the test.
func TestFixtures(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")

	type call func(ctx context.Context, a *Arxiv) (*source.Page, error)
	get := func(ids paper.IDs) call {
		return func(ctx context.Context, a *Arxiv) (*source.Page, error) {
			res, err := a.Get(ctx, &source.GetRequest{IDs: ids})
			if err != nil {
				return nil, err
			}
			return &source.Page{Papers: []paper.Paper{res.Paper}}, nil
		}
	}
	search := func(q, cursor string, size int) call {
		return func(ctx context.Context, a *Arxiv) (*source.Page, error) {
			return a.Search(ctx, &source.SearchRequest{Query: q, Cursor: cursor, PageSize: size})
		}
	}
	tests := []struct {
		fixture   string
		status    int
		call      call
		wantQuery map[string]string
		// oaiFixture answers the OAI-PMH GetRecord that Get asks when the query
		// API finds nothing.
		oaiFixture string
		wantErr    *protocol.Error
		check      func(t *testing.T, page *source.Page)
	}{
		{
			fixture: "query_id_2104.12255v1_versioned.xml", status: 200,
			call:      get(paper.IDs{ArXivID: "2104.12255", ArXivVersion: 1}),
			wantQuery: map[string]string{"id_list": "2104.12255v1"},
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "2104.12255", ArXivVersion: 1}, p.IDs)
				require.Equal(t, "0", p.Title)
				require.Equal(t, []paper.Author{{Name: "Quan Thoi Minh Nguyen"}}, p.Authors)
				require.Equal(t, paper.Date{Year: 2021, Month: 4, Day: 20, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, "https://arxiv.org/abs/2104.12255v1", p.LandingURL)
				require.Equal(t, "https://arxiv.org/pdf/2104.12255v1", p.PDFURL)
				require.Equal(t, []string{"cs.CR"}, p.Categories)
				require.True(t, strings.HasPrefix(p.Abstract, "What is the funniest number in cryptography? 0."))
				require.Equal(t, time.Date(2021, 4, 20, 16, 7, 14, 0, time.UTC), p.UpdatedAt)
			},
		},
		{
			fixture: "query_id_1707.08567_many_authors.xml", status: 200,
			call:      get(paper.IDs{ArXivID: "https://arxiv.org/abs/1707.08567"}),
			wantQuery: map[string]string{"id_list": "1707.08567"},
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "1707.08567", ArXivVersion: 1}, p.IDs)
				require.Len(t, p.Authors, 34)
				require.Equal(t, "Kees A. Schouhamer Immink", p.Authors[0].Name)
				require.Equal(t, paper.Date{Year: 2017, Month: 7, Day: 27, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, []string{"cs.IT"}, p.Categories)
				require.Equal(t, "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications", p.Title)
			},
		},
		{
			fixture: "query_id_astro-ph_0601001_oldstyle_id.xml", status: 200,
			call:      get(paper.IDs{ArXivID: "arXiv:astro-ph/0601001"}),
			wantQuery: map[string]string{"id_list": "astro-ph/0601001"},
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "astro-ph/0601001", ArXivVersion: 1}, p.IDs)
				require.Len(t, p.Authors, 4)
				require.Equal(t, paper.Author{Name: "Andrew Gould", Affiliations: []paper.Affiliation{{Name: "Ohio State"}}}, p.Authors[0])
				require.Equal(t, "Warsaw University Observatory", p.Authors[3].Affiliations[0].Name)
				require.Equal(t, paper.Venue{Name: "ActaAstron.56:1-50,2006", Type: "journal"}, p.Venue)
				require.Equal(t, paper.Date{Year: 2006, Month: 1, Day: 2, Precision: paper.PrecisionDay}, p.Published)
				require.True(t, strings.HasPrefix(p.Abstract, "We derive the frequencies of hot Jupiters"), p.Abstract[:40])
				require.Contains(t, p.Abstract, "Gould & Morgan (2003)")
				require.Equal(t, "https://arxiv.org/pdf/astro-ph/0601001v1", p.PDFURL)
			},
		},
		{
			fixture: "query_empty_result_id_0000.0000.xml", status: 200,
			call:       get(paper.IDs{ArXivID: "0000.0000"}),
			wantQuery:  map[string]string{"id_list": "0000.0000"},
			oaiFixture: "oai_error_idDoesNotExist.xml",
			wantErr:    protocol.ErrNotFound,
		},
		{
			fixture: "query_error_400_incorrect_id_abc.xml", status: 400,
			call:      get(paper.IDs{ArXivID: "abc"}),
			wantQuery: map[string]string{"id_list": "abc"},
			wantErr:   protocol.ErrBadRequest,
		},
		{
			fixture: "search_all_testing_start0_max10.xml", status: 200,
			call: search("testing", "", 10),
			wantQuery: map[string]string{
				"search_query": "all:testing", "start": "0", "max_results": "10", "sortBy": "relevance", "sortOrder": "descending",
			},
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 10)
				require.EqualValues(t, 214881, page.TotalEstimate)
				require.Equal(t, "10", page.NextCursor)
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "2202.12139", ArXivVersion: 1, DOI: "10.1109/icstw55395.2022.00035"}, p.IDs)
				require.Len(t, p.Authors, 3)
				require.Equal(t, paper.Date{Year: 2022, Month: 2, Day: 24, Precision: paper.PrecisionDay}, p.Published)
				require.Equal(t, "journal", p.Venue.Type)
				require.Equal(t, paper.IDs{ArXivID: "2005.14124", ArXivVersion: 2, DOI: "10.1145/3395363.3397376"}, page.Papers[2].IDs)
				require.Equal(t, paper.IDs{ArXivID: "1202.4527", ArXivVersion: 1}, page.Papers[5].IDs)
				require.Equal(t, paper.IDs{ArXivID: "2503.05378", ArXivVersion: 2}, page.Papers[6].IDs)
				require.Equal(t, paper.Venue{Name: "arXiv", Type: "preprint", Publisher: "arXiv"}, page.Papers[6].Venue)
			},
		},
		{
			fixture: "search_all_testing_start0_max15.xml", status: 200,
			call:      search("testing", "", 15),
			wantQuery: map[string]string{"search_query": "all:testing", "start": "0", "max_results": "15"},
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 15)
				require.Equal(t, "15", page.NextCursor)
			},
		},
		{
			fixture: "search_all_testing_start10_max10.xml", status: 200,
			call:      search("testing", "10", 10),
			wantQuery: map[string]string{"search_query": "all:testing", "start": "10", "max_results": "10"},
			check: func(t *testing.T, page *source.Page) {
				require.Len(t, page.Papers, 10)
				require.Equal(t, "20", page.NextCursor)
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "2403.16981", ArXivVersion: 2}, p.IDs)
				require.Equal(t, []string{"math.ST", "cs.IT", "stat.ML"}, p.Categories)
				require.Equal(t, []string{"Ankit Pensia", "Varun Jog", "Po-Ling Loh"}, names(p.Authors))
				require.Equal(t, paper.Date{Year: 2024, Month: 3, Day: 25, Precision: paper.PrecisionDay}, p.Published)
			},
		},
	}

	// Every recording of the query API must have a case. The OAI-PMH recordings
	// (oai_*) have theirs in TestOAIFixtures.
	files, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	require.NoError(t, err)
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.fixture] = true
	}
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "oai_") {
			continue
		}
		require.True(t, covered[name], "fixture %s has no test case", name)
	}

	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			var oai [][]byte
			if tc.oaiFixture != "" {
				oai = append(oai, plugintest.ReadFixture(t, dir, tc.oaiFixture))
			}
			b := setup(t, tc.status, plugintest.ReadFixture(t, dir, tc.fixture), oai...)
			page, err := tc.call(t.Context(), b.src)
			got := <-b.requests
			for k, v := range tc.wantQuery {
				require.Equal(t, v, got.Query().Get(k), "query parameter %s", k)
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, page.Papers)
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

func TestErrorFeedOnSearchIsBadRequest(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	// arXiv has answered its error feed with HTTP 200 too; the feed decides.
	b := setup(t, 200, plugintest.ReadFixture(t, dir, "query_error_400_incorrect_id_abc.xml"))
	_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x"})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	require.Contains(t, err.Error(), "incorrect id format for abc")
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
		{429, protocol.ErrRateLimited},
		{500, protocol.ErrUnavailable},
		{503, protocol.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.status, []byte("nope"))
			_, err := b.src.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestQueryBuilding(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		query   string
		filters source.Filters
		want    string
	}{
		{"one word", "testing", source.Filters{}, "all:testing"},
		{"words are all required", "graph neural networks", source.Filters{}, "all:graph AND all:neural AND all:networks"},
		{"field syntax passes", "ti:transformer AND cat:cs.CL", source.Filters{}, "(ti:transformer AND cat:cs.CL)"},
		{"categories", "x", source.Filters{Categories: []string{"cs.LG", "stat.ML"}}, "all:x AND (cat:cs.LG OR cat:stat.ML)"},
		{"author and venue", "x", source.Filters{Authors: []string{"Andrew Gould"}, Venue: "Acta Astron"}, `all:x AND au:"Andrew Gould" AND jr:"Acta Astron"`},
		{"year range", "x", source.Filters{From: paper.Date{Year: 2020, Precision: paper.PrecisionYear}, To: paper.Date{Year: 2021, Month: 2, Precision: paper.PrecisionMonth}},
			"all:x AND submittedDate:[202001010000 TO 202102282359]"},
		{"open from", "x", source.Filters{To: paper.Date{Year: 2020, Month: 1, Day: 5, Precision: paper.PrecisionDay}},
			"all:x AND submittedDate:[199101010000 TO 202001052359]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := append([]string{freeText(tc.query)}, filterClauses(&tc.filters, now)...)
			require.Equal(t, tc.want, strings.Join(got, " AND "))
		})
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
		{"all", map[string]any{"base_url": "http://127.0.0.1:1/api/query", "rate_interval": "0s", "max_attempts": float64(2),
			"backoff_base": "10ms", "max_backoff": "1s", "timeout": "2s"}, false},
		{"interval in seconds", map[string]any{"rate_interval": float64(3)}, false},
		{"relative url", map[string]any{"base_url": "/api/query"}, true},
		{"bad interval", map[string]any{"rate_interval": "soon"}, true},
		{"negative interval", map[string]any{"rate_interval": "-1s"}, true},
		{"zero attempts", map[string]any{"max_attempts": float64(0)}, true},
		{"zero timeout", map[string]any{"timeout": "0s"}, true},
		{"unknown", map[string]any{"api_key": "x"}, true},
		{"oai endpoint and api", map[string]any{"oai_base_url": "http://127.0.0.1:1/oai2", "recent_api": "query"}, false},
		{"relative oai url", map[string]any{"oai_base_url": "oai2"}, true},
		{"unknown recent api", map[string]any{"recent_api": "atom"}, true},
		{"recent api not a string", map[string]any{"recent_api": float64(1)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := New(slog.New(slog.DiscardHandler))
			_, err := a.Configure(t.Context(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Equal(t, defaultSettings(), a.set)
				return
			}
			require.NoError(t, err)
		})
	}
}

// flaky answers the scripted statuses in turn, then the fixture.
func flaky(t *testing.T, body []byte, script ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return plugintest.Scripted(t, plugintest.Reply(http.StatusOK, "", "", string(body)), script...)
}

func status(code int, retryAfter string) func(w http.ResponseWriter) {
	return plugintest.Reply(code, retryAfter, "", "")
}

func configured(t *testing.T, baseURL string, extra map[string]any) *Arxiv {
	t.Helper()
	a := New(slog.New(slog.DiscardHandler))
	s := fastSettings(baseURL)
	for k, v := range extra {
		s[k] = v
	}
	_, err := a.Configure(t.Context(), &protocol.ConfigureRequest{Settings: s})
	require.NoError(t, err)
	return a
}

func TestRetries(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	body := plugintest.ReadFixture(t, dir, "query_id_2104.12255v1_versioned.xml")
	get := func(a *Arxiv) error {
		_, err := a.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{ArXivID: "2104.12255v1"}})
		return err
	}

	t.Run("429 with Retry-After then 503 then success", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(429, "1"), status(503, ""))
		a := configured(t, srv.URL, nil)
		start := time.Now()
		require.NoError(t, get(a))
		require.EqualValues(t, 3, n.Load())
		require.GreaterOrEqual(t, time.Since(start), time.Second, "Retry-After was not honoured")
	})
	t.Run("429 exhausted is RateLimited with RetryAfter", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(429, "0"), status(429, "0"), status(429, "0"))
		a := configured(t, srv.URL, map[string]any{"max_attempts": float64(3)})
		err := get(a)
		require.ErrorIs(t, err, protocol.ErrRateLimited)
		require.EqualValues(t, 3, n.Load())
	})
	t.Run("Retry-After beyond max_backoff returns at once", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(429, "120"))
		a := configured(t, srv.URL, nil)
		start := time.Now()
		err := get(a)
		require.ErrorIs(t, err, protocol.ErrRateLimited)
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 120*time.Second, pe.RetryAfter)
		require.EqualValues(t, 1, n.Load())
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("5xx exhausted is Unavailable", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(502, ""), status(500, ""))
		a := configured(t, srv.URL, map[string]any{"max_attempts": float64(2)})
		require.ErrorIs(t, get(a), protocol.ErrUnavailable)
		require.EqualValues(t, 2, n.Load())
	})
	t.Run("network failure is Unavailable", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		a := configured(t, srv.URL, map[string]any{"max_attempts": float64(2)})
		require.ErrorIs(t, get(a), protocol.ErrUnavailable)
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	t.Run("during a slow request", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(func() { close(release); srv.Close() })
		a := configured(t, srv.URL, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := a.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("while waiting for the rate limit", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, []byte(`<feed xmlns="http://www.w3.org/2005/Atom"/>`))
		a := configured(t, srv.URL, map[string]any{"rate_interval": "1h"})
		_, err := a.Search(t.Context(), &source.SearchRequest{Query: "x"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		_, err = a.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("during a backoff", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, nil, status(503, "30"))
		a := configured(t, srv.URL, map[string]any{"max_backoff": "1m"})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := a.Search(ctx, &source.SearchRequest{Query: "x"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
	})
}

func TestRateLimitAcrossConcurrentCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var starts []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		_, _ = w.Write([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"/>`))
	}))
	t.Cleanup(srv.Close)
	a := configured(t, srv.URL, map[string]any{"rate_interval": "40ms"})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := a.Search(t.Context(), &source.SearchRequest{Query: "x"})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Len(t, starts, 4)
	first, last := starts[0], starts[0]
	for _, s := range starts {
		if s.Before(first) {
			first = s
		}
		if s.After(last) {
			last = s
		}
	}
	require.GreaterOrEqual(t, last.Sub(first), 100*time.Millisecond) // 3 intervals of 40ms, less scheduling slack
}

func TestUserAgentCarriesMailto(t *testing.T) {
	t.Parallel()
	uas := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uas <- r.UserAgent()
		_, _ = w.Write([]byte(`<feed xmlns="http://www.w3.org/2005/Atom"/>`))
	}))
	t.Cleanup(srv.Close)
	a := configured(t, srv.URL, nil)
	_, err := a.Search(t.Context(), &source.SearchRequest{Query: "x", Credentials: map[string]string{"mailto": "ada@example.org"}})
	require.NoError(t, err)
	ua := <-uas
	require.Contains(t, ua, "lectern-arxiv/"+version)
	require.Contains(t, ua, "mailto:ada@example.org")
}

// fakeArxiv serves the recorded entries in the shapes the plugin asks for: id_list
// look-ups, and searches paged by start and max_results over every recorded entry.
func fakeArxiv(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	entryRE := regexp.MustCompile(`(?s)<entry>.*?</entry>`)
	idRE := regexp.MustCompile(`<id>(.*?)</id>`)
	type entry struct{ id, xml string }
	var pool []entry
	seen := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	require.NoError(t, err)
	for _, f := range files {
		for _, e := range entryRE.FindAllString(string(plugintest.ReadFixture(t, dir, filepath.Base(f))), -1) {
			id := strings.TrimPrefix(idRE.FindStringSubmatch(e)[1], "http://arxiv.org/abs/")
			if strings.Contains(e, errorsID) || seen[id] {
				continue
			}
			seen[id] = true
			pool = append(pool, entry{id, e})
		}
	}
	errFeed := plugintest.ReadFixture(t, dir, "query_error_400_incorrect_id_abc.xml")
	feed := func(w http.ResponseWriter, entries []entry, total, start int) {
		w.Header().Set("Content-Type", "application/atom+xml")
		fmt.Fprintf(w, `<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">
<opensearch:itemsPerPage>%d</opensearch:itemsPerPage><opensearch:totalResults>%d</opensearch:totalResults><opensearch:startIndex>%d</opensearch:startIndex>
`, len(entries), total, start)
		for _, e := range entries {
			fmt.Fprintln(w, e.xml)
		}
		fmt.Fprintln(w, "</feed>")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if ids := q.Get("id_list"); ids != "" {
			var out []entry
			for _, want := range strings.Split(ids, ",") {
				id, _, _ := paper.ParseArXivID(want)
				if id == "" {
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write(errFeed)
					return
				}
				for _, e := range pool {
					if e.id == want || strings.HasPrefix(e.id, id+"v") {
						out = append(out, e)
					}
				}
			}
			feed(w, out, len(out), 0)
			return
		}
		sq := q.Get("search_query")
		var hits []entry
		for _, e := range pool {
			if m := regexp.MustCompile(`au:"?([^"]+)"?`).FindStringSubmatch(sq); m != nil && !strings.Contains(e.xml, "<name>"+m[1]+"</name>") {
				continue
			}
			hits = append(hits, e)
		}
		start, _ := strconv.Atoi(q.Get("start"))
		size, _ := strconv.Atoi(q.Get("max_results"))
		start = min(start, len(hits))
		feed(w, hits[start:min(start+size, len(hits))], len(hits), start)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConformance(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	srv := fakeArxiv(t, dir)
	bin := plugintest.Build(t, ".")
	for _, api := range []string{recentOAI, recentQuery} {
		t.Run("recent_api="+api, func(t *testing.T) {
			t.Parallel()
			oai, oaiRequests := fakeOAI(t, dir)
			plugintest.Run(t, plugintest.Options{
				Path: bin, Kind: protocol.KindSource, Query: "testing", PageSize: 7,
				Settings: map[string]any{
					"base_url": srv.URL + "/api/query", "oai_base_url": oai.URL + "/oai2", "recent_api": api,
					"rate_interval": "0s", "backoff_base": "1ms",
				},
			})
			if api == recentOAI {
				require.Positive(t, oaiRequests.Load(), "Recent did not harvest through OAI-PMH")
			} else {
				require.Zero(t, oaiRequests.Load(), "Recent harvested through OAI-PMH with recent_api=query")
			}
		})
	}
}
