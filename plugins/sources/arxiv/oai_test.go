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

// oaiServer answers OAI-PMH requests with respond and the query API with an empty
// feed (so that Get falls back to GetRecord); it records every OAI request.
type oaiServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []url.Values
}

func (s *oaiServer) requests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.reqs...)
}

func newOAIServer(t *testing.T, dir string, respond func(w http.ResponseWriter, q url.Values)) *oaiServer {
	t.Helper()
	empty := plugintest.ReadFixture(t, dir, "query_empty_result_id_0000.0000.xml")
	s := &oaiServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oai2" {
			_, _ = w.Write(empty)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, r.URL.Query())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		respond(w, r.URL.Query())
	}))
	t.Cleanup(s.Close)
	return s
}

// answer answers every OAI request with body.
func answer(body []byte) func(w http.ResponseWriter, q url.Values) {
	return func(w http.ResponseWriter, _ url.Values) { _, _ = w.Write(body) }
}

func date(y, m, d int) paper.Date {
	return paper.Date{Year: y, Month: m, Day: d, Precision: paper.PrecisionDay}
}

func ids(ps []paper.Paper) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.IDs.ArXivID
	}
	return out
}

// TestOAIFixtures replays every recorded OAI-PMH response through the calls that
// ask for it. A new oai_* recording without a case fails the test.
func TestOAIFixtures(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	since := time.Date(2014, 10, 1, 12, 0, 0, 0, time.UTC)

	type call func(ctx context.Context, a *Arxiv) (*source.Page, error)
	get := func(id string) call {
		return func(ctx context.Context, a *Arxiv) (*source.Page, error) {
			res, err := a.Get(ctx, &source.GetRequest{IDs: paper.IDs{ArXivID: id}})
			if err != nil {
				return nil, err
			}
			return &source.Page{Papers: []paper.Paper{res.Paper}}, nil
		}
	}
	recent := func(cursor string, categories ...string) call {
		return func(ctx context.Context, a *Arxiv) (*source.Page, error) {
			return a.Recent(ctx, &source.RecentRequest{Categories: categories, Since: since, Cursor: cursor})
		}
	}
	getRecord := map[string]string{"verb": "GetRecord", "identifier": "oai:arXiv.org:1302.2146", "metadataPrefix": "arXivRaw"}
	tests := []struct {
		name    string
		fixture string
		call    call
		// wantOAI are the arguments of the OAI request; absent ones must be
		// missing.
		wantOAI map[string]string
		absent  []string
		wantErr *protocol.Error
		check   func(t *testing.T, page *source.Page)
	}{
		{
			name: "get record", fixture: "oai_getrecord_arxivraw_1302.2146.xml",
			call: get("1302.2146"), wantOAI: getRecord,
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "1302.2146", ArXivVersion: 2}, p.IDs)
				require.Equal(t, "The Same-Sign Dilepton Signature of RPV/MFV SUSY", p.Title)
				require.Equal(t, []string{"Joshua Berger", "Maxim Perelstein", "Michael Saelim", "Philip Tanedo"}, names(p.Authors))
				require.Equal(t, []string{"hep-ph", "hep-ex"}, p.Categories)
				require.Equal(t, date(2013, 2, 8), p.Published)
				require.Equal(t, time.Date(2013, 4, 2, 1, 50, 8, 0, time.UTC), p.UpdatedAt)
				require.Equal(t, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/", p.License)
				require.Equal(t, "https://arxiv.org/abs/1302.2146", p.LandingURL)
				require.Equal(t, "https://arxiv.org/pdf/1302.2146v2", p.PDFURL)
				require.Equal(t, paper.Venue{Name: "arXiv", Type: "preprint", Publisher: "arXiv"}, p.Venue)
				require.True(t, strings.HasPrefix(p.Abstract, "The lack of observation of superpartners at the Large Hadron Collider so far has led"), p.Abstract)
				require.True(t, strings.HasSuffix(p.Abstract, "can be probed at the 14 TeV LHC with a 100 fb^-1 data set."), p.Abstract)
				require.Equal(t, "preprint", p.WorkType)
				require.True(t, p.OpenAccess)
			},
		},
		{
			name: "get record at an older version", fixture: "oai_getrecord_arxivraw_1302.2146.xml",
			call: get("arXiv:1302.2146v1"), wantOAI: getRecord,
			check: func(t *testing.T, page *source.Page) {
				p := page.Papers[0]
				require.Equal(t, paper.IDs{ArXivID: "1302.2146", ArXivVersion: 1}, p.IDs)
				require.Equal(t, time.Date(2013, 2, 8, 21, 0, 1, 0, time.UTC), p.UpdatedAt)
				require.Equal(t, date(2013, 2, 8), p.Published)
				require.Equal(t, "https://arxiv.org/pdf/1302.2146v1", p.PDFURL)
			},
		},
		{
			name: "get record at a version it does not have", fixture: "oai_getrecord_arxivraw_1302.2146.xml",
			call: get("1302.2146v3"), wantOAI: getRecord, wantErr: protocol.ErrNotFound,
		},
		{
			name: "idDoesNotExist is NotFound", fixture: "oai_error_idDoesNotExist.xml",
			call:    get("0813.2274"),
			wantOAI: map[string]string{"verb": "GetRecord", "identifier": "oai:arXiv.org:0813.2274", "metadataPrefix": "arXivRaw"},
			wantErr: protocol.ErrNotFound,
		},
		{
			name: "noRecordsMatch is an empty last page", fixture: "oai_error_noRecordsMatch.xml",
			call:    recent("", "cs.AI"),
			wantOAI: map[string]string{"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "cs", "from": "2014-10-01"},
			absent:  []string{"resumptionToken", "until"},
			check: func(t *testing.T, page *source.Page) {
				require.Empty(t, page.Papers)
				require.Empty(t, page.NextCursor)
			},
		},
		{
			name: "badResumptionToken is BadRequest", fixture: "oai_error_badResumptionToken.xml",
			call:    recent("oai:set=cs&token=3", "cs.AI"),
			wantOAI: map[string]string{"verb": "ListRecords", "resumptionToken": "3"},
			absent:  []string{"metadataPrefix", "set", "from"},
			wantErr: protocol.ErrBadRequest,
		},
		{
			name: "list records of one category", fixture: "oai_listrecords_arxivraw_with_resumptiontoken.xml",
			call:    recent("", "nucl-th"),
			wantOAI: map[string]string{"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "physics:nucl-th", "from": "2014-10-01"},
			absent:  []string{"resumptionToken"},
			check: func(t *testing.T, page *source.Page) {
				// Newest first by the latest version's date.
				require.Equal(t, []string{"0704.1586", "0704.0471"}, ids(page.Papers))
				require.Equal(t, "oai:set=physics%3Anucl-th&token=726959%7C1001", page.NextCursor)
				require.EqualValues(t, 58011*2/6, page.TotalEstimate) // completeListSize scaled by the kept share
			},
		},
		{
			name: "list records of a whole archive", fixture: "oai_listrecords_arxivraw_with_resumptiontoken.xml",
			call:    recent("", "math"),
			wantOAI: map[string]string{"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": "math", "from": "2014-10-01"},
			check: func(t *testing.T, page *source.Page) {
				require.Equal(t, []string{"0704.0874", "0704.0716"}, ids(page.Papers)) // math.AG (v3 2014), math.MP (v4 2008)
			},
		},
	}

	files, err := filepath.Glob(filepath.Join(dir, "oai_*.xml"))
	require.NoError(t, err)
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.fixture] = true
	}
	for _, f := range files {
		require.True(t, covered[filepath.Base(f)], "OAI-PMH fixture %s has no test case", filepath.Base(f))
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newOAIServer(t, dir, answer(plugintest.ReadFixture(t, dir, tc.fixture)))
			a := configured(t, srv.URL, nil)
			page, err := tc.call(t.Context(), a)
			reqs := srv.requests()
			require.Len(t, reqs, 1)
			for k, v := range tc.wantOAI {
				require.Equal(t, v, reqs[0].Get(k), "OAI argument %s", k)
			}
			for _, k := range tc.absent {
				require.False(t, reqs[0].Has(k), "OAI argument %s must be absent", k)
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			requireWellFormed(t, page.Papers)
			if tc.check != nil {
				tc.check(t, page)
			}
		})
	}
}

// TestParseListRecords checks every record of the recorded ListRecords chunk and
// its resumption token.
func TestParseListRecords(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	r, err := parseOAI(plugintest.ReadFixture(t, dir, "oai_listrecords_arxivraw_with_resumptiontoken.xml"))
	require.NoError(t, err)
	require.Empty(t, r.Errors)
	require.Equal(t, "2015-01-06T20:49:59Z", r.ResponseDate)
	l := listFrom(r)
	require.Equal(t, "726959|1001", l.next)
	require.Equal(t, 0, l.cursor)
	require.Equal(t, 58011, l.complete)
	require.Len(t, l.papers, 6)
	ps := make([]paper.Paper, len(l.papers))
	for i := range l.papers {
		ps[i] = l.papers[i].Paper
	}
	requireWellFormed(t, ps)

	type want struct {
		ids        paper.IDs
		published  paper.Date
		updated    time.Time
		authors    []string
		categories []string
		venue      string
		sets       []string
	}
	wants := []want{
		{
			paper.IDs{ArXivID: "0704.0471", ArXivVersion: 1, DOI: "10.1103/physrevc.76.024606"},
			date(2007, 4, 3), time.Date(2007, 4, 3, 22, 4, 11, 0, time.UTC),
			[]string{"D.V. Shetty", "S.J. Yennello", "G.A. Souliotis"}, []string{"nucl-ex", "nucl-th"},
			"Phys.Rev.C76:024606,2007; Erratum-ibid.C76:039902,2007", []string{"physics:nucl-ex", "physics:nucl-th"},
		},
		{
			paper.IDs{ArXivID: "0704.0716", ArXivVersion: 4},
			date(2007, 4, 5), time.Date(2008, 11, 14, 9, 7, 25, 0, time.UTC),
			[]string{"Christoph Richard"}, []string{"math-ph", "math.MP"},
			"Polygons, polyominoes and polycubes, 247-299, Lecture Notes in Phys., 775, Springer, Dordrecht, 2009", []string{"math", "physics:math-ph"},
		},
		{
			paper.IDs{ArXivID: "0704.0874", ArXivVersion: 3},
			date(2007, 4, 6), time.Date(2014, 11, 20, 15, 3, 16, 0, time.UTC),
			[]string{"Gavril Farkas"}, []string{"math.AG"},
			"J. London Math. Soc. 78(2008) 418-440", []string{"math"},
		},
		{
			paper.IDs{ArXivID: "0704.1109", ArXivVersion: 2, DOI: "10.1007/s10773-009-0204-x"},
			date(2007, 4, 9), time.Date(2008, 1, 29, 20, 15, 1, 0, time.UTC),
			[]string{"Valeria M. Rosa", "Patricio S. letelier"}, []string{"gr-qc"},
			"Int.J.Theor.Phys.49:316-323,2010", []string{"physics:gr-qc"},
		},
		{
			paper.IDs{ArXivID: "0704.1114", ArXivVersion: 1, DOI: "10.1086/518736"},
			date(2007, 4, 9), time.Date(2007, 4, 9, 20, 13, 36, 0, time.UTC),
			[]string{"T. S. Barman"}, []string{"astro-ph"},
			"Astrophys.J.661:L191-L194,2007", []string{"physics:astro-ph"},
		},
		{
			paper.IDs{ArXivID: "0704.1586", ArXivVersion: 1, DOI: "10.1103/physrevc.76.014611"},
			date(2007, 4, 12), time.Date(2007, 4, 12, 14, 18, 58, 0, time.UTC),
			[]string{"N.C. Summers", "F.M. Nunes"}, []string{"nucl-th"},
			"Phys.Rev.C76:014611,2007; Erratum-ibid..C77:049901,2008", []string{"physics:nucl-th"},
		},
	}
	for i, w := range wants {
		p := l.papers[i]
		t.Run(w.ids.ArXivID, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, w.ids, p.IDs)
			require.Equal(t, w.published, p.Published)
			require.Equal(t, w.updated, p.UpdatedAt)
			require.Equal(t, w.authors, names(p.Authors))
			require.Equal(t, w.categories, p.Categories)
			require.Equal(t, paper.Venue{Name: w.venue, Type: "journal"}, p.Venue)
			require.Equal(t, w.sets, p.sets)
			require.Equal(t, "https://arxiv.org/abs/"+w.ids.ArXivID, p.LandingURL)
			require.Equal(t, fmt.Sprintf("https://arxiv.org/pdf/%sv%d", w.ids.ArXivID, w.ids.ArXivVersion), p.PDFURL)
		})
	}
	require.Equal(t, "Density dependence of the symmetry energy and the nuclear equation of state: A Dynamical and Statistical model perspective", ps[0].Title)
	require.Contains(t, ps[0].Abstract, `The comparison rules out an extremely " stiff " and " soft " form`)
	require.Empty(t, ps[0].License)
	require.Equal(t, "http://arxiv.org/licenses/nonexclusive-distrib/1.0/", ps[1].License)
	require.Equal(t, "Higher ramification and varieties of secant divisors on the generic curve", ps[2].Title)
	require.Equal(t, "Core excitation in the elastic scattering and breakup of $^{11}$Be on protons", ps[5].Title)
}

// recordRE cuts the <record> elements out of a recording.
var recordRE = regexp.MustCompile(`(?s)<record>.*?</record>`)

// chunk wraps records in a ListRecords answer; token is the resumptionToken
// element, "" for none.
func chunk(token string, records ...string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2015-01-06T20:50:00Z</responseDate>
<request verb="ListRecords">http://export.arxiv.org/oai2</request><ListRecords>
` + strings.Join(records, "\n") + token + `</ListRecords></OAI-PMH>`)
}

// TestRecentOAIPaging pages with one paper a page through three sets: two pages
// from one recorded chunk (the second from the cache), an empty last chunk of
// that set skipped within the call, a cross-listed record returned with the
// first set only, and the end.
func TestRecentOAIPaging(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	first := plugintest.ReadFixture(t, dir, "oai_listrecords_arxivraw_with_resumptiontoken.xml")
	crossListed := recordRE.FindString(string(plugintest.ReadFixture(t, dir, "oai_getrecord_arxivraw_1302.2146.xml"))) // hep-ph and hep-ex
	srv := newOAIServer(t, dir, func(w http.ResponseWriter, q url.Values) {
		switch {
		case q.Get("resumptionToken") == "726959|1001":
			_, _ = w.Write(chunk(`<resumptionToken cursor="1000" completeListSize="1000"/>`))
		case q.Get("set") == "physics:nucl-th":
			_, _ = w.Write(first)
		case q.Get("set") == "physics:hep-ph" || q.Get("set") == "physics:hep-ex":
			_, _ = w.Write(chunk("", crossListed))
		default:
			http.Error(w, "unexpected request", http.StatusBadRequest)
		}
	})
	a := configured(t, srv.URL, nil)

	var got [][]string
	cursor, pages := "", 0
	for {
		pages++
		require.LessOrEqual(t, pages, 10, "paging does not end")
		page, err := a.Recent(t.Context(), &source.RecentRequest{
			Categories: []string{"nucl-th", "hep-ph", "hep-ex"}, Since: time.Date(2014, 10, 1, 0, 0, 0, 0, time.UTC),
			Cursor: cursor, PageSize: 1,
		})
		require.NoError(t, err)
		requireWellFormed(t, page.Papers)
		got = append(got, ids(page.Papers))
		if page.NextCursor == "" {
			break
		}
		require.NotEqual(t, cursor, page.NextCursor)
		cursor = page.NextCursor
	}
	require.Equal(t, [][]string{{"0704.1586"}, {"0704.0471"}, {"1302.2146"}, {}}, got)

	var asked []string
	for _, q := range srv.requests() {
		asked = append(asked, q.Get("set")+"|"+q.Get("resumptionToken"))
	}
	require.Equal(t, []string{"physics:nucl-th|", "|726959|1001", "physics:hep-ph|", "physics:hep-ex|"}, asked)
}

func TestRecentOAICursors(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	srv := newOAIServer(t, dir, answer(plugintest.ReadFixture(t, dir, "oai_error_noRecordsMatch.xml")))
	a := configured(t, srv.URL, nil)
	for _, c := range []string{"25", "oai:set=math&token=x", "oai:set=cs&skip=-1", "oai:%zz", "lectern-conformance-bogus-cursor"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			_, err := a.Recent(t.Context(), &source.RecentRequest{Categories: []string{"cs.AI"}, Cursor: c})
			require.ErrorIs(t, err, protocol.ErrBadRequest)
		})
	}
	require.Empty(t, srv.requests(), "a foreign cursor must fail before any request")
}

func TestOAIFlowControl(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	body := plugintest.ReadFixture(t, dir, "oai_listrecords_arxivraw_with_resumptiontoken.xml")
	recent := func(a *Arxiv) (*source.Page, error) {
		return a.Recent(t.Context(), &source.RecentRequest{Categories: []string{"math.AG"}})
	}

	t.Run("503 with Retry-After is waited out", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(503, "1"))
		a := configured(t, srv.URL, nil)
		start := time.Now()
		page, err := recent(a)
		require.NoError(t, err)
		require.Equal(t, []string{"0704.0874"}, ids(page.Papers))
		require.EqualValues(t, 2, n.Load())
		require.GreaterOrEqual(t, time.Since(start), time.Second, "Retry-After was not honoured")
	})
	t.Run("503 asking beyond max_backoff is RateLimited", func(t *testing.T) {
		t.Parallel()
		srv, n := flaky(t, body, status(503, "120"))
		a := configured(t, srv.URL, nil)
		_, err := recent(a)
		require.ErrorIs(t, err, protocol.ErrRateLimited)
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 120*time.Second, pe.RetryAfter)
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("flow control holds back other calls", func(t *testing.T) {
		t.Parallel()
		srv, _ := flaky(t, body, status(503, "1"))
		a := configured(t, srv.URL, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = recent(a)
		}()
		// Wait for the first call to have met the 503 and set the hold.
		var until time.Time
		require.Eventually(t, func() bool { until = a.pacer.Next(); return time.Now().Before(until) },
			5*time.Second, time.Millisecond)
		start := time.Now()
		_, err := a.Search(t.Context(), &source.SearchRequest{Query: "x"})
		require.Error(t, err) // the server answers the OAI recording, not a feed
		require.False(t, time.Now().Before(until), "the call waited out the hold")
		require.GreaterOrEqual(t, until.Sub(start), 500*time.Millisecond, "the hold is the 1 s Retry-After")
		<-done
	})
}

// TestOAIErrorCodes maps OAI-PMH error codes, including those arXiv was not
// recorded answering, to the typed errors.
func TestOAIErrorCodes(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	tests := []struct {
		code string
		want *protocol.Error
	}{
		{"badArgument", protocol.ErrBadRequest},
		{"cannotDisseminateFormat", protocol.ErrBadRequest},
		{"badResumptionToken", protocol.ErrBadRequest},
		{"badVerb", protocol.ErrBadRequest},
		{"noSetHierarchy", protocol.ErrBadRequest},
		{"idDoesNotExist", protocol.ErrNotFound},
		{"somethingNew", protocol.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2015-06-23T13:31:17Z</responseDate>
<request verb="ListRecords">http://export.arxiv.org/oai2</request><error code=%q>it went wrong</error></OAI-PMH>`, tc.code)
			srv := newOAIServer(t, dir, answer([]byte(body)))
			a := configured(t, srv.URL, map[string]any{"max_attempts": float64(1)})
			_, err := a.Recent(t.Context(), &source.RecentRequest{Categories: []string{"cs.AI"}})
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), "it went wrong")
		})
	}
}

func TestRecentAPIChoice(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	tests := []struct {
		name       string
		api        string
		categories []string
		topics     []string
		wantPath   string
	}{
		{"oai for categories", recentOAI, []string{"cs.AI"}, []string{"agents"}, "/oai2"},
		{"query for topics alone", recentOAI, nil, []string{"agents"}, "/api/query"},
		{"query when configured", recentQuery, []string{"cs.AI"}, nil, "/api/query"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			paths := make(chan string, 4)
			oai, feed := plugintest.ReadFixture(t, dir, "oai_error_noRecordsMatch.xml"), plugintest.ReadFixture(t, dir, "query_empty_result_id_0000.0000.xml")
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				paths <- r.URL.Path
				if r.URL.Path == "/oai2" {
					_, _ = w.Write(oai)
					return
				}
				_, _ = w.Write(feed)
			}))
			t.Cleanup(srv.Close)
			a := configured(t, srv.URL, map[string]any{"recent_api": tc.api})
			page, err := a.Recent(t.Context(), &source.RecentRequest{Categories: tc.categories, Topics: tc.topics})
			require.NoError(t, err)
			require.Empty(t, page.Papers)
			require.Equal(t, tc.wantPath, <-paths)
		})
	}
}

func TestParseAuthors(t *testing.T) {
	t.Parallel()
	aff := func(names ...string) []paper.Affiliation {
		var out []paper.Affiliation
		for _, n := range names {
			out = append(out, paper.Affiliation{Name: n})
		}
		return out
	}
	tests := []struct {
		in   string
		want []paper.Author
	}{
		{"Christoph Richard", []paper.Author{{Name: "Christoph Richard"}}},
		{"Valeria M. Rosa and Patricio S. letelier", []paper.Author{{Name: "Valeria M. Rosa"}, {Name: "Patricio S. letelier"}}},
		{"D.V. Shetty, S.J. Yennello, and G.A. Souliotis",
			[]paper.Author{{Name: "D.V. Shetty"}, {Name: "S.J. Yennello"}, {Name: "G.A. Souliotis"}}},
		{"Joshua Berger, Maxim Perelstein, Michael Saelim and Philip Tanedo",
			[]paper.Author{{Name: "Joshua Berger"}, {Name: "Maxim Perelstein"}, {Name: "Michael Saelim"}, {Name: "Philip Tanedo"}}},
		{"A. Smith (MIT), B. Jones (University of Oxford, UK) and C. Doe",
			[]paper.Author{{Name: "A. Smith", Affiliations: aff("MIT")}, {Name: "B. Jones", Affiliations: aff("University of Oxford, UK")}, {Name: "C. Doe"}}},
		{"A. One (1), B. Two (1 and 2), C. Three (2) ((1) Univ A, Town, (2) CERN)",
			[]paper.Author{{Name: "A. One", Affiliations: aff("Univ A, Town")}, {Name: "B. Two", Affiliations: aff("Univ A, Town", "CERN")}, {Name: "C. Three", Affiliations: aff("CERN")}}},
		{"John Smith, Jr. and Jane\n  Roe", []paper.Author{{Name: "John Smith, Jr."}, {Name: "Jane Roe"}}},
		{"Alexander Anderson, Sandra Andrews, et al.", []paper.Author{{Name: "Alexander Anderson"}, {Name: "Sandra Andrews"}}},
		{"The ATLAS Collaboration", []paper.Author{{Name: "The ATLAS Collaboration"}}},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, parseAuthors(tc.in))
		})
	}
}

func TestSets(t *testing.T) {
	t.Parallel()
	sets := []struct{ category, want string }{
		{"cs.AI", "cs"},
		{"cs", "cs"},
		{"hep-th", "physics:hep-th"},
		{"cond-mat.str-el", "physics:cond-mat"},
		{"physics.optics", "physics:physics"},
		{"nlin.AO", "physics:nlin"},
		{"math-ph", "physics:math-ph"},
		{"math.MP", "math"},
		{"q-bio.NC", "q-bio"},
		{"q-fin.CP", "q-fin"},
		{"stat.ML", "stat"},
		{"eess.SP", "eess"},
		{"econ.EM", "econ"},
		{"alg-geom", "math"},
		{"chao-dyn", "physics:nlin"},
		{"cmp-lg", "cs"},
		{"supr-con", "physics:cond-mat"},
	}
	for _, tc := range sets {
		t.Run(tc.category, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, setFor(tc.category))
		})
	}

	w, err := parseWant([]string{"cs.AI", "cs.LG", " hep-th ", "physics:quant-ph", "stat.ML"}, []string{"Graph Networks"})
	require.NoError(t, err)
	require.Equal(t, []string{"cs", "physics:hep-th", "physics:quant-ph", "stat"}, w.sets)
	keeps := func(cats, sets []string, title string) bool {
		return w.keeps(&oaiPaper{Paper: paper.Paper{Title: title, Categories: cats}, sets: sets})
	}
	require.True(t, keeps([]string{"cs.AI"}, []string{"cs"}, "x"))
	require.True(t, keeps([]string{"math.CO", "cs.lg"}, []string{"math", "cs"}, "x"))
	require.False(t, keeps([]string{"cs.CL"}, []string{"cs"}, "x"))
	require.True(t, keeps([]string{"cs.CL"}, []string{"cs"}, "Networks of graph neurons"), "topic words in any order")
	require.False(t, keeps([]string{"cs.CL"}, []string{"cs"}, "Graph theory"))
	require.True(t, keeps([]string{"hep-th"}, []string{"physics:hep-th"}, "x"))
	require.True(t, keeps([]string{"quant-ph"}, []string{"physics:quant-ph"}, "x"))

	for _, bad := range []string{"cs AI", "CS.AI", "physics:", "cs.AI;drop"} {
		_, err := parseWant([]string{bad}, nil)
		require.ErrorIs(t, err, protocol.ErrBadRequest, bad)
	}
}

// fakeOAI serves the recorded arXivRaw records as a repository: ListRecords by set
// (two records a chunk, the token is the offset), GetRecord by identifier, and the
// recorded error answers. The counter counts its requests.
func fakeOAI(t *testing.T, dir string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	type record struct {
		id   string
		sets []string
		xml  string
	}
	idRE := regexp.MustCompile(`<identifier>oai:arXiv.org:(.*?)</identifier>`)
	setRE := regexp.MustCompile(`<setSpec>(.*?)</setSpec>`)
	var pool []record
	for _, f := range []string{"oai_listrecords_arxivraw_with_resumptiontoken.xml", "oai_getrecord_arxivraw_1302.2146.xml"} {
		for _, r := range recordRE.FindAllString(string(plugintest.ReadFixture(t, dir, f)), -1) {
			rec := record{id: idRE.FindStringSubmatch(r)[1], xml: r}
			for _, m := range setRE.FindAllStringSubmatch(r, -1) {
				rec.sets = append(rec.sets, m[1])
			}
			pool = append(pool, rec)
		}
	}
	noRecords := plugintest.ReadFixture(t, dir, "oai_error_noRecordsMatch.xml")
	noID := plugintest.ReadFixture(t, dir, "oai_error_idDoesNotExist.xml")
	badToken := plugintest.ReadFixture(t, dir, "oai_error_badResumptionToken.xml")
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/xml")
		switch q.Get("verb") {
		case "GetRecord":
			for _, rec := range pool {
				if "oai:arXiv.org:"+rec.id == q.Get("identifier") {
					_, _ = fmt.Fprintf(w, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><GetRecord>%s</GetRecord></OAI-PMH>`, rec.xml)
					return
				}
			}
			_, _ = w.Write(noID)
		case "ListRecords":
			set, start := q.Get("set"), 0
			if tok := q.Get("resumptionToken"); tok != "" {
				s, off, ok := strings.Cut(tok, "|")
				n, err := strconv.Atoi(off)
				if !ok || err != nil {
					_, _ = w.Write(badToken)
					return
				}
				set, start = s, n
			}
			var hits []string
			for _, rec := range pool {
				if set == "" || inSet(rec.sets, set) {
					hits = append(hits, rec.xml)
				}
			}
			if len(hits) == 0 {
				_, _ = w.Write(noRecords)
				return
			}
			start = min(start, len(hits))
			end := min(start+2, len(hits))
			token := fmt.Sprintf(`<resumptionToken cursor="%d" completeListSize="%d"></resumptionToken>`, start, len(hits))
			if end < len(hits) {
				token = fmt.Sprintf(`<resumptionToken cursor="%d" completeListSize="%d">%s|%d</resumptionToken>`, start, len(hits), set, end)
			}
			_, _ = w.Write(chunk(token, hits[start:end]...))
		default:
			http.Error(w, "bad verb", http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestFakeOAIHarvest walks the fake repository the conformance run uses (whose
// Recent finds no records in the searched paper's categories): a set without
// records ends at once, and a harvest across four sets pages to its end with every
// record once.
func TestFakeOAIHarvest(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "arxiv")
	srv, _ := fakeOAI(t, dir)
	a := New(slog.New(slog.DiscardHandler))
	_, err := a.Configure(t.Context(), &protocol.ConfigureRequest{Settings: map[string]any{
		"oai_base_url": srv.URL + "/oai2", "rate_interval": "0s",
	}})
	require.NoError(t, err)
	var got []string
	cursor := ""
	for range 10 {
		page, err := a.Recent(t.Context(), &source.RecentRequest{Categories: []string{"physics"}, Cursor: cursor, PageSize: 2})
		require.NoError(t, err)
		got = append(got, ids(page.Papers)...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	require.Empty(t, cursor, "paging does not end")
	require.Empty(t, got, "no record is in physics:physics")

	got = nil
	for range 10 {
		page, err := a.Recent(t.Context(), &source.RecentRequest{Categories: []string{"nucl-th", "nucl-ex", "gr-qc", "hep-ph"}, Cursor: cursor, PageSize: 2})
		require.NoError(t, err)
		got = append(got, ids(page.Papers)...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	require.Empty(t, cursor, "paging does not end")
	require.ElementsMatch(t, []string{"0704.0471", "0704.1586", "0704.1109", "1302.2146"}, got) // 0704.0471 once, though in two sets
}
