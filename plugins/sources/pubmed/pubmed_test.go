package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// testBundle is a source configured against the recorded-answer upstream.
type testBundle struct {
	src *PubMed
	up  *upstream
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	up, srv := newUpstream(t)
	return &testBundle{src: configured(t, srv.URL, nil), up: up}
}

// configured returns a source without rate spacing and with millisecond backoff.
func configured(t *testing.T, baseURL string, extra map[string]any) *PubMed {
	t.Helper()
	s := New(slog.New(slog.DiscardHandler))
	settings := map[string]any{"base_url": baseURL, "rate_interval": "0s", "rate_interval_with_key": "0s", "backoff": "1ms", "max_backoff": "5ms"}
	for k, v := range extra {
		settings[k] = v
	}
	_, err := s.Configure(t.Context(), &protocol.ConfigureRequest{Settings: settings})
	require.NoError(t, err)
	return s
}

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
		{"all", map[string]any{"base_url": "https://example.org/eutils", "rate_interval": "0.34s", "rate_interval_with_key": 0.1,
			"max_retries": float64(0), "backoff": "10ms", "max_backoff": "1s", "max_retry_after": "5s", "timeout": "3s"}, false},
		{"relative base url", map[string]any{"base_url": "eutils"}, true},
		{"bad duration", map[string]any{"rate_interval": "often"}, true},
		{"negative", map[string]any{"backoff": "-1s"}, true},
		{"retries not a number", map[string]any{"max_retries": "3"}, true},
		{"credential as setting", map[string]any{"email": "a@b.org"}, true},
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

func TestGetFullRecord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.src.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{PubMedID: "27797938"}})
	require.NoError(t, err)
	p := got.Paper
	requireWellFormed(t, []paper.Paper{p})
	require.Equal(t, paper.IDs{PubMedID: "27797938", DOI: "10.1136/gutjnl-2016-312510", PMCID: "PMC5442267"}, p.IDs)
	require.Equal(t, "Leucocyte telomere length, genetic variants at the TERT gene region and risk of pancreatic cancer.", p.Title)
	require.Len(t, p.Authors, 22)
	require.Equal(t, paper.Author{
		Name: "Ying Bao", GivenName: "Ying", FamilyName: "Bao",
		Affiliations: []paper.Affiliation{{Name: "Channing Division of Network Medicine, Department of Medicine, Brigham and Women's Hospital, and Harvard Medical School, Boston, Massachusetts, USA."}},
	}, p.Authors[0])
	require.Len(t, p.Authors[2].Affiliations, 2)
	// Issue of June 2017, online on 21 October 2016: the earlier, electronic date.
	require.Equal(t, paper.Date{Year: 2016, Month: 10, Day: 21, Precision: paper.PrecisionDay}, p.Published)
	require.Equal(t, paper.Venue{Name: "Gut", Type: "journal", Volume: "66", Issue: "6", Pages: "1116-1122", ISSN: []string{"1468-3288"}}, p.Venue)
	require.True(t, strings.HasPrefix(p.Abstract, "OBJECTIVE: Telomere shortening occurs as an early event"))
	require.Contains(t, p.Abstract, "\n\nDESIGN: We measured prediagnostic leucocyte telomere length")
	require.Contains(t, p.Abstract, "\n\nCONCLUSIONS: Prediagnostic leucocyte telomere length")
	require.Contains(t, p.Abstract, "(TERT) gene region")
	require.Len(t, p.References, 48) // CommentsCorrections of type Cites; the CommentIn is not a reference
	require.Equal(t, paper.IDs{PubMedID: "2657958"}, p.References[0])
	require.Equal(t, "https://pubmed.ncbi.nlm.nih.gov/27797938/", p.LandingURL)
	require.True(t, p.OpenAccess) // in PMC, released 2018-06-01
	require.Equal(t, "en", p.Language)
	require.Equal(t, "article", p.WorkType)
	require.Nil(t, p.CitationCount)
	require.Contains(t, p.Categories, "Pancreatic Neoplasms")
	require.Equal(t, time.Date(2018, 4, 17, 0, 0, 0, 0, time.UTC), p.UpdatedAt)

	q := requestFor(t, b.up, "efetch").URL.Query()
	require.Equal(t, "27797938", q.Get("id"))
	require.Equal(t, "pubmed", q.Get("db"))
	require.Equal(t, "xml", q.Get("retmode"))
	require.Equal(t, "lectern", q.Get("tool"))
}

func TestRecordedArticleSets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	two, err := b.src.fetch(t.Context(), credentials{}, []string{"11748933", "11700088"})
	require.NoError(t, err)
	requireWellFormed(t, two)
	require.Len(t, two, 2)
	require.Equal(t, paper.IDs{PubMedID: "11748933", DOI: "10.1006/cryo.2001.2328"}, two[0].IDs)
	require.Len(t, two[0].Authors, 8)
	require.Equal(t, "Dipartimento di Scienze Ambientali, Università degli Studi della Tuscia, 01100 Viterbo, Italy.", two[0].Authors[0].Affiliations[0].Name)
	require.Equal(t, paper.Date{Year: 2001, Month: 6, Precision: paper.PrecisionMonth}, two[0].Published)
	require.Equal(t, "Cryobiology", two[0].Venue.Name)
	require.Contains(t, two[0].Abstract, "(P < 0.001)")
	require.Equal(t, paper.IDs{PubMedID: "11700088", DOI: "10.1006/jmre.2001.2429"}, two[1].IDs)
	require.Equal(t, "Proton MRI of (13)C distribution by J and chemical shift editing.", two[1].Title)
	require.Len(t, two[1].Authors, 6)
	require.Equal(t, "F De Luca", two[1].Authors[5].Name)
	require.Equal(t, paper.Date{Year: 2001, Month: 11, Precision: paper.PrecisionMonth}, two[1].Published)

	abs, err := b.src.fetch(t.Context(), credentials{}, []string{"12091962", "9997"})
	require.NoError(t, err)
	requireWellFormed(t, abs)
	require.Len(t, abs, 2)
	require.Equal(t, paper.IDs{PubMedID: "12091962"}, abs[0].IDs)
	require.Empty(t, abs[0].Abstract)
	require.Equal(t, paper.Date{Year: 1990, Precision: paper.PrecisionYear}, abs[0].Published) // Season Spring
	require.Equal(t, []paper.Author{{Name: "J Michael Olivero", GivenName: "J Michael", FamilyName: "Olivero"}}, abs[0].Authors)
	require.Equal(t, "review", abs[0].WorkType)
	require.Equal(t, paper.IDs{PubMedID: "9997", DOI: "10.1016/0005-2795(76)90109-4"}, abs[1].IDs)
	require.Equal(t, paper.Date{Year: 1976, Month: 9, Day: 28, Precision: paper.PrecisionDay}, abs[1].Published)
	require.NotEmpty(t, abs[1].Abstract)
	require.Equal(t, "Biochimica et biophysica acta", abs[1].Venue.Name)
}

func TestRecordedSearches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()

	bio, err := b.src.api().esearch(ctx, credentials{}, searchParams{term: "(biopython)", retmax: 20})
	require.NoError(t, err)
	require.EqualValues(t, 63, bio.Count)
	require.Len(t, bio.IDs, 20)
	require.Equal(t, "41282813", bio.IDs[0])

	cancer, err := b.src.api().esearch(ctx, credentials{}, searchParams{term: "(cancer)", retmax: 100})
	require.NoError(t, err)
	require.EqualValues(t, 42249, cancer.Count)
	require.Len(t, cancer.IDs, 100)
	require.Equal(t, "1", cancer.QueryKey)
	require.Equal(t, "MCID_6927d6e7fee3e90f880ec190", cancer.WebEnv)

	// The search pages through retstart; the recorded ids have no recorded records.
	page, err := b.src.Search(ctx, &source.SearchRequest{Query: "cancer", PageSize: 100})
	require.NoError(t, err)
	require.EqualValues(t, 42249, page.TotalEstimate)
	require.Equal(t, "100", page.NextCursor)
	q := requestFor(t, b.up, "esearch").URL.Query()
	require.Equal(t, "(cancer)", q.Get("term"))
	require.Equal(t, "0", q.Get("retstart"))
	require.Equal(t, "100", q.Get("retmax"))
	require.Equal(t, "relevance", q.Get("sort"))

	none, err := b.src.Search(ctx, &source.SearchRequest{Query: "abcXYZ"})
	require.NoError(t, err) // ErrorList/PhraseNotFound with Count 0 is an empty page
	require.Empty(t, none.Papers)
	require.Empty(t, none.NextCursor)
	require.Zero(t, none.TotalEstimate)
	errs, err := b.src.api().esearch(ctx, credentials{}, searchParams{term: "abcXYZ"})
	require.NoError(t, err)
	require.Equal(t, []string{"abcXYZ"}, errs.ErrorList.PhraseNotFound)
	require.Equal(t, []string{"No items found."}, errs.Warnings)
}

func TestSearchPagesAndFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	var all []string
	cursor := ""
	for range 5 {
		page, err := b.src.Search(ctx, &source.SearchRequest{Query: "telomere", PageSize: 2, Cursor: cursor})
		require.NoError(t, err)
		requireWellFormed(t, page.Papers)
		require.EqualValues(t, 5, page.TotalEstimate)
		for _, p := range page.Papers {
			all = append(all, p.IDs.PubMedID)
		}
		cursor = page.NextCursor
		if cursor == "" {
			break
		}
	}
	require.Equal(t, corpus, all)

	_, err := b.src.Search(ctx, &source.SearchRequest{
		Query: "telomere",
		Sort:  source.SortNewest,
		Filters: source.Filters{
			From: paper.Date{Year: 2015, Precision: paper.PrecisionYear}, To: paper.Date{Year: 2017, Month: 2, Precision: paper.PrecisionMonth},
			Authors: []string{"Bao Y", "Kraft P"}, Venue: "Gut", Categories: []string{"Pancreatic Neoplasms"},
			WorkTypes: []string{"review"}, OpenAccessOnly: true,
		},
	})
	require.NoError(t, err)
	q := requestFor(t, b.up, "esearch").URL.Query()
	require.Equal(t, `(telomere) AND ("Bao Y"[Author] OR "Kraft P"[Author]) AND "Gut"[Journal] AND "Pancreatic Neoplasms"[MeSH Terms] AND "Review"[Publication Type] AND "free full text"[Filter]`, q.Get("term"))
	require.Equal(t, "pub_date", q.Get("sort"))
	require.Equal(t, "pdat", q.Get("datetype"))
	require.Equal(t, "2015/01/01", q.Get("mindate"))
	require.Equal(t, "2017/02/28", q.Get("maxdate"))

	for _, cursor := range []string{"x", "-1", "10000", "01", "lectern-conformance-bogus-cursor"} {
		_, err := b.src.Search(ctx, &source.SearchRequest{Query: "telomere", Cursor: cursor})
		require.ErrorIs(t, err, protocol.ErrBadRequest, cursor)
	}
	_, err = b.src.Search(ctx, &source.SearchRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestGetByOtherIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	got, err := b.src.Get(ctx, &source.GetRequest{IDs: paper.IDs{DOI: "https://doi.org/10.1136/GUTJNL-2016-312510"}})
	require.NoError(t, err)
	require.Equal(t, "27797938", got.Paper.IDs.PubMedID)
	require.Equal(t, `"10.1136/gutjnl-2016-312510"[DOI]`, requestFor(t, b.up, "esearch").URL.Query().Get("term"))

	got, err = b.src.Get(ctx, &source.GetRequest{IDs: paper.IDs{PMCID: "5442267"}})
	require.NoError(t, err)
	require.Equal(t, "27797938", got.Paper.IDs.PubMedID)
	require.Equal(t, "PMC5442267[PMCID]", requestFor(t, b.up, "esearch").URL.Query().Get("term"))

	tests := []struct {
		name string
		ids  paper.IDs
		want *protocol.Error
	}{
		{"unknown doi", paper.IDs{DOI: "10.0000/lectern-conformance-missing"}, protocol.ErrNotFound},
		{"unknown pmid", paper.IDs{PubMedID: "1"}, protocol.ErrNotFound},
		{"only an arxiv id", paper.IDs{ArXivID: "2101.00001"}, protocol.ErrNotFound},
		{"nothing", paper.IDs{}, protocol.ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.src.Get(t.Context(), &source.GetRequest{IDs: tc.ids})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestESummaryRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := b.src.api().esummary(t.Context(), credentials{}, []string{"11850928", "11482001"})
	require.NoError(t, err)
	require.Len(t, res.DocSums, 2)
	first, ok := res.DocSums[0].toPaper()
	require.True(t, ok)
	requireWellFormed(t, []paper.Paper{first})
	require.Equal(t, "Zirconium granuloma following treatment of rhus dermatitis.", first.Title)
	require.Equal(t, paper.IDs{PubMedID: "11850928"}, first.IDs)
	require.Equal(t, paper.Date{Year: 1965, Month: 8, Precision: paper.PrecisionMonth}, first.Published)
	require.Equal(t, []paper.Author{{Name: "LoPresti PJ"}, {Name: "Hambrick GW Jr"}}, first.Authors)
	require.Equal(t, paper.Venue{Name: "Archives of dermatology", Type: "journal", Volume: "92", Issue: "2", Pages: "188-91", ISSN: []string{"0003-987X"}}, first.Venue)
	second, ok := res.DocSums[1].toPaper()
	require.True(t, ok)
	require.Equal(t, "review", second.WorkType)
	require.Len(t, second.Authors, 3)

	// fetch falls back to esummary for ids efetch has no record of.
	papers, err := b.src.fetch(t.Context(), credentials{}, []string{"9997", "11482001", "424242"})
	require.NoError(t, err)
	require.Len(t, papers, 2)
	require.Equal(t, "9997", papers[0].IDs.PubMedID)
	require.Equal(t, "Adverse and beneficial effects of plant extracts on skin and skin disorders.", papers[1].Title)
	require.Equal(t, "11482001,424242", requestFor(t, b.up, "esummary").URL.Query().Get("id"))
}

func TestCitationLinks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	ids := paper.IDs{PubMedID: "9298984"}

	cited, err := b.src.Citations(ctx, &source.CitationsRequest{IDs: ids, PageSize: 10})
	require.NoError(t, err)
	require.EqualValues(t, 39, cited.TotalEstimate) // pubmed_pubmed_citedin of the recorded elink
	require.Equal(t, "10", cited.NextCursor)
	q := requestFor(t, b.up, "elink").URL.Query()
	require.Equal(t, "pubmed", q.Get("dbfrom"))
	require.Equal(t, "9298984", q.Get("id"))
	require.Equal(t, linkCitedIn, q.Get("linkname"))
	require.Equal(t, "neighbor", q.Get("cmd"))
	require.Equal(t, "38830800,38188366", strings.Join(strings.Split(requestFor(t, b.up, "efetch").URL.Query().Get("id"), ",")[:2], ","))

	last, err := b.src.Citations(ctx, &source.CitationsRequest{IDs: ids, PageSize: 10, Cursor: "30"})
	require.NoError(t, err)
	require.Empty(t, last.NextCursor)

	refs, err := b.src.References(ctx, &source.CitationsRequest{IDs: ids, PageSize: 100})
	require.NoError(t, err)
	require.EqualValues(t, 56, refs.TotalEstimate) // pubmed_pubmed_refs
	require.Empty(t, refs.NextCursor)
	require.Equal(t, linkRefs, requestFor(t, b.up, "elink").URL.Query().Get("linkname"))

	links, err := b.src.api().links(ctx, credentials{}, "9298984", "pubmed_pubmed")
	require.NoError(t, err)
	require.Len(t, links, 100) // 101 recorded neighbours, the paper itself left out
	require.Equal(t, "8794856", links[0])

	_, err = b.src.Citations(ctx, &source.CitationsRequest{IDs: ids, Cursor: "40"})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	_, err = b.src.References(ctx, &source.CitationsRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestRecentAndAuthor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	since := time.Date(2024, 3, 5, 12, 0, 0, 0, time.UTC)
	page, err := b.src.Recent(ctx, &source.RecentRequest{Topics: []string{"telomere length", "pancreatic cancer"}, Categories: []string{"Telomere"}, Since: since, PageSize: 3})
	require.NoError(t, err)
	requireWellFormed(t, page.Papers)
	require.Equal(t, "3", page.NextCursor)
	q := requestFor(t, b.up, "esearch").URL.Query()
	require.Equal(t, `((telomere length) OR (pancreatic cancer) OR "Telomere"[MeSH Terms])`, q.Get("term"))
	require.Equal(t, "edat", q.Get("datetype"))
	require.Equal(t, "2024/03/05", q.Get("mindate"))
	require.Equal(t, latestDate, q.Get("maxdate"))

	_, err = b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{Name: "Bao Y"}, Since: since})
	require.NoError(t, err)
	q = requestFor(t, b.up, "esearch").URL.Query()
	require.Equal(t, `"Bao Y"[Author]`, q.Get("term"))
	require.Equal(t, "pdat", q.Get("datetype"))
	require.Equal(t, "pub_date", q.Get("sort"))

	_, err = b.src.AuthorPapers(ctx, &source.AuthorPapersRequest{Author: source.AuthorRef{ORCID: "0000-0002-1825-0097"}})
	require.NoError(t, err)
	require.Equal(t, "0000-0002-1825-0097[auid]", requestFor(t, b.up, "esearch").URL.Query().Get("term"))

	for _, req := range []*source.AuthorPapersRequest{{}, {Author: source.AuthorRef{SourceAuthorID: "123"}}, {Author: source.AuthorRef{Name: "X"}, Cursor: "y"}} {
		_, err := b.src.AuthorPapers(ctx, req)
		require.ErrorIs(t, err, protocol.ErrBadRequest)
	}
	_, err = b.src.Recent(ctx, &source.RecentRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

// scripted answers with the given steps in turn, then an empty search result.
func scripted(t *testing.T, steps ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return plugintest.Scripted(t, reply(http.StatusOK, "", `<eSearchResult><Count>0</Count><RetMax>0</RetMax><RetStart>0</RetStart><IdList/></eSearchResult>`), steps...)
}

func reply(code int, retryAfter, body string) func(w http.ResponseWriter) {
	return plugintest.Reply(code, retryAfter, "text/xml; charset=UTF-8", body)
}

func TestRetriesAndErrorMapping(t *testing.T) {
	t.Parallel()
	limit := `{"error":"API rate limit exceeded","api-key":"1.2.3.4","count":"4","limit":"3"}`
	tests := []struct {
		name      string
		steps     []func(http.ResponseWriter)
		extra     map[string]any
		want      *protocol.Error
		wantCalls int32
		retryAt   time.Duration
	}{
		{"429 then ok", []func(http.ResponseWriter){reply(429, "0", limit), reply(429, "", limit)}, nil, nil, 3, 0},
		{"rate limit as a 200 JSON body", []func(http.ResponseWriter){reply(200, "", limit)}, nil, nil, 2, 0},
		{"5xx then ok", []func(http.ResponseWriter){reply(502, "", "bad gateway"), reply(503, "0", "")}, nil, nil, 3, 0},
		{"429 exhausted", []func(http.ResponseWriter){reply(429, "", limit), reply(429, "", limit)}, map[string]any{"max_retries": float64(1)}, protocol.ErrRateLimited, 2, 0},
		{"429 long retry-after", []func(http.ResponseWriter){reply(429, "90", limit)}, nil, protocol.ErrRateLimited, 1, 90 * time.Second},
		{"5xx exhausted", []func(http.ResponseWriter){reply(500, "", ""), reply(500, "", ""), reply(500, "", "")}, map[string]any{"max_retries": float64(2)}, protocol.ErrUnavailable, 3, 0},
		{"invalid api key", []func(http.ResponseWriter){reply(400, "", `{"error":"API key invalid","api-key":"x","type":"invalid","status":"unknown"}`)}, nil, protocol.ErrUnauthorized, 1, 0},
		{"400", []func(http.ResponseWriter){reply(400, "", "bad request")}, nil, protocol.ErrBadRequest, 1, 0},
		{"esearch ERROR", []func(http.ResponseWriter){reply(200, "", `<eSearchResult><ERROR>Invalid query</ERROR></eSearchResult>`)}, nil, protocol.ErrBadRequest, 1, 0},
		{"403", []func(http.ResponseWriter){reply(403, "", "")}, nil, protocol.ErrUnauthorized, 1, 0},
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

func TestEFetchUnknownIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		step func(http.ResponseWriter)
		want *protocol.Error
	}{
		{"empty set", reply(200, "", `<?xml version="1.0" ?><PubmedArticleSet></PubmedArticleSet>`), protocol.ErrNotFound},
		{"ERROR body", reply(200, "", `<eFetchResult><ERROR>ID list is empty! Possibly it has no correct IDs.</ERROR></eFetchResult>`), protocol.ErrNotFound},
		{"400 id list", reply(400, "", `{"error":"ID list is empty! Possibly it has no correct IDs."}`), protocol.ErrNotFound},
		{"400 other", reply(400, "", `{"error":"Unknown retmode"}`), protocol.ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// efetch, then (for an empty set) esummary, both answered by the step.
			srv, _ := scripted(t, tc.step, reply(200, "", `<eSummaryResult></eSummaryResult>`))
			s := configured(t, srv.URL, nil)
			_, err := s.Get(t.Context(), &source.GetRequest{IDs: paper.IDs{PubMedID: "99999999"}})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	var query atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query.Store(r.URL.Query())
		writeXML(w, http.StatusOK, `<eSearchResult><Count>0</Count><IdList/></eSearchResult>`)
	}))
	t.Cleanup(srv.Close)
	// Without a key a call waits 10s for its slot; with one it does not wait.
	s := configured(t, srv.URL, map[string]any{"rate_interval": "10s"})
	creds := map[string]string{"api_key": "k3y", "email": "me@example.org"}
	for range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		_, err := s.Search(ctx, &source.SearchRequest{Query: "x", Credentials: creds})
		cancel()
		require.NoError(t, err)
	}
	q := query.Load().(url.Values)
	require.Equal(t, []string{"k3y"}, q["api_key"])
	require.Equal(t, []string{"me@example.org"}, q["email"])
	require.Equal(t, []string{"lectern"}, q["tool"])

	// A transport error never carries the URL, which holds the credentials.
	srv.Close()
	_, err := configured(t, srv.URL, map[string]any{"max_retries": float64(0)}).Search(t.Context(), &source.SearchRequest{Query: "x", Credentials: creds})
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.NotContains(t, err.Error(), "k3y")
	require.NotContains(t, err.Error(), "example.org")
}

func TestRateLimitWithoutKey(t *testing.T) {
	t.Parallel()
	srv, calls := scripted(t)
	s := configured(t, srv.URL, map[string]any{"rate_interval": "30ms"})
	start := time.Now()
	for range 4 {
		_, err := s.Search(t.Context(), &source.SearchRequest{Query: "x"})
		require.NoError(t, err)
	}
	require.EqualValues(t, 4, calls.Load())
	require.GreaterOrEqual(t, time.Since(start), 90*time.Millisecond)
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
	busy, _ := scripted(t, reply(503, "30", ""), reply(503, "30", ""))
	tests := []struct {
		name string
		src  *PubMed
	}{
		{"in flight", configured(t, hang.URL, nil)},
		{"in backoff", configured(t, busy.URL, nil)},
	}
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

func TestConformance(t *testing.T) {
	t.Parallel()
	_, srv := newUpstream(t)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindSource, Query: "telomere", PageSize: 2,
		Settings: map[string]any{"base_url": srv.URL, "rate_interval": "0s", "rate_interval_with_key": "0s", "backoff": "1ms"},
	})
}
