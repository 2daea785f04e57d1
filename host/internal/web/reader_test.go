package web

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestReaderURL(t *testing.T) {
	t.Parallel()
	const p = "0b9d6c4e-0000-4000-8000-000000000001"
	const c = "5f1e2d3c-0000-4000-8000-000000000002"
	for _, tc := range []struct {
		name       string
		page       int
		passage    string
		start, end int
		q          string
		want       string
	}{
		{"page only", 3, "", 0, 0, "", "/papers/" + p + "/read?page=3"},
		{"no page opens the first", 0, "", 0, 0, "", "/papers/" + p + "/read?page=1"},
		{"passage with its cited words", 4, c, 10, 52, "", "/papers/" + p + "/read?page=4&passage=" + c + "&start=10&end=52"},
		{"passage, words not found", 4, c, 0, 0, "", "/papers/" + p + "/read?page=4&passage=" + c},
		{"an empty span is no span", 4, c, 7, 7, "", "/papers/" + p + "/read?page=4&passage=" + c},
		{"quoted words, spaces collapsed", 2, "", 0, 0, " com-\nplement  & more ", "/papers/" + p + "/read?page=2&q=com-+plement+%26+more"},
		{"a passage wins over words", 2, c, 0, 0, "ignored", "/papers/" + p + "/read?page=2&passage=" + c},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, ReaderURL(p, tc.page, tc.passage, tc.start, tc.end, tc.q))
		})
	}
	page := 5
	require.Equal(t, "/papers/"+p+"/read?page=5&q=the+quote", quoteURL(p, &page, "the quote"))
	require.Empty(t, quoteURL(p, nil, "the quote"), "a quote found nowhere links nowhere")
	require.Equal(t, "/papers/"+p+"/read?page=2&passage="+c+"&start=1&end=9",
		citeURL(citation{PaperID: p, ChunkID: c, Page: 2, Start: 1, End: 9}))
}

func TestOutlineSections(t *testing.T) {
	t.Parallel()
	items := []outlineEntry{
		{ChunkID: "a", PageStart: 1, Preview: "Title"},
		{ChunkID: "b", Section: "1 Introduction", PageStart: 1},
		{ChunkID: "c", Section: "1 Introduction", PageStart: 2},
		{ChunkID: "d", Section: "2 Method", PageStart: 2},
		{ChunkID: "e", Section: "1 Introduction", PageStart: 9},
	}
	got := outlineSections("p", items, "c")
	require.Len(t, got, 4, "a section starts where the heading changes, even back to an earlier one")
	require.Equal(t, []string{"Front matter", "1 Introduction", "2 Method", "1 Introduction"},
		[]string{got[0].Title, got[1].Title, got[2].Title, got[3].Title})
	require.Len(t, got[1].Passages, 2)
	require.True(t, got[1].Current, "the section of the cited passage is open")
	require.True(t, got[1].Passages[1].Current)
	require.False(t, got[2].Current)
	require.Equal(t, "/papers/p/read?page=2&passage=c", got[1].Passages[1].URL)
	require.Equal(t, 2, got[2].Page)
}

// Built without pdf.js (a plain go build), the reader says so in a sentence and
// offers the PDF as a download; built with it, the page loads the viewer.
func TestReaderWithoutTheViewer(t *testing.T) {
	t.Parallel()
	rd, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	show := func(viewer string) string {
		rec := httptest.NewRecorder()
		d := &readerData{Paper: paper{ID: "p1", Title: "A paper"}, Page: 4, PageEnd: 4, HasPDF: true, Viewer: viewer, Cited: "the cited words"}
		rd.render(rec, httptest.NewRequest(http.MethodGet, "/papers/p1/read?page=4", nil), http.StatusOK, "reader",
			&view{Title: "A paper", Me: &me{Email: "ada@example.org"}, Data: d})
		require.Equal(t, http.StatusOK, rec.Code)
		return rec.Body.String()
	}
	body := show("")
	require.Contains(t, body, "The PDF viewer is not built into this Lectern")
	require.Contains(t, body, "<code>make build</code>")
	require.Contains(t, body, `href="/api/papers/p1/pdf" download`)
	require.Contains(t, body, "open it at page 4")
	require.NotContains(t, body, "/static/reader.js")
	require.NotContains(t, body, "data-viewer=")
	require.Contains(t, body, "the cited words", "the cited words are shown either way")

	body = show("6.5.438")
	require.NotContains(t, body, "not built")
	require.Contains(t, body, `data-viewer="/static/vendor/pdfjs/"`)
	require.Contains(t, body, `<script type="module" src="/static/reader.js">`)
}

var readerLink = regexp.MustCompile(`href="(/papers/[0-9a-f-]+/read\?[^"]+)"`)

// Without JavaScript: an answer's citations link to the reader at the cited page
// with the passage and the cited words' offsets; the reader page names those words
// and lists the passages by section. Bad links, papers without a PDF, another
// user's private paper and a missing one each get a clear page, never a 5xx, and
// the last two the same one.
func TestReaderPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ada := s.browser(t)
	p := ada.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = ada.upload("/onboarding/upload", "spaced.pdf", samplePDF("Spaced Repetition for Readers", paperPages))
	require.Equal(t, http.StatusOK, p.status, p.body)
	paperPath := strings.SplitN(p.url, "?", 2)[0]
	paperID := strings.TrimPrefix(paperPath, "/papers/")
	require.Eventually(t, func() bool {
		return strings.Contains(ada.get(p.url).body, `data-state="succeeded"`)
	}, 60*time.Second, 300*time.Millisecond, "the reading job finishes")
	require.Contains(t, ada.get(paperPath).body, `href="`+paperPath+`/read?page=1"`, "the paper page opens the reader")

	p = ada.post(paperPath+"/ask", url.Values{"question": {"What did the students on the adaptive schedule spend less time on?"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	m := readerLink.FindStringSubmatch(between(p.body, `<div class="answer-text">`, `</div>`))
	require.NotNil(t, m, "the [S1] marker links to the reader: %s", p.body)
	link := html.UnescapeString(m[1])
	u, err := url.Parse(link)
	require.NoError(t, err)
	require.Equal(t, paperPath+"/read", u.Path)
	require.Equal(t, "3", u.Query().Get("page"), "the cited words are on page 3")
	require.NotEmpty(t, u.Query().Get("passage"))
	require.NotEmpty(t, u.Query().Get("end"), "the cited words were found in the passage")
	require.Contains(t, between(p.body, `<ol class="citations">`, `</ol>`), html.EscapeString(link), "the source list links there too")

	p = ada.get(link)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `data-page="3"`)
	cited := between(p.body, "<blockquote>", "</blockquote>")
	require.Contains(t, cited, "spent less time reviewing", "the page names the cited words")
	require.Contains(t, p.body, `data-cited="`+cited+`"`)
	toc := between(p.body, `<ol class="toc">`, `</aside>`)
	for _, sec := range []string{"2 Method", "3 Results", "4 Conclusion"} {
		require.Contains(t, toc, sec, "the contents list the sections")
	}
	require.Contains(t, toc, `aria-current="location"`, "the cited passage is marked in the contents")
	if pdfjsVersion() != "" {
		require.Contains(t, p.body, `data-viewer="/static/vendor/pdfjs/"`)
	}
	q := ada.get(paperPath + "/read?page=2&q=" + url.QueryEscape("adaptive schedule"))
	require.Equal(t, http.StatusOK, q.status)
	require.Contains(t, q.body, `data-cited="adaptive schedule"`)
	require.Contains(t, q.body, "Quoted words, page 2")

	// A summary's findings and the extracted claims link to the page their quote
	// was found on, with the quote's words to highlight.
	for _, job := range []string{"/summary", "/extract"} {
		p = ada.post(paperPath+job, nil)
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Eventually(t, func() bool {
			p = ada.get(p.url)
			return !strings.Contains(p.body, `data-state="running"`) && !strings.Contains(p.body, `data-state="queued"`)
		}, 60*time.Second, 300*time.Millisecond, "the %s job finishes", job)
	}
	for _, list := range []string{`<ul class="findings">`, `<ul class="extractions">`} {
		items := between(p.body, list, "</ul>")
		m := regexp.MustCompile(`<a class="read-at" href="([^"]+)">page (\d+) in the PDF</a>`).FindStringSubmatch(items)
		require.NotNil(t, m, "%s links its quotes to the reader: %s", list, items)
		qu, err := url.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		require.Equal(t, paperPath+"/read", qu.Path)
		require.Equal(t, m[2], qu.Query().Get("page"))
		require.NotEmpty(t, qu.Query().Get("q"), "the quote's words are highlighted")
		require.Contains(t, items, html.EscapeString(qu.Query().Get("q")), "the words of the quote shown")
	}

	for _, bad := range []string{"?page=abc", "?page=0", "?page=2&passage=nope", "?page=2&passage=" + uuid.NewString() + "&start=9&end=2",
		"?page=2&start=x&end=3", "?page=1&q=" + strings.Repeat("word+", 500)} {
		p = ada.get(paperPath + "/read" + bad)
		require.Equal(t, http.StatusBadRequest, p.status, bad)
		require.Contains(t, p.body, "Open the paper from your library and follow its citation again.", bad)
	}
	p = ada.get(paperPath + "/read?page=2&passage=" + uuid.NewString())
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, "The cited passage is no longer part of this paper")

	// A paper known only by its record.
	var bare string
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`INSERT INTO papers (title, source, visibility, pdf_url) VALUES ('Only a record', 'manual', 'public', 'https://example.org/x.pdf') RETURNING id::text`).Scan(&bare))
	p = ada.get("/papers/" + bare + "/read?page=1")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Lectern has no PDF of this paper")
	require.NotContains(t, p.body, "/static/reader.js")

	// Bob: Ada's private upload is exactly as missing as a paper that does not exist.
	require.Equal(t, http.StatusCreated, ada.apiJSON(http.MethodPost, "/api/admin/users", map[string]any{"email": "bob@example.org", "role": "user"}, nil))
	bob := s.signInInvited(t, "bob@example.org")
	missing := uuid.NewString()
	theirs, none := bob.get("/papers/"+paperID+"/read?page=3"), bob.get("/papers/"+missing+"/read?page=3")
	require.Equal(t, http.StatusNotFound, theirs.status)
	require.Equal(t, none.status, theirs.status)
	require.Equal(t, strings.ReplaceAll(between(none.body, "<main", "</main>"), missing, "ID"),
		strings.ReplaceAll(between(theirs.body, "<main", "</main>"), paperID, "ID"), "the same page for both")
	require.NotContains(t, theirs.body, "Spaced Repetition for Readers")
	p = bob.get(link)
	require.Equal(t, http.StatusNotFound, p.status)
	require.NotContains(t, p.body, "spent less time reviewing")

	// A duplicate merged into Ada's paper (papers.MergeTx records where it went):
	// Ada's old links reach the same page of the survivor; for Bob the old id is as
	// missing as before.
	merged := uuid.NewString()
	_, err = s.pool.Exec(context.Background(), `INSERT INTO paper_redirects (from_id, to_id) VALUES ($1, $2)`, merged, paperID)
	require.NoError(t, err)
	p = ada.get("/papers/" + merged + "/read?page=3&q=spaced")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/papers/"+paperID+"/read?page=3&q=spaced", strings.TrimPrefix(p.url, s.dash.URL))
	p = ada.get("/papers/" + merged)
	require.Equal(t, "/papers/"+paperID, strings.TrimPrefix(p.url, s.dash.URL))
	require.Contains(t, p.body, "Spaced Repetition for Readers")
	p = bob.get("/papers/" + merged)
	require.Equal(t, http.StatusNotFound, p.status)
	require.NotContains(t, p.body, paperID)
}
