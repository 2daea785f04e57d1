package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/source"
)

// unreachable is a paper source this machine cannot reach: it has no internet.
type unreachable struct{}

func (unreachable) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return nil, errors.New("dial tcp: lookup export.arxiv.org: no such host")
}

func newColdStack(t *testing.T, inProcess bool) *stack {
	t.Helper()
	return newStackSources(t, inProcess, func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: unreachable{}}} })
}

// seedShared puts n recent instance-level papers of category into the shared
// corpus, as a night's discovery would, titled prefix 1..n, newest first.
func seedShared(t *testing.T, s *stack, n int, category, prefix, abstract string) {
	t.Helper()
	for i := 1; i <= n; i++ {
		_, err := s.pool.Exec(context.Background(), `
			INSERT INTO papers (title, abstract, source, visibility, metadata, authors, publication_date, publication_date_precision)
			VALUES ($1, $2, 'arxiv', 'public', jsonb_build_object('categories', jsonb_build_array($3::text)),
			        '[{"name": "Ada Example"}, {"name": "Lin Example"}]', current_date - $4::int, 'day')`,
			fmt.Sprintf("%s %d", prefix, i), abstract, category, i)
		require.NoError(t, err)
	}
}

var candidateRe = regexp.MustCompile(`data-candidate="([0-9a-f-]{36})"`)

// candidatesOn returns the ids of the papers offered on a rate page.
func candidatesOn(body string) []string {
	var out []string
	for _, m := range candidateRe.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// setupColdUsers makes the admin and invites Alice and Bob, each signed in in
// their own browser; it returns Alice's user id too.
func setupColdUsers(t *testing.T, s *stack) (alice, bob *browser, aliceID string) {
	t.Helper()
	root := s.browser(t)
	p := root.post("/onboarding/admin", url.Values{"email": {"root@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	var a, b struct{ User struct{ ID string } }
	require.Equal(t, http.StatusCreated, root.apiJSON(http.MethodPost, "/api/admin/users", map[string]any{"email": "alice@example.org", "role": "user"}, &a))
	require.Equal(t, http.StatusCreated, root.apiJSON(http.MethodPost, "/api/admin/users", map[string]any{"email": "bob@example.org", "role": "user"}, &b))
	return s.signInInvited(t, "alice@example.org"), s.signInInvited(t, "bob@example.org"), a.User.ID
}

// The cold start without JavaScript: reachable from the empty library and from
// Settings; the topics step follows ticked fields and typed keywords and drops
// what was unticked; the authors step likewise; the rate step explains an empty
// corpus, says in words that the sources could not be reached, then offers the
// shared papers on what Alice follows, and eight ratings finish it.
func TestPulseStartSteps(t *testing.T) {
	t.Parallel()
	s := newColdStack(t, false)
	alice, _, _ := setupColdUsers(t, s)

	p := alice.get("/library")
	require.Contains(t, p.body, `data-pulse-invite`, "an empty library invites to the cold start")
	require.Contains(t, p.body, `href="/pulse/start"`)
	require.Contains(t, alice.get("/settings").body, `href="/pulse/start"`)

	p = alice.get("/pulse/start")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Step 1 of 3")
	require.Contains(t, p.body, `value="cs.LG"`)

	p = alice.post("/pulse/start/topics", url.Values{})
	require.Equal(t, http.StatusUnprocessableEntity, p.status)
	require.Contains(t, p.body, "Tick a field or type a few keywords.")

	p = alice.post("/pulse/start/topics", url.Values{"category": {"cs.IR"}, "keywords": {"dense retrieval, graph neural networks\n\n"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/pulse/start?step=authors", p.url)
	require.Equal(t, []string{"dense retrieval", "graph neural networks", "Information retrieval"}, topicNames(t, alice))

	p = alice.get("/pulse/start?step=topics")
	require.Regexp(t, `value="cs.IR"[^>]*checked`, p.body, "a followed field is ticked")
	var topics struct {
		Items []pulseTopic `json:"items"`
	}
	require.Equal(t, http.StatusOK, alice.apiJSON(http.MethodGet, "/api/pulse/topics", nil, &topics))
	keep := ""
	for _, tp := range topics.Items {
		if tp.Name == "dense retrieval" {
			keep = tp.ID
		}
	}
	p = alice.post("/pulse/start/topics", url.Values{"category": {"cs.LG"}, "keep": {keep}})
	require.Equal(t, "/pulse/start?step=authors", p.url, p.body)
	require.Equal(t, []string{"dense retrieval", "Machine learning"}, topicNames(t, alice), "unticked ones are dropped")

	p = alice.post("/pulse/start/authors", url.Values{"names": {"Grace Hopper\nAlan Turing\n"}})
	require.Equal(t, "/pulse/start?step=rate", p.url, p.body)
	var authors struct {
		Items []pulseAuthor `json:"items"`
	}
	require.Equal(t, http.StatusOK, alice.apiJSON(http.MethodGet, "/api/pulse/authors", nil, &authors))
	require.Len(t, authors.Items, 2)
	grace := ""
	for _, a := range authors.Items {
		if a.Name == "Grace Hopper" {
			grace = a.ID
		}
	}
	p = alice.post("/pulse/start/authors", url.Values{"keep": {grace}})
	require.Equal(t, "/pulse/start?step=rate", p.url, p.body)
	require.Equal(t, http.StatusOK, alice.apiJSON(http.MethodGet, "/api/pulse/authors", nil, &authors))
	require.Equal(t, []pulseAuthor{{ID: grace, Name: "Grace Hopper"}}, authors.Items)

	require.Contains(t, p.body, "Lectern has no papers yet on what you follow.")
	require.Contains(t, p.body, `action="/pulse/start/discover"`)
	p = alice.post("/pulse/start/discover", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/pulse/start?step=rate", p.url)
	require.Contains(t, p.body, "None of the paper sources could be reached, so no new papers were fetched.")
	require.Contains(t, p.body, "Rate the papers already here, or try again later")
	require.NotContains(t, p.body, "dial tcp")
	require.NotContains(t, p.body, "no such host")

	seedShared(t, s, 12, "cs.LG", "Sparse attention for long sequences, study", "We study sparse attention in transformers.")
	seedShared(t, s, 3, "q-bio.PE", "Seasonal migration of terns, part", "Terns fly far.")
	p = alice.get("/pulse/start?step=rate")
	ids := candidatesOn(p.body)
	require.Len(t, ids, 10, "a batch of ten")
	require.NotContains(t, p.body, "Seasonal migration of terns", "only what Alice follows")
	require.Contains(t, p.body, "Your topic “Machine learning”")
	require.Contains(t, p.body, "0 of 8 rated")

	for i, id := range ids[:9] {
		rating := "up"
		switch {
		case i == 0:
			rating = "skip"
		case i%2 == 0:
			rating = "down"
		}
		p = alice.post("/pulse/start/rate", url.Values{"paper_id": {id}, "rating": {rating}})
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.NotContains(t, candidatesOn(p.body), id, "a rated or skipped paper leaves the batch")
	}
	require.Contains(t, p.body, "That makes enough ratings for your first deck.")
	require.Contains(t, p.body, "8 of 8 rated (4 interested, 4 not for me)")
	require.Contains(t, p.body, "Your first deck is ready to make")

	p = alice.post("/pulse/start/rate", url.Values{"paper_id": {ids[9]}, "rating": {"love"}})
	require.Contains(t, p.body, "Choose Interested, Not for me or Skip.")
	p = alice.post("/pulse/start/generate", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Your first deck is being made")
}

func topicNames(t *testing.T, b *browser) []string {
	t.Helper()
	var list struct {
		Items []pulseTopic `json:"items"`
	}
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/pulse/topics", nil, &list))
	var out []string
	for _, tp := range list.Items {
		out = append(out, tp.Name)
	}
	return out
}

// Bob's rate form carrying Alice's private paper gets a page that says there is
// no such paper to rate, and nothing is written for either of them.
func TestPulseStartRateRefusesAnotherUsersPaper(t *testing.T) {
	t.Parallel()
	s := newColdStack(t, false)
	_, bob, aliceID := setupColdUsers(t, s)
	var private string
	require.NoError(t, s.pool.QueryRow(context.Background(),
		`INSERT INTO papers (title, source, discovered_by) VALUES ('Alice''s private draft', 'upload', $1) RETURNING id`, aliceID).Scan(&private))

	for _, rating := range []string{"up", "down", "skip"} {
		p := bob.post("/pulse/start/rate", url.Values{"paper_id": {private}, "rating": {rating}})
		require.Equal(t, http.StatusNotFound, p.status, p.body)
		require.Contains(t, p.body, "That paper is not one you can rate.")
		require.NotContains(t, p.body, "private draft")
	}
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM recommendation_feedback)
		+ (SELECT count(*) FROM pulse_cards) + (SELECT count(*) FROM pulse_decks)`).Scan(&n))
	require.Zero(t, n)
}
