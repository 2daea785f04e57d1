package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlowWithoutJavaScript walks the Done-when flow as a browser without
// JavaScript: onboarding, upload, the reading job to completion, a question with a
// cited answer, a card and its review.
func TestFlowWithoutJavaScript(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)

	p := b.get("/")
	require.Equal(t, "/onboarding", p.url, "a fresh instance opens the onboarding wizard (GET /api/onboarding)")
	require.Contains(t, p.body, `action="/onboarding/admin"`)
	p = b.post("/onboarding/admin", url.Values{"email": {"not an address"}})
	require.Equal(t, http.StatusUnprocessableEntity, p.status)
	require.Contains(t, p.body, `value="not an address"`, "the rejected form keeps what was typed")
	require.Contains(t, p.body, "The email address is not valid.")
	p = b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/onboarding?step=llm", p.url)
	require.Contains(t, p.body, "ada@example.org", "the wizard goes on signed in")

	p = b.upload("/onboarding/upload", "spaced.pdf", samplePDF("Spaced Repetition for Readers", paperPages))
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.True(t, strings.HasPrefix(p.url, "/papers/"), p.url)
	paperPath := strings.SplitN(p.url, "?", 2)[0]
	require.Contains(t, p.body, "<progress")
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return strings.Contains(p.body, `data-state="succeeded"`)
	}, 60*time.Second, 300*time.Millisecond, "the reading job finishes")

	p = b.post(paperPath+"/ask", url.Values{"question": {"What did the students on the adaptive schedule spend less time on?"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `class="cite"`, "the answer cites its sources")
	require.Contains(t, p.body, `id="cite-S1"`)

	// Summary and extraction: a job each, then the page shows the result, with the
	// quotes marked as verified or not.
	p = b.post(paperPath+"/summary", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return !strings.Contains(p.body, `data-state="running"`) && !strings.Contains(p.body, `data-state="queued"`)
	}, 60*time.Second, 300*time.Millisecond, "the summary job finishes")
	require.NotContains(t, p.body, "No summary yet.", p.body)
	p = b.post(paperPath+"/extract", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return !strings.Contains(p.body, `data-state="running"`) && !strings.Contains(p.body, `data-state="queued"`)
	}, 60*time.Second, 300*time.Millisecond, "the extraction job finishes")
	require.Contains(t, p.body, `class="extractions"`, "the extraction lists what it found")
	require.Regexp(t, `<span class="badge (verified|unverified|failed)">quote`, p.body)
	ext := between(p.body, `class="extractions"`, `</ul>`)
	require.Regexp(t, `quote found on page \d+`, ext, "a verified quote says where it was found")
	require.NotContains(t, ext, "quote verified", "the badge names the page, not a bare verdict")

	p = b.post(paperPath+"/cards", url.Values{"front": {"What flattens the forgetting curve?"}, "back": {"A successful review"}, "new_deck": {"Reading"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	// Drafted cards wait on the paper page to be accepted.
	p = b.post(paperPath+"/cards/draft", url.Values{"deck_id": {""}, "new_deck": {"Reading"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Eventually(t, func() bool {
		p = b.get(strings.SplitN(p.url, "#", 2)[0])
		return strings.Contains(p.body, "Drafts waiting for you")
	}, 60*time.Second, 300*time.Millisecond, "drafted cards appear")
	draft := between(p.body, `<form method="post" action="/cards/`, `/accept"`)
	require.NotEmpty(t, draft)
	p = b.post("/cards/"+draft+"/accept", url.Values{"back": {paperPath + "#cards"}})
	require.Contains(t, p.body, "The card is accepted.")

	p = b.get("/review")
	require.Contains(t, p.body, "What flattens the forgetting curve?")
	require.Contains(t, p.body, `data-key="3"`)
	reveal := strings.Index(p.body, `<details class="reveal"`)
	require.Positive(t, reveal)
	require.Less(t, reveal, strings.Index(p.body, `data-key="3"`), "without JavaScript the ratings too wait behind Show answer")
	require.Greater(t, strings.Index(p.body, "</details>"), strings.Index(p.body, `data-key="4"`))
	card := between(p.body, `name="card_id" value="`, `"`)
	client := between(p.body, `name="client_id" value="`, `"`)
	p = b.post("/review", url.Values{"card_id": {card}, "rating": {"3"}, "client_id": {client}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Good recorded.")
	require.Contains(t, p.body, `action="/review/undo"`, "the rating can be undone")
	// The same form sent again (the page brought back and submitted) records
	// nothing twice and offers the undo instead.
	p = b.post("/review", url.Values{"card_id": {card}, "rating": {"1"}, "client_id": {client}})
	require.Contains(t, p.body, "This card was rated already (Again). Undo that rating to rate it again.")
	review := between(p.body, `name="review_id" value="`, `"`)
	require.NotEmpty(t, review)
	p = b.post("/review/undo", url.Values{"review_id": {review}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "The rating is undone: rate the card again.")
	require.Equal(t, card, between(p.body, `name="card_id" value="`, `"`), "the card is asked again")
	p = b.post("/review", url.Values{"card_id": {card}, "rating": {"3"}, "client_id": {"web-flow-second"}})
	require.Contains(t, p.body, "Good recorded.")

	// The card browser and editor work without JavaScript.
	p = b.get("/cards?q=WHAT+FLATTENS") // in the written card only: drafts quote the paper, "The forgetting curve flattens ..."
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `href="/cards/`+card+`"`)
	require.NotContains(t, p.body, "<td><a href=\"/cards/"+draft+`"`, "the search keeps only matching cards")
	p = b.get("/cards/" + card)
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = b.post("/cards/"+card, url.Values{"front": {"  "}, "back": {"typed back"}, "tags": {"kept"}})
	require.Equal(t, http.StatusUnprocessableEntity, p.status, "an empty front is refused")
	require.Contains(t, p.body, "typed back", "and what was typed is kept")
	p = b.post("/cards/"+card, url.Values{"front": {"What flattens the forgetting curve?"}, "back": {"Each review"}, "tags": {"memory, fsrs"}})
	require.Contains(t, p.body, "The card is saved.")
	require.Contains(t, p.body, `value="memory fsrs"`)
	p = b.post("/cards/"+card+"/status", url.Values{"status": {"suspended"}})
	require.Contains(t, p.body, "The card is suspended")
	require.Contains(t, b.get("/cards?status=suspended").body, `href="/cards/`+card+`"`)
	p = b.post("/cards/"+card+"/status", url.Values{"status": {"active"}})
	require.Contains(t, p.body, "The card is active")
	require.Equal(t, http.StatusNotFound, b.get("/cards/"+"00000000-0000-4000-8000-000000000000").status)

	p = b.get("/search?q=flashcards")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Memory models for flashcard scheduling")
	require.Contains(t, p.body, `<span class="badge src-ok">ok</span>`, "each source's status is shown")

	p = b.get("/search?q=spaced+repetition&mode=passages")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "<mark>repetition</mark>", "the matched words are marked up, not quoted")
	require.NotContains(t, p.body, "«")
	require.NotContains(t, p.body, "»")

	for _, path := range []string{"/library", "/library?scope=corpus&view=inbox", "/jobs", "/analytics", "/projects", "/search?q=repetition&mode=passages",
		"/settings", "/settings/llm", "/admin/users", "/admin/audit", "/admin/plugins", "/ask"} {
		p = b.get(path)
		require.Equal(t, http.StatusOK, p.status, "%s: %s", path, p.body)
	}

	p = b.post("/settings/profile", url.Values{"display_name": {"Ada L."}, "timezone": {"Mars/Olympus_Mons"}})
	require.Equal(t, http.StatusUnprocessableEntity, p.status)
	require.Contains(t, p.body, `value="Mars/Olympus_Mons"`, "the rejected profile keeps what was typed")
	require.Contains(t, p.body, "not a time zone name")
	p = b.post("/settings/profile", url.Values{"display_name": {"Ada L."}, "timezone": {"Europe/Berlin"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/settings", p.url)
	require.Contains(t, p.body, `value="Europe/Berlin"`)
	require.Contains(t, p.body, `value="Ada L."`)
}

func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	j := strings.Index(s, end)
	if j < 0 {
		return ""
	}
	return s[:j]
}
