package web

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The tests here hold the dashboard to "errors speak to people" (issue 14, item
// 10): a failure never shows as a success, a used or expired sign-in link gets a
// page with a way on, a PDF that cannot be read lands on its reason, an answer the
// builtin method gave in place of a failed model says so, and no raw network text
// reaches a page.

// getHTML opens path as a browser does when it follows a link: asking for HTML.
func (b *browser) getHTML(path string) (page, http.Header) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	require.NoError(b.t, err)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Sec-Fetch-Site", "none")
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return page{status: resp.StatusCode, url: resp.Request.URL.RequestURI(), body: string(raw)}, resp.Header
}

// flashText is the text of the page's success banner, or "".
func flashText(body string) string { return between(body, `<p class="flash" role="status">`, `</p>`) }

// errorText is the text of the page's error banner, or "".
func errorText(body string) string {
	return between(body, `<div class="error" role="alert" id="error" tabindex="-1">`, `</div>`)
}

// TestFailuresSpeakToPeople walks the failures a researcher meets in the first hour,
// without JavaScript, against the dashboard as lectern dashboard runs it and as
// lectern serve runs it.
func TestFailuresSpeakToPeople(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name      string
		inProcess bool
	}{{"standalone", false}, {"in-process", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			s := newStackMode(t, mode.inProcess)
			admin := s.browser(t)
			p := admin.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
			require.Equal(t, http.StatusOK, p.status, p.body)

			t.Run("used sign-in link", func(t *testing.T) { usedSignInLink(t, s) })
			t.Run("damaged upload", func(t *testing.T) { damagedUpload(t, admin) })
			t.Run("banners follow the outcome", func(t *testing.T) { bannersFollowOutcome(t, s, admin) })
		})
	}
}

// usedSignInLink: a mailed link works once; opened again in a browser it explains
// itself on a page with a form for a new link, not in JSON.
func usedSignInLink(t *testing.T, s *stack) {
	first := s.browser(t)
	p := first.post("/signin/link", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	link := strings.TrimPrefix(s.mail.link(t, "ada@example.org"), s.dash.URL)
	require.True(t, strings.HasPrefix(link, verifyPath+"?token="), link)

	p, _ = first.getHTML(link)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/library", p.url, "the link signs in and opens the library")
	require.Equal(t, "You are signed in.", flashText(p.body))

	// The same link in another browser: it was used.
	other := s.browser(t)
	p, h := other.getHTML(link)
	require.Equal(t, http.StatusBadRequest, p.status, p.body)
	require.Contains(t, h.Get("Content-Type"), "text/html", "a page, not the API's JSON")
	require.NotContains(t, p.body, `"code"`)
	require.Contains(t, p.body, "<h1>This sign-in link no longer works</h1>")
	require.Contains(t, errorText(p.body), "This sign-in link has expired or was used already.")
	require.Contains(t, p.body, `action="/signin/link"`, "the page offers a new link")
	p = other.post("/signin/link", url.Values{"email": {"ada@example.org"}})
	require.Contains(t, p.body, "Check your mail", "the form on that page sends a new link")

	// An expired link reads the same; a made-up one too.
	p, _ = other.getHTML(verifyPath + "?token=" + strings.Repeat("x", 43))
	require.Equal(t, http.StatusBadRequest, p.status, p.body)
	require.Contains(t, errorText(p.body), "expired or was used already")

	// The browser that used it is signed in already and is told so.
	p, _ = first.getHTML(link)
	require.Equal(t, "/library", p.url, p.body)
	require.Equal(t, "This sign-in link was used already; you are signed in.", flashText(p.body))

	// API clients still get the API's own answer.
	var body struct{ Code string }
	require.Equal(t, http.StatusBadRequest, other.apiJSON(http.MethodGet, link, nil, &body))
	require.Equal(t, "invalid_token", body.Code)
}

// damagedUpload: a PDF cut short is refused by its reading job, which deletes the
// paper; the page the upload leads to shows the job's reason and a way to upload
// again, instead of "Paper not found".
func damagedUpload(t *testing.T, b *browser) {
	good := samplePDF("Cut short", paperPages)
	p := b.upload("/papers/upload", "cut-short.pdf", good[:len(good)/2])
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.True(t, strings.HasPrefix(p.url, "/papers/") && strings.Contains(p.url, "?job="), p.url)
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return !strings.Contains(p.body, `data-state="running"`) && !strings.Contains(p.body, `data-state="queued"`)
	}, 60*time.Second, 200*time.Millisecond, "the reading job ends")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.NotContains(t, p.body, "Paper not found")
	require.Contains(t, p.body, "<h1>The PDF could not be read</h1>")
	require.Contains(t, errorText(p.body), "The PDF is damaged or cut short; upload it again or use another copy.")
	require.Contains(t, p.body, `action="/papers/upload"`, "the page offers to upload again")
	require.Empty(t, flashText(p.body), "no success banner next to the failure")
	require.NotContains(t, p.body, `href="/papers/`+strings.TrimPrefix(strings.SplitN(p.url, "?", 2)[0], "/papers/")+`"`,
		"no link to the paper that is gone")

	// The job's own page offers the same.
	jobID := strings.SplitN(p.url, "job=", 2)[1]
	p = b.get("/jobs/" + jobID)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "The PDF is damaged or cut short")
	require.Contains(t, p.body, `action="/papers/upload"`)
}

// bannersFollowOutcome: after a form, what succeeded shows as a success and what
// failed as an error, never the other way round.
func bannersFollowOutcome(t *testing.T, s *stack, b *browser) {
	// An invitation the mail server cannot deliver: the account is made (success),
	// the mail is not (error), and no network text shows.
	s.mail.setDown(true)
	p := b.post("/admin/users", url.Values{"email": {"cy@example.org"}, "role": {"user"}})
	s.mail.setDown(false)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/admin/users", p.url)
	require.Equal(t, "The account of cy@example.org is created.", flashText(p.body))
	require.Contains(t, errorText(p.body), "The invitation to cy@example.org could not be mailed.")
	require.Contains(t, errorText(p.body), "Send link")
	require.NotContains(t, p.body, "dial tcp")
	require.NotContains(t, p.body, "no such host")

	// A working invitation is a plain success.
	p = b.post("/admin/users", url.Values{"email": {"di@example.org"}, "role": {"user"}})
	require.Equal(t, "The account of di@example.org is created and an invitation is on its way.", flashText(p.body))
	require.Empty(t, errorText(p.body))

	// A refused form is shown again with the error and no success banner.
	p = b.post("/admin/users", url.Values{"email": {"di@example.org"}, "role": {"user"}})
	require.Equal(t, http.StatusConflict, p.status, p.body)
	require.Empty(t, flashText(p.body))
	require.NotEmpty(t, errorText(p.body))

	// A failed button action (cancelling a finished job) is an error banner.
	var jobs jobPage
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/jobs?limit=5", nil, &jobs))
	require.NotEmpty(t, jobs.Jobs)
	j := jobs.Jobs[0]
	require.False(t, j.Active(), "the damaged upload's job has ended")
	p = b.post(fmt.Sprintf("/jobs/%d/cancel", j.ID), nil)
	require.Empty(t, flashText(p.body))
	require.Contains(t, errorText(p.body), "The job has already finished.")

	// The review page names only a rating it knows: text in its address is not a
	// banner.
	p = b.get("/review?rated=3")
	require.Equal(t, "Good recorded.", flashText(p.body))
	p = b.get("/review?rated=9&last=" + url.QueryEscape("Your account is locked; call +1 555 0100"))
	require.Empty(t, flashText(p.body))
	require.NotContains(t, p.body, "Your account is locked")
}

// fallbackAPI stands in for the API's answer route until the API reports a model
// fallback (issue 14, the API half of item 10): a signed-in admin, no projects, and
// an answer whose done event is done.
func fallbackAPI(done string) http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /api/me", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"id":"u1","email":"ada@example.org","role":"admin"}`)
	})
	api.HandleFunc("GET /api/projects", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"items":[]}`) })
	api.HandleFunc("POST /api/rag/ask", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: token\ndata: {\"text\":\"Students on the adaptive schedule spent less time reviewing [S1].\"}\n\n"+
			"event: citations\ndata: {\"citations\":[{\"marker\":\"S1\",\"paper_id\":\"p1\",\"title\":\"Spaced Repetition for Readers\",\"page\":3}]}\n\n"+
			"event: done\ndata: "+done+"\n\n")
	})
	return api
}

// fallbackDone is a done event of an answer the builtin method gave because the
// model assigned to answers could not be reached.
// Its shape is rag.Fallback's.
const fallbackDone = `{"method":"extractive","answered":true,"fallback":{"role":"answer","provider":"custom_compatible",` +
	`"model":"llama3","endpoint":"10.0.0.9","reason":"the endpoint could not be reached",` +
	`"message":"The model assigned to the answer role (custom_compatible at 10.0.0.9) could not answer: the endpoint could not be reached. This answer comes from the builtin extractive method instead."}}`

// fallbackNote is what the answer page shows for fallbackDone.
const fallbackNote = "The model assigned to the answer role (custom_compatible at 10.0.0.9) could not answer: the endpoint could not be reached. This answer comes from the builtin extractive method instead."

// TestAnswerSaysWhyTheBuiltinMethodAnswered: when the API reports that the model
// assigned to answers failed and the builtin method answered, the answer page names
// the role, the provider and endpoint and the reason.
func TestAnswerSaysWhyTheBuiltinMethodAnswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		done string
		want []string
	}{
		{"object", fallbackDone, []string{fallbackNote}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(newTestServer(t, fallbackAPI(tc.done)))
			require.NoError(t, err)
			w, err := New(Config{APIURL: u})
			require.NoError(t, err)
			form := url.Values{"question": {"Does spacing help?"}, "scope": {"library"}}
			req := httptest.NewRequest(http.MethodPost, "/ask", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "s"})
			rec := httptest.NewRecorder()
			w.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			body := rec.Body.String()
			require.Contains(t, body, "data-answer-fallback")
			for _, want := range tc.want {
				require.Contains(t, body, want)
			}
			require.NotContains(t, body, "Quoted from the papers by the builtin extractive method", "the fallback note replaces the plain one")
		})
	}
}

// TestRawErrorTextStaysOffPages: a source's or a plugin's own failure text (DNS,
// dial, exec errors) is never shown; a sentence is.
func TestRawErrorTextStaysOffPages(t *testing.T) {
	t.Parallel()
	rd, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	raw := "dial tcp: lookup export.arxiv.org on 127.0.0.53:53: no such host"
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		page string
		data any
		want string
	}{
		{"search", &searchData{Query: "x", Mode: "sources", Result: &searchResponse{Partial: true,
			Sources: []sourceReport{{Name: "arxiv", Status: "failed", Error: raw}, {Name: "openalex", Status: "timeout", Error: "context deadline exceeded"}}}},
			"The source could not be reached; try again later."},
		{"admin_plugins", &pluginsData{Plugins: []pluginInfo{{Name: "source.arxiv", State: "failed", LastError: raw, LastErrorAt: &at}}},
			"Last failure 1 Mar 2026 10:00 UTC; the server log has the reason."},
	} {
		t.Run(tc.page, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			rd.render(rec, httptest.NewRequest(http.MethodGet, "/", nil), http.StatusOK, tc.page, &view{Me: &me{Role: "admin"}, Data: tc.data})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Contains(t, rec.Body.String(), tc.want)
			require.NotContains(t, rec.Body.String(), "dial tcp")
			require.NotContains(t, rec.Body.String(), "deadline exceeded")
		})
	}
}

// TestFlashNeverShowsAFailureAsSuccess: the flash cookie keeps a success and its
// failure apart, and a page showing a failure of its own drops an earlier success.
func TestFlashNeverShowsAFailureAsSuccess(t *testing.T) {
	t.Parallel()
	rd, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	carry := func(set func(http.ResponseWriter)) *http.Cookie {
		rec := httptest.NewRecorder()
		set(rec)
		cks := rec.Result().Cookies()
		require.Len(t, cks, 1)
		return cks[0]
	}
	show := func(ck *http.Cookie, v *view) string {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.AddCookie(ck)
		rec := httptest.NewRecorder()
		rd.render(rec, req, http.StatusOK, "error", v)
		return rec.Body.String()
	}

	mixed := carry(func(w http.ResponseWriter) {
		setFlashMixed(w, "The account is created.", &uiError{What: "The invitation could not be mailed.", Do: "Check the mail settings.\nThen resend."})
	})
	body := show(mixed, &view{})
	require.Equal(t, "The account is created.", flashText(body))
	require.Contains(t, errorText(body), "The invitation could not be mailed.")
	require.Contains(t, errorText(body), "Then resend.", "a line break in a message does not lose it")

	ok := carry(func(w http.ResponseWriter) { setFlash(w, "The PDF is uploaded; Lectern is reading it.") })
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(ok)
	rec := httptest.NewRecorder()
	rd.render(rec, req, http.StatusOK, "error", &view{Err: &uiError{What: "The PDF is damaged or cut short."}})
	body = rec.Body.String()
	require.Empty(t, flashText(body), "a page with a failure shows no earlier success")
	cleared := rec.Result().Cookies()
	require.Len(t, cleared, 1, "nor keeps it for the next page")
	require.Equal(t, flashCookie, cleared[0].Name)
	require.Negative(t, cleared[0].MaxAge)
	require.Contains(t, errorText(body), "The PDF is damaged or cut short.")

	failed := carry(func(w http.ResponseWriter) {
		setFlashError(w, &uiError{What: "The job has already finished.", Do: "Nothing to cancel."})
	})
	body = show(failed, &view{})
	require.Empty(t, flashText(body))
	require.Contains(t, errorText(body), "The job has already finished.")
}

func TestCancelMessageSaysWhetherTheJobStopped(t *testing.T) {
	t.Parallel()
	require.Equal(t, "The job is cancelled.", cancelMessage(job{State: "cancelled"}))
	require.Equal(t, "Lectern is stopping the job; it stops at its next step.", cancelMessage(job{State: "running", CancelRequested: true}))
}
