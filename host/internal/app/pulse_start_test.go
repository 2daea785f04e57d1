package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

// coldField answers every search with two dozen recent cs.IR papers, half on
// passage retrieval and half on music playlists, their dates interleaved: what a
// new user's first discovery brings into the corpus.
type coldField struct{}

func (coldField) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	var out []paper.Paper
	now := time.Now().UTC()
	for i := range 24 {
		d := now.AddDate(0, 0, -(i / 2))
		p := paper.Paper{IDs: paper.IDs{ArXivID: fmt.Sprintf("2611.%05d", 100+i)}, Source: "arxiv", Categories: []string{"cs.IR"},
			Published: paper.Date{Year: d.Year(), Month: int(d.Month()), Day: d.Day(), Precision: paper.PrecisionDay}}
		if i%2 == 0 {
			p.Title = fmt.Sprintf("Dense passage retrieval with hard negatives, variant %d", i)
			p.Abstract = "We train dense passage retrieval encoders for open-domain question answering with hard negatives and rank passages for each query. We evaluate on public benchmarks and report gains."
		} else {
			p.Title = fmt.Sprintf("Music playlist continuation for streaming listeners, variant %d", i)
			p.Abstract = "We continue music playlists for streaming listeners from the songs they played and the artists they follow. We evaluate on public benchmarks and report gains."
		}
		out = append(out, p)
	}
	return &source.Page{Papers: out}, nil
}

func setupColdStart(t *testing.T, src search.Searcher) *testBundle {
	t.Helper()
	return setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: src}} }
	})
}

func onboardingOf(t *testing.T, b *testBundle, cookie string) pulse.Onboarding {
	t.Helper()
	rec := b.do(t, req{method: http.MethodGet, path: "/api/pulse/onboarding", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var o pulse.Onboarding
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &o))
	return o
}

func rateOnboarding(t *testing.T, b *testBundle, cookie string, id any, rating string) *pulse.OnboardingRating {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/rate", cookie: cookie, body: map[string]any{"paper_id": id, "rating": rating}})
	if rec.Code != http.StatusOK {
		return nil
	}
	var r pulse.OnboardingRating
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r))
	return &r
}

func isMusic(title string) bool { return strings.HasPrefix(title, "Music playlist") }

// A new user follows a topic, finds the corpus empty, runs a discovery, and rates
// eight papers of the batch: four on retrieval up, four on music playlists down
// (and skips one). The first Generator.Run uses those ratings: every music paper
// she did not rate (a neighbour of those she turned down) scores lower for her
// than for Bob, who rated the same retrieval papers up and skipped the music
// ones; her down-voted papers stay out of her deck; and her eight ratings are
// training rows of her classifier.
func TestColdStartRatingsShapeTheFirstDeck(t *testing.T) {
	t.Parallel()
	b := setupColdStart(t, coldField{})
	ctx := context.Background()
	ann := b.user(t, "ann@example.org", "user")
	bob := b.user(t, "bob@example.org", "user")
	annCookie, bobCookie := b.signIn(t, "ann@example.org"), b.signIn(t, "bob@example.org")

	o := onboardingOf(t, b, annCookie)
	require.True(t, o.LibraryEmpty)
	require.Zero(t, o.TopicCount)
	require.Empty(t, o.Candidates)
	require.Contains(t, o.Message, "Follow a topic or an author first")

	for _, c := range []string{annCookie, bobCookie} {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/topics", cookie: c,
			body: map[string]any{"name": "Information retrieval", "query": "information retrieval", "categories": []string{"cs.IR"}}})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	o = onboardingOf(t, b, annCookie)
	require.Equal(t, 1, o.TopicCount)
	require.True(t, o.CorpusShort, "nothing in the corpus yet")
	require.Empty(t, o.Candidates)
	require.Contains(t, o.Message, "Fetch recent ones from the paper sources")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/discover", cookie: annCookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var d pulse.Discovery
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &d))
	require.Equal(t, 24, d.Found)
	require.Equal(t, "ok", d.Sources["arxiv"].Status)
	require.Equal(t, "Found 24 papers on what you follow; they are in the list to rate.", d.Message)

	// Ann rates the batch as it comes, reloading it after each rating.
	var liked, disliked []uuid.UUID
	var skipped uuid.UUID
	for round := 0; len(liked)+len(disliked) < pulse.OnboardingTarget; round++ {
		require.Less(t, round, 20, "the batch ran out before eight ratings")
		o = onboardingOf(t, b, annCookie)
		require.NotEmpty(t, o.Candidates)
		require.LessOrEqual(t, len(o.Candidates), 10)
		c := o.Candidates[0]
		require.Equal(t, "Your topic “Information retrieval”", c.Matched)
		switch {
		case skipped == uuid.Nil && !isMusic(c.Paper.Title):
			skipped = c.Paper.ID
			require.Equal(t, len(liked)+len(disliked), rateOnboarding(t, b, annCookie, c.Paper.ID, "skip").Rated, "a skip is no rating")
		case isMusic(c.Paper.Title) && len(disliked) < 4:
			disliked = append(disliked, c.Paper.ID)
			require.NotNil(t, rateOnboarding(t, b, annCookie, c.Paper.ID, "down"))
		case !isMusic(c.Paper.Title) && len(liked) < 4:
			liked = append(liked, c.Paper.ID)
			require.NotNil(t, rateOnboarding(t, b, annCookie, c.Paper.ID, "up"))
		default:
			require.NotNil(t, rateOnboarding(t, b, annCookie, c.Paper.ID, "skip"))
		}
	}
	o = onboardingOf(t, b, annCookie)
	require.Equal(t, []int{8, 4, 4}, []int{o.Rated, o.Up, o.Down})
	require.True(t, o.Complete)
	require.False(t, o.HasDeck)
	require.Contains(t, o.Message, "You have rated enough for your first deck")
	for _, c := range o.Candidates {
		require.NotContains(t, append(append([]uuid.UUID{skipped}, liked...), disliked...), c.Paper.ID, "a paper rated or skipped is not offered again")
	}

	// The ratings are the thumbs a deck rating writes.
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM recommendation_feedback WHERE user_id = $1 AND source = 'pulse_thumbs'`, ann.ID).Scan(&n))
	require.Equal(t, 8, n)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM recommendation_feedback WHERE user_id = $1 AND paper_id = $2`, ann.ID, skipped).Scan(&n))
	require.Zero(t, n, "a skip gives no thumb")

	// Bob rates the same retrieval papers up and skips Ann's music papers.
	for _, id := range liked {
		require.NotNil(t, rateOnboarding(t, b, bobCookie, id, "up"))
	}
	for _, id := range disliked {
		require.NotNil(t, rateOnboarding(t, b, bobCookie, id, "skip"))
	}

	set := pulse.DefaultSettings()
	set.DeckSize = 40
	st := pulse.NewStore(b.pool)
	date := time.Now().UTC().Format(time.DateOnly)
	decks := map[string]pulse.Deck{}
	for name, id := range map[string]uuid.UUID{"ann": ann.ID, "bob": bob.ID} {
		require.NoError(t, st.PutSettings(ctx, id, set))
		deck, err := b.app.PulseGen.Run(ctx, id, date)
		require.NoError(t, err)
		require.NotEmpty(t, deck.Cards, "the deck works from the first night")
		decks[name] = deck
	}
	require.True(t, onboardingOf(t, b, annCookie).HasDeck)
	title := func(id uuid.UUID) string {
		var s string
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT title FROM papers WHERE id = $1`, id).Scan(&s))
		return s
	}
	require.False(t, isMusic(title(decks["ann"].Cards[0].PaperID)), "Ann's deck opens with retrieval")
	byPaper := func(d pulse.Deck) map[uuid.UUID]pulse.Card {
		out := map[uuid.UUID]pulse.Card{}
		for _, c := range d.Cards {
			out[c.PaperID] = c
		}
		return out
	}
	annCards, bobCards := byPaper(decks["ann"]), byPaper(decks["bob"])
	for _, id := range disliked {
		require.NotContains(t, annCards, id, "a paper Ann turned down is not in her deck")
	}
	neighbours := 0
	for id, bc := range bobCards {
		if !isMusic(title(id)) || containsID(disliked, id) {
			continue
		}
		ac, ok := annCards[id]
		require.True(t, ok, "the unrated music paper %s is in both decks", title(id))
		neighbours++
		require.Positive(t, bc.Signals[score.Embedding], "for Bob it is somewhat like the papers he rated up")
		require.Less(t, ac.Signals[score.Embedding], bc.Signals[score.Embedding], "%s: Ann turned its neighbours down", title(id))
		require.Less(t, ac.Score, bc.Score, "%s scores lower for Ann", title(id))
	}
	require.GreaterOrEqual(t, neighbours, 6)

	// The classifier trains on the cold-start ratings as on deck ratings: too few
	// yet, but all eight are rows.
	res, err := b.app.PulseTrainer.Train(ctx, ann.ID)
	require.NoError(t, err)
	require.False(t, res.Trained)
	require.Equal(t, 8, res.Samples, "%+v", res)
}

func containsID(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// A rating the API cannot take is refused with the field named; a paper the
// caller cannot see (another user's private paper, or none) is 404, and nothing
// is written.
func TestColdStartRefusesWhatItCannotRate(t *testing.T) {
	t.Parallel()
	b := setupColdStart(t, coldField{})
	ctx := context.Background()
	ann := b.user(t, "ann@example.org", "user")
	carol := b.user(t, "carol@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	var private uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, discovered_by) VALUES ('Carol''s draft', 'upload', $1) RETURNING id`,
		carol.ID).Scan(&private))

	post := func(body map[string]any) (int, string) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/rate", cookie: cookie, body: body})
		return rec.Code, rec.Body.String()
	}
	code, body := post(map[string]any{"paper_id": private, "rating": "love"})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, body, "must be up, down or skip")
	code, _ = post(map[string]any{"paper_id": "not-an-id", "rating": "up"})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	for _, rating := range []string{"up", "down", "skip"} {
		code, body = post(map[string]any{"paper_id": private, "rating": rating})
		require.Equal(t, http.StatusNotFound, code, body)
		require.NotContains(t, body, "Carol")
		code, _ = post(map[string]any{"paper_id": uuid.New(), "rating": rating})
		require.Equal(t, http.StatusNotFound, code)
	}
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM recommendation_feedback WHERE user_id = $1)
		+ (SELECT count(*) FROM pulse_cards WHERE user_id = $1) + (SELECT count(*) FROM pulse_decks WHERE user_id = $1)`, ann.ID).Scan(&n))
	require.Zero(t, n, "nothing was written")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/discover", cookie: cookie})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "Follow a topic or an author first")
}

// With no internet every source fails: the discovery run says so in words (200),
// never as an error page, and the papers already in the corpus can still be
// rated. Candidates are drawn for followed authors too.
func TestColdStartDiscoveryWithTheSourcesDown(t *testing.T) {
	t.Parallel()
	b := setupColdStart(t, downSource{})
	ctx := context.Background()
	b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/authors", cookie: cookie, body: map[string]any{"name": "Grace Hopper"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	// One shared paper by her is in the corpus already (an instance-level discovery).
	_, err := b.pool.Exec(ctx, `INSERT INTO papers (title, source, visibility, authors, publication_date, publication_date_precision)
		VALUES ('Compilers for everyone', 'arxiv', 'public', '[{"name": "grace hopper"}]', current_date - 3, 'day')`)
	require.NoError(t, err)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/discover", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireNoNetworkText(t, rec.Body.String())
	var d pulse.Discovery
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &d))
	require.Zero(t, d.Found)
	require.Equal(t, "error", d.Sources["arxiv"].Status)
	require.Equal(t, "None of the paper sources could be reached, so no new papers were fetched. Rate the papers already here, or try again later; tonight's run asks the sources again.",
		d.Message)

	o := onboardingOf(t, b, cookie)
	require.Len(t, o.Candidates, 1)
	require.Equal(t, "Compilers for everyone", o.Candidates[0].Paper.Title)
	require.Equal(t, "By Grace Hopper, whom you follow", o.Candidates[0].Matched)
	require.True(t, o.CorpusShort)
}
