package web

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNiceMax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want int }{{0, 2}, {1, 2}, {2, 2}, {3, 4}, {7, 8}, {10, 10}, {11, 20}, {19, 20}, {21, 40}, {99, 100}, {101, 200}, {730, 800}} {
		t.Run(itoa(int64(tc.in)), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, niceMax(tc.in))
		})
	}
}

func TestBarChartLaysOutOneBarPerDay(t *testing.T) {
	t.Parallel()
	days := []dayCount{{Date: "2026-03-01", Reviews: 0}, {Date: "2026-03-02", Reviews: 5}, {Date: "2026-03-03", Reviews: 10}}
	c := newBarChart("Reviews", "desc", "reviews", days, func(d dayCount) int { return d.Reviews })
	require.Len(t, c.Bars, 3)
	require.False(t, c.Empty)
	require.Equal(t, 0.0, c.Bars[0].H)
	require.InDelta(t, chartBottom-chartTop, c.Bars[2].H, 0.1, "the largest bar reaches the top tick")
	require.InDelta(t, c.Bars[2].H/2, c.Bars[1].H, 0.1)
	require.Equal(t, "3 Mar: 10 reviews", c.Bars[2].Label)
	require.Equal(t, []string{"0", "5", "10"}, []string{c.Ticks[0].Label, c.Ticks[1].Label, c.Ticks[2].Label})
	require.True(t, newBarChart("x", "", "", nil, func(dayCount) int { return 0 }).Empty)
}

func TestHumanErrorNeverShowsRawText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		what string
	}{
		{"known code", &apiError{Status: 409, Code: "already_onboarded", Detail: "x"}, "This Lectern already has its admin."},
		{"validation keeps the API's sentence", &apiError{Status: 422, Code: "validation_error", Detail: "The email address is not valid."}, "The email address is not valid."},
		{"server error", &apiError{Status: 500, Code: "internal_error", Detail: "pq: relation does not exist", RequestID: "r1"}, "Something went wrong on the server."},
		{"unreachable", &apiError{Code: "unreachable", Cause: errors.New("dial tcp: connection refused")}, "The dashboard cannot reach the Lectern API."},
		{"not an API error", errors.New("template: boom"), "Something went wrong in the dashboard."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ue := humanError(tc.err)
			require.Equal(t, tc.what, ue.What)
			require.NotEmpty(t, ue.Do)
			require.NotContains(t, ue.What+ue.Do, "pq:")
			require.NotContains(t, ue.What+ue.Do, "dial tcp")
		})
	}
}

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"/library": true, "/papers/x?job=1": true, "//evil.example": false,
		"https://evil.example/": false, "/\\evil": false, "": false, "library": false} {
		require.Equal(t, want, localPath(in), in)
	}
}

func TestCiteHTMLEscapesAndLinksKnownMarkers(t *testing.T) {
	t.Parallel()
	got := citeHTML("<b>x</b> [S4] and [S9]", []citation{{Number: 1, Marker: "S4", PaperID: "p1", ChunkID: "c1", Page: 3, Start: 4, End: 20, Title: `A "title" <b>`}})
	require.Equal(t, `&lt;b&gt;x&lt;/b&gt; <a class="cite" href="/papers/p1/read?page=3&amp;passage=c1&amp;start=4&amp;end=20" title="A &#34;title&#34; &lt;b&gt;, page 3">[1]</a> and [S9]`, string(got),
		"a known marker opens the reader at the cited words, shown as its source's number")
}

func TestCiteHTMLKeepsParagraphsAndJoinsPDFLines(t *testing.T) {
	t.Parallel()
	got := citeHTML("According to the documents:\n\n\"Once they became responsible\nfor their own regulation\" [S1]", []citation{{Number: 1, Marker: "S1", PaperID: "p1", ChunkID: "c1", Page: 2}})
	require.Equal(t, `According to the documents:<br><br>&#34;Once they became responsible for their own regulation&#34; <a class="cite" href="/papers/p1/read?page=2&amp;passage=c1" title="Untitled paper, page 2">[1]</a>`, string(got))
}

func TestEveryTemplateIsRegistered(t *testing.T) {
	t.Parallel()
	r, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Len(t, r.pages, len(pages))
}

// TestHandlerTransportStreamsAndPassesThePeer: the in-process transport gives the
// handler the browser's address and streams flushed writes at once.
func TestHandlerTransportStreamsAndPassesThePeer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "peer "+r.RemoteAddr+" host "+r.Host+"\n")
		http.NewResponseController(w).Flush()
		<-release
		_, _ = io.WriteString(w, "end\n")
	})
	req, err := http.NewRequest(http.MethodGet, "http://lectern.test/api/x", nil)
	require.NoError(t, err)
	req.RemoteAddr = "203.0.113.9:5555"
	resp, err := handlerTransport{handler: h}.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "peer 203.0.113.9:5555 host lectern.test\n", line, "the first event arrives before the handler ends")
	close(release)
	rest, err := io.ReadAll(rd)
	require.NoError(t, err)
	require.Equal(t, "end\n", string(rest))
}

// TestAPIUnreachableIsExplained: a dashboard whose API is down says so in words.
func TestAPIUnreachableIsExplained(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("http://127.0.0.1:1")
	require.NoError(t, err)
	w, err := New(Config{APIURL: u})
	require.NoError(t, err)
	srv := newTestServer(t, w)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, srv+"/library", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "x"})
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.Contains(t, string(raw), "The dashboard cannot reach the Lectern API.")
	require.NotContains(t, string(raw), "connection refused")
}

func TestFillDaysShowsEveryDay(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 2, 27, 0, 0, 0, 0, time.UTC)
	got := fillDays([]dayCount{{Date: "2026-03-01", Reviews: 4}}, start, 4)
	require.Equal(t, []dayCount{{Date: "2026-02-27"}, {Date: "2026-02-28"}, {Date: "2026-03-01", Reviews: 4}, {Date: "2026-03-02"}}, got)
}

func TestPassagePartsCutTheSnippetAtItsHighlights(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		snippet    string
		highlights [][2]int
		want       []snippetPart
	}{
		{"none", "plain", nil, []snippetPart{{Text: "plain"}}},
		{"two words", "a <b> spaced repetition", [][2]int{{6, 12}, {13, 23}},
			[]snippetPart{{Text: "a <b> "}, {Text: "spaced", Mark: true}, {Text: " "}, {Text: "repetition", Mark: true}}},
		{"bad offsets ignored", "é word", [][2]int{{1, 3}, {3, 7}, {2, 9}, {0, 0}},
			[]snippetPart{{Text: "é "}, {Text: "word", Mark: true}}},
		{"overlap ignored", "abcdef", [][2]int{{0, 3}, {2, 4}},
			[]snippetPart{{Text: "abc", Mark: true}, {Text: "def"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, passage{Snippet: tc.snippet, Highlights: tc.highlights}.Parts())
		})
	}
}
