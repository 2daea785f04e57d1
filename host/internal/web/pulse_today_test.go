package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/search"
	sdkpaper "github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// fieldShelf is a paper source that answers every search with the same recent
// papers, half on retrieval and half on birds; while gate is open (not closed
// yet) it waits, as a slow source does, so a run stays under way.
type fieldShelf struct{ gate chan struct{} }

func (f fieldShelf) Search(ctx context.Context, _ *source.SearchRequest) (*source.Page, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var out []sdkpaper.Paper
	now := time.Now().UTC()
	for i := range 16 {
		d := now.AddDate(0, 0, -(i % 5))
		p := sdkpaper.Paper{IDs: sdkpaper.IDs{ArXivID: fmt.Sprintf("2611.%05d", i+1)}, Source: "arxiv",
			Published: sdkpaper.Date{Year: d.Year(), Month: int(d.Month()), Day: d.Day(), Precision: sdkpaper.PrecisionDay},
			Authors:   []sdkpaper.Author{{Name: "Grace Hopper"}, {Name: fmt.Sprintf("Author %d", i)}}}
		if i%2 == 0 {
			p.Title = fmt.Sprintf("Hybrid passage retrieval with rank fusion, part %d", i)
			p.Abstract = "We fuse dense and lexical retrieval rankings for passage search and report recall on benchmarks."
		} else {
			p.Title = fmt.Sprintf("Migration routes of shorebirds, study %d", i)
			p.Abstract = "Geolocators on shorebirds show stopover sites along the flyway across three seasons."
		}
		out = append(out, p)
	}
	return &source.Page{Papers: out}, nil
}

// limitedSource is a paper source that always asks Lectern to slow down.
type limitedSource struct{}

func (limitedSource) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return nil, protocol.RateLimited(45*time.Minute, "slow down")
}

// pulseStack is the host with fieldShelf (as arXiv) and a rate-limited Semantic
// Scholar as its sources, and its admin signed in without JavaScript.
func pulseStack(t *testing.T, gate chan struct{}) (*stack, *browser, uuid.UUID) {
	t.Helper()
	s := newStackSources(t, false, func() []search.Named {
		return []search.Named{{Name: "arxiv", Searcher: fieldShelf{gate: gate}}, {Name: "semantic_scholar", Searcher: limitedSource{}}}
	})
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	var m struct{ ID uuid.UUID }
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/me", nil, &m))
	return s, b, m.ID
}

// followRetrieval makes the user follow a retrieval topic.
func followRetrieval(t *testing.T, b *browser) {
	t.Helper()
	require.Equal(t, http.StatusCreated, b.apiJSON(http.MethodPost, "/api/pulse/topics",
		map[string]any{"name": "Retrieval", "query": "passage retrieval rank fusion dense lexical"}, nil))
}

var cardIDs = regexp.MustCompile(`data-card="([0-9a-f-]{36})"`)

// deckCards are the paper ids of the cards on a Today page, in order.
func deckCards(body string) []string {
	var out []string
	for _, m := range cardIDs.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// thumb is the user's feedback on a paper ("positive/pulse_thumbs"), or "".
func thumb(t *testing.T, s *stack, user uuid.UUID, paperID string) string {
	t.Helper()
	var signal, src string
	err := s.pool.QueryRow(context.Background(), `SELECT signal, source FROM recommendation_feedback
		WHERE user_id = $1 AND paper_id = $2 ORDER BY created_at DESC LIMIT 1`, user, paperID).Scan(&signal, &src)
	if err != nil {
		return ""
	}
	return signal + "/" + src
}

// state is the user's reading state of a paper ("" without a row).
func state(t *testing.T, s *stack, user uuid.UUID, paperID string) string {
	t.Helper()
	var st string
	_ = s.pool.QueryRow(context.Background(), `SELECT state FROM paper_user_state WHERE user_id = $1 AND paper_id = $2`,
		user, paperID).Scan(&st)
	return st
}

// TestTodayPage walks the Today page without JavaScript: the empty deck that says
// what to do, "Generate now" (and a second one while the first runs, which says
// a run is under way), the deck of ten with why, breakdown and the rating
// buttons, the sources' health in words, each rating landing in the database,
// and a rating of a paper outside the deck refused with a 404 page.
func TestTodayPage(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	s, b, user := pulseStack(t, gate)

	p := b.get("/")
	require.Equal(t, "/library", p.url, "without a topic, / opens the library")
	p = b.get("/today")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Pulse has nothing to go on yet")
	require.Contains(t, p.body, `href="/pulse/start"`, "an empty deck without topics links to the cold-start step")
	require.Contains(t, p.body, "No source has been asked for you yet")

	followRetrieval(t, b)
	p = b.get("/")
	require.Equal(t, "/today", p.url, "someone who follows a topic lands on today's deck")
	require.NotContains(t, p.body, `href="/pulse/start"`)

	p = b.post("/today/generate", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.True(t, strings.HasPrefix(p.url, "/today?job="), p.url)
	require.Contains(t, p.body, "Lectern is making your deck")
	require.Contains(t, p.body, `data-job-stream="`, "the run's progress is shown")
	require.Contains(t, p.body, `<meta http-equiv="refresh"`, "and without JavaScript the page reloads while it runs")
	again := b.post("/today/generate", nil)
	require.Equal(t, "/today", again.url)
	require.Contains(t, again.body, "A run is already under way: your deck appears on this page when it is done.")
	close(gate)
	var cards []string
	require.Eventually(t, func() bool {
		p = b.get("/today")
		cards = deckCards(p.body)
		return len(cards) == 10
	}, 60*time.Second, 200*time.Millisecond, "the deck of ten appears")

	require.Contains(t, p.body, "Hybrid passage retrieval with rank fusion", "on-topic papers are dealt")
	require.Contains(t, p.body, "Grace Hopper")
	require.Contains(t, p.body, `class="why"`)
	require.Contains(t, p.body, "Why this score:", "each card has its breakdown")
	require.Contains(t, p.body, `hidden data-deck-keys`, "the keys are not offered without the script")
	require.Contains(t, p.body, "Matches a topic you follow")
	for _, action := range []string{"up", "down", "save", "dismiss"} {
		require.Contains(t, p.body, `data-action="`+action+`"`)
	}
	require.NotContains(t, p.body, "data-stale", "today's own deck is not stale")
	require.Regexp(t, `health-ok">arXiv</span> ok, last answered \d\d:\d\d`, p.body)
	require.Regexp(t, `health-limited">Semantic Scholar</span> rate-limited until (\w{3} )?\d\d:\d\d`, p.body, "the weekday is named when the time falls on another day")
	require.Contains(t, p.body, "Semantic Scholar: The source asked Lectern to slow down", "the run's diagnostics in words")
	require.NotContains(t, p.body, "Your weights changed", "the breakdown adds up to the score it was ranked by")
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodPut, "/api/pulse/weights", map[string]any{"embedding": 0, "topic": 1,
		"llm_relevance": 0, "llm_novelty": 0, "author_bonus": 0, "recency": 0}, nil))
	require.Contains(t, b.get("/today").body, "Your weights changed since this deck was made", "new weights are said to apply next")

	for i, action := range []string{"up", "down", "save", "dismiss"} {
		r := b.post("/today/rate", url.Values{"paper_id": {cards[i]}, "action": {action}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.True(t, strings.HasPrefix(r.url, "/today?"), r.url)
		require.Contains(t, r.body, rateDone(action), "the page says what was done")
		require.Regexp(t, `id="card-`+cards[i]+`"[^>]*data-rated="`+action+`"`, r.body, "and marks the card")
	}
	require.Equal(t, "positive/pulse_thumbs", thumb(t, s, user, cards[0]))
	require.Equal(t, "negative/pulse_thumbs", thumb(t, s, user, cards[1]))
	require.Equal(t, "to_read", state(t, s, user, cards[2]))
	require.Equal(t, "trash", state(t, s, user, cards[3]))
	require.Equal(t, "negative/dismiss_combined", thumb(t, s, user, cards[3]))
	p = b.get("/today")
	for i, action := range []string{"up", "down", "save", "dismiss"} {
		require.Regexp(t, `id="card-`+cards[i]+`"[^>]*data-rated="`+action+`"`, p.body, "a reload still shows the rating")
	}
	require.NotRegexp(t, `id="card-`+cards[4]+`"[^>]*data-rated=`, p.body)

	stranger := uuid.NewString()
	r := b.post("/today/rate", url.Values{"paper_id": {stranger}, "action": {"up"}})
	require.Equal(t, http.StatusNotFound, r.status)
	require.Contains(t, r.body, "That paper is not in your Pulse deck, so it was not rated.")
	require.Empty(t, thumb(t, s, user, stranger))
	r = b.post("/today/rate", url.Values{"paper_id": {cards[4]}, "action": {"love"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "The rating was not understood")
	require.Empty(t, thumb(t, s, user, cards[4]), "a rating not understood changes nothing")
}

// TestTodayStaleAndEmpty: a deck of two days ago stands in for today's, marked
// with its day and why (no run yet, or a run that reached no source), and an
// empty night says whether the sources were down or arXiv was quiet.
func TestTodayStaleAndEmpty(t *testing.T) {
	t.Parallel()
	s, b, user := pulseStack(t, nil)
	followRetrieval(t, b)
	ctx := context.Background()
	st := s.app.PulseGen.Store
	today := time.Now().UTC()
	old := today.AddDate(0, 0, -2)
	p := b.get("/today")
	require.Contains(t, p.body, "Your first deck is made tonight, or now with Generate.")

	// Two days ago: a deck of one of the shelf's papers.
	_, err := s.app.Search.Search(ctx, user, search.Params{Query: "retrieval", Limit: 5, Instance: true})
	require.NoError(t, err)
	var paperID uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT id FROM papers WHERE arxiv_id = '2611.00001'`).Scan(&paperID))
	_, err = st.SaveDeck(ctx, user, old.Format(time.DateOnly), []pulse.Card{{PaperID: paperID, Rank: 1, Score: 0.4,
		Signals: map[string]float64{"topic": 0.9, "recency": 0.8}, Why: "Close to your topic Retrieval."}}, pulse.Stats{CardCount: 1})
	require.NoError(t, err)
	p = b.get("/today")
	require.Equal(t, []string{paperID.String()}, deckCards(p.body))
	require.Contains(t, p.body, "From "+old.Format("Monday 2 January")+": tonight&#39;s run has not produced a deck yet.")

	// Today's run reached no source.
	down := pulse.Stats{Sources: map[string]pulse.SourceStatus{
		"arxiv": {Status: "error", Message: "The source could not be reached or failed; the deck uses the others."}}}
	_, err = st.SaveDeck(ctx, user, today.Format(time.DateOnly), []pulse.Card{}, down)
	require.NoError(t, err)
	p = b.get("/today")
	require.Contains(t, p.body, "From "+old.Format("Monday 2 January")+": today&#39;s run could not reach any paper source.")
	require.Contains(t, p.body, "arXiv: The source could not be reached or failed")

	// With no deck to fall back on, the empty deck says why.
	_, err = s.pool.Exec(ctx, `DELETE FROM pulse_decks WHERE user_id = $1 AND deck_date < $2::date`, user, today.Format(time.DateOnly))
	require.NoError(t, err)
	p = b.get("/today")
	require.Empty(t, deckCards(p.body))
	require.Contains(t, p.body, "None of the paper sources could be reached for today&#39;s deck")
	quiet := pulse.Stats{Quiet: "arXiv announced nothing since Friday: there are no new listings at weekends.",
		Sources: map[string]pulse.SourceStatus{"arxiv": {Status: "ok"}}}
	_, err = st.SaveDeck(ctx, user, today.Format(time.DateOnly), []pulse.Card{}, quiet)
	require.NoError(t, err)
	p = b.get("/today")
	require.Contains(t, p.body, "arXiv announced nothing since Friday")
	require.NotContains(t, p.body, "could be reached")
}

// TestWeightsEditor: the weights as inputs from 0 to 1, a value out of range
// refused with the field named and nothing saved, a valid form saved, and the
// reset back to the defaults.
func TestWeightsEditor(t *testing.T) {
	t.Parallel()
	_, b, _ := pulseStack(t, nil)
	p := b.get("/today/weights")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `id="w-llm_relevance" name="llm_relevance" type="number" min="0" max="1" step="0.01" inputmode="decimal" value="0.3"`)
	require.Contains(t, p.body, `type="range"`)

	form := url.Values{"embedding": {"1.5"}, "topic": {"abc"}, "llm_relevance": {"0.3"}, "llm_novelty": {"0.1"},
		"author_bonus": {"0.15"}, "recency": {"0.05"}, "classifier": {""}}
	p = b.post("/today/weights", form)
	require.Equal(t, http.StatusUnprocessableEntity, p.status)
	require.Contains(t, p.body, "Some weights are not numbers from 0 to 1, so nothing was saved.")
	require.Contains(t, p.body, `id="w-embedding" name="embedding" type="number" min="0" max="1" step="0.01" inputmode="decimal" value="1.5"`,
		"what was typed is kept")
	require.Regexp(t, `id="w-topic-err"><span class="field-error" role="alert">This field must be a number from 0 to 1`, p.body)
	var w map[string]float64
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/pulse/weights", nil, &w))
	require.InDelta(t, 0.2, w["embedding"], 1e-9, "nothing was saved")

	form.Set("embedding", "0.9")
	form.Set("topic", "0,4")
	form.Set("classifier", "0.25")
	p = b.post("/today/weights", form)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/today/weights", p.url)
	require.Contains(t, p.body, "Your weights are saved.")
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/pulse/weights", nil, &w))
	require.InDelta(t, 0.9, w["embedding"], 1e-9)
	require.InDelta(t, 0.4, w["topic"], 1e-9, "a decimal comma is read")
	require.InDelta(t, 0.25, w["classifier"], 1e-9)
	require.Contains(t, p.body, `name="embedding" type="number" min="0" max="1" step="0.01" inputmode="decimal" value="0.9"`)

	p = b.post("/today/weights", url.Values{"reset": {"1"}})
	require.Contains(t, p.body, "The weights are back to their defaults.")
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/pulse/weights", nil, &w))
	for _, sig := range pulseSignals {
		require.InDelta(t, sig.Default, w[sig.Name], 1e-9, sig.Name)
	}
}

// TestWeeklyPage: an empty week says so; papers up-voted from the deck are
// listed under their topic with the synthesis and its checked themes, and a
// deck paper the user ignored is not; a window out of range is refused in words.
func TestWeeklyPage(t *testing.T) {
	t.Parallel()
	s, b, user := pulseStack(t, nil)
	p := b.get("/weekly")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "You did not star, start, finish or up-vote a paper in the last 7 days")
	require.Contains(t, p.body, "data-empty-week")

	followRetrieval(t, b)
	_, err := s.app.PulseGen.Run(context.Background(), user, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	cards := deckCards(b.get("/today").body)
	require.Len(t, cards, 10)
	var titles []string
	for _, id := range cards[:2] {
		require.Equal(t, http.StatusOK, b.post("/today/rate", url.Values{"paper_id": {id}, "action": {"up"}}).status)
		var pp paper
		require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/papers/"+id, nil, &pp))
		titles = append(titles, pp.Title)
	}
	var ignored paper
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/papers/"+cards[9], nil, &ignored))

	p = b.get("/weekly?days=7")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "2 papers since")
	require.Contains(t, p.body, "Retrieval")
	for _, title := range titles {
		require.Contains(t, p.body, title)
	}
	require.NotContains(t, p.body, ignored.Title, "a deck paper the user ignored is not in the summary")
	require.Contains(t, p.body, "you liked")
	require.Contains(t, p.body, `class="synthesis"`, "two papers on a topic get a synthesis")
	require.Contains(t, p.body, "Quoted from the papers by the builtin extractive method")

	p = b.get("/weekly?days=31")
	require.Equal(t, http.StatusUnprocessableEntity, p.status)
	require.Contains(t, p.body, "The number of days must be a whole number from 1 to 30.")
	p = b.get("/weekly?days=30")
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `href="/weekly?days=30" aria-current="page"`)
}
