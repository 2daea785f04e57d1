package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

// fieldSource answers every search with forty recent papers, half on retrieval
// and half on birds: a small field to make decks from.
type fieldSource struct{}

func (fieldSource) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	var out []paper.Paper
	now := time.Now().UTC()
	for i := range 40 {
		d := now.AddDate(0, 0, -(i % 6))
		p := paper.Paper{IDs: paper.IDs{ArXivID: fmt.Sprintf("2611.%05d", i+1)}, Source: "arxiv",
			Published: paper.Date{Year: d.Year(), Month: int(d.Month()), Day: d.Day(), Precision: paper.PrecisionDay}}
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

// setupPulse is the host with fieldSource as its only source, and Ann signed in.
func setupPulse(t *testing.T) (*testBundle, users.User, string) {
	t.Helper()
	b := setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: fieldSource{}}} }
	})
	ann := b.user(t, "ann@example.org", "user")
	return b, ann, b.signIn(t, "ann@example.org")
}

// A user asks for today's deck through POST /api/jobs, rates thirty-odd papers of
// it, and pulse.train_classifier enqueued the same way retrains at once: the new
// model is stored signed and verifies, and the next deck weighs it in.
func TestPulseTrainsTheClassifierOnDemand(t *testing.T) {
	t.Parallel()
	b, ann, cookie := setupPulse(t)
	ctx := context.Background()
	st := pulse.NewStore(b.pool)
	_, err := st.AddTopic(ctx, ann.ID, pulse.Topic{Name: "retrieval", Query: "passage retrieval rank fusion"})
	require.NoError(t, err)
	set := pulse.DefaultSettings()
	set.DeckSize = 40
	require.NoError(t, st.PutSettings(ctx, ann.ID, set))
	b.startJobs(t)

	enqueue := func(kind string) jobs.Envelope {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/jobs", cookie: cookie, body: map[string]any{"kind": kind}})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		var env jobs.Envelope
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
		done := b.waitJob(t, cookie, env.ID)
		require.Equal(t, jobs.StateSucceeded, done.State, "%+v", done)
		return done
	}
	enqueue(pulse.KindNightly)
	// The nightly run enqueued a training of its own (too few thumbs yet): let it
	// end, as only one may run at a time.
	require.Eventually(t, func() bool {
		var active int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1
			AND state NOT IN ('completed', 'cancelled', 'discarded')`, jobs.KindTrainClassifier).Scan(&active))
		return active == 0
	}, 30*time.Second, 100*time.Millisecond)
	d, err := st.Today(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	require.Len(t, d.Cards, 40)

	// Ann likes retrieval and not birds.
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		for _, c := range d.Cards {
			var title string
			if err := tx.QueryRow(ctx, `SELECT title FROM papers WHERE id = $1`, c.PaperID).Scan(&title); err != nil {
				return err
			}
			up := len(title) > 6 && title[:6] == "Hybrid"
			if err := papers.GiveFeedbackTx(ctx, tx, ann.ID, c.PaperID, up, papers.FeedbackPulse, ""); err != nil {
				return err
			}
		}
		return nil
	}))

	env := enqueue(jobs.KindTrainClassifier)
	var res pulse.TrainResult
	require.NoError(t, json.Unmarshal(env.Result, &res), string(env.Result))
	require.True(t, res.Trained, "%+v", res)
	require.Equal(t, 40, res.Positives+res.Negatives)
	stored, err := st.ActiveModel(ctx, ann.ID)
	require.NoError(t, err)
	key, err := modelKey(b.app.Config)()
	require.NoError(t, err)
	m, err := classifier.Open(stored.Blob, stored.Tag, ann.ID, key)
	require.NoError(t, err, "the new model verifies")
	require.NotNil(t, m.AUC)
	opted, err := st.Settings(ctx, ann.ID)
	require.NoError(t, err)
	require.True(t, opted.ClassifierOptIn)

	// Another user's training is theirs alone.
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM pulse_models WHERE user_id <> $1`, ann.ID).Scan(&n))
	require.Zero(t, n)
}

// The deck through the API: today's cards with their papers, each action of
// rate, the weights editor's validation, and the explanation of a card.
func TestPulseDeckThroughTheAPI(t *testing.T) {
	t.Parallel()
	b, ann, cookie := setupPulse(t)
	ctx := context.Background()

	rec := b.do(t, req{method: http.MethodGet, path: "/api/pulse/today", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "follow a topic or an author")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/pulse/topics", cookie: cookie, body: map[string]any{"name": "retrieval",
		"query": "passage retrieval rank fusion", "categories": []string{"cs.IR"}}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	_, err := b.app.PulseGen.Run(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/pulse/today", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var deck pulse.DeckAnswer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &deck))
	require.Len(t, deck.Cards, 10)
	require.Contains(t, deck.Cards[0].Paper.Title, "Hybrid passage retrieval", "on topic first")
	require.NotEmpty(t, deck.Cards[0].Why)
	saved, dismissed := deck.Cards[0].PaperID, deck.Cards[1].PaperID

	rate := func(id any, action string) int {
		return b.do(t, req{method: http.MethodPost, path: "/api/pulse/rate", cookie: cookie, body: map[string]any{"paper_id": id, "action": action}}).Code
	}
	require.Equal(t, http.StatusOK, rate(saved, "save"))
	var state string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT s.state FROM user_library l JOIN paper_user_state s USING (user_id, paper_id)
		WHERE l.user_id = $1 AND l.paper_id = $2 AND l.added_via = 'pulse_save'`, ann.ID, saved).Scan(&state))
	require.Equal(t, "to_read", state)
	require.Equal(t, http.StatusOK, rate(dismissed, "dismiss"))
	var signal, source string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT f.signal, f.source, s.state FROM recommendation_feedback f
		JOIN paper_user_state s ON s.user_id = f.user_id AND s.paper_id = f.paper_id WHERE f.user_id = $1 AND f.paper_id = $2`,
		ann.ID, dismissed).Scan(&signal, &source, &state))
	require.Equal(t, []string{"negative", "dismiss_combined", "trash"}, []string{signal, source, state})
	require.Equal(t, http.StatusOK, rate(deck.Cards[2].PaperID, "up"))
	require.Equal(t, http.StatusOK, rate(deck.Cards[3].PaperID, "open"))
	require.Equal(t, http.StatusUnprocessableEntity, rate(deck.Cards[3].PaperID, "love"))
	require.Equal(t, http.StatusUnprocessableEntity, rate("not-an-id", "up"))
	require.Equal(t, http.StatusNotFound, rate(uuid.New(), "up"), "not in the deck")

	// The dismissed paper never comes back.
	_, err = b.app.PulseGen.Run(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	d, err := pulse.NewStore(b.pool).Today(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	for _, c := range d.Cards {
		require.NotEqual(t, dismissed, c.PaperID)
		require.NotEqual(t, saved, c.PaperID, "saved: in the library now")
	}

	rec = b.do(t, req{method: http.MethodPut, path: "/api/pulse/weights", cookie: cookie, body: map[string]any{"embedding": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `the weight \"topic\" is required`)
	rec = b.do(t, req{method: http.MethodPut, path: "/api/pulse/weights", cookie: cookie, body: map[string]any{
		"embedding": 3, "topic": 0.5, "llm_relevance": 0, "llm_novelty": 0, "author_bonus": 0, "recency": 0.1}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var w map[string]float64
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &w))
	require.Equal(t, 1.0, w["embedding"], "clamped to 1")

	rec = b.do(t, req{method: http.MethodGet, path: "/api/pulse/explain/" + d.Cards[0].PaperID.String(), cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var ex pulse.Explanation
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ex))
	require.InDelta(t, ex.Weights["topic"]*ex.Signals["topic"], ex.Contributions["topic"], 1e-9)
}

// The Weekly Summary lists only the papers the user acted on in the window, and
// never a deck paper they only saw; a topic of two papers or more gets a
// synthesis whose themes are quoted from the papers; an empty week says so.
func TestWeeklySummaryReflectsOnlyWhatTheUserDid(t *testing.T) {
	t.Parallel()
	b, ann, cookie := setupPulse(t)
	ctx := context.Background()

	rec := b.do(t, req{method: http.MethodGet, path: "/api/digest/weekly", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "nothing to reflect on yet")

	_, err := pulse.NewStore(b.pool).AddTopic(ctx, ann.ID, pulse.Topic{Name: "retrieval", Query: "passage retrieval rank fusion dense lexical"})
	require.NoError(t, err)
	_, err = b.app.PulseGen.Run(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	d, err := pulse.NewStore(b.pool).Today(ctx, ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(d.Cards), 5)
	liked, starred, done, old, ignored := d.Cards[0].PaperID, d.Cards[1].PaperID, d.Cards[2].PaperID, d.Cards[3].PaperID, d.Cards[4].PaperID

	rate := func(id uuid.UUID, action string) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/rate", cookie: cookie, body: map[string]any{"paper_id": id, "action": action}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	rate(liked, "up")
	for _, id := range []uuid.UUID{starred, done, old} {
		rate(id, "save")
	}
	patch := func(id uuid.UUID, body map[string]any) {
		rec := b.do(t, req{method: http.MethodPatch, path: "/api/papers/" + id.String() + "/state", cookie: cookie, body: body})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	patch(starred, map[string]any{"starred": true})
	patch(done, map[string]any{"state": "done"})
	patch(old, map[string]any{"state": "done"})
	_, err = b.pool.Exec(ctx, `UPDATE paper_user_state SET state_changed_at = now() - interval '10 days', updated_at = now() - interval '10 days'
		WHERE user_id = $1 AND paper_id = $2`, ann.ID, old)
	require.NoError(t, err)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/digest/weekly?days=7", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var w struct {
		PaperCount int `json:"paper_count"`
		Topics     []struct {
			Name   string `json:"name"`
			Papers []struct {
				ID  uuid.UUID `json:"id"`
				How []string  `json:"how"`
			} `json:"papers"`
			Synthesis *struct {
				Summary string   `json:"summary"`
				Themes  []string `json:"themes"`
			} `json:"synthesis"`
		} `json:"topics"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &w))
	got := map[uuid.UUID][]string{}
	for _, tp := range w.Topics {
		for _, p := range tp.Papers {
			got[p.ID] = p.How
		}
		if len(tp.Papers) >= 2 {
			require.NotNil(t, tp.Synthesis, tp.Name)
			require.NotEmpty(t, tp.Synthesis.Summary)
		}
	}
	require.Equal(t, 3, w.PaperCount)
	require.Equal(t, []string{"liked"}, got[liked])
	require.Equal(t, []string{"starred"}, got[starred])
	require.Equal(t, []string{"done"}, got[done])
	require.NotContains(t, got, ignored, "a deck paper Ann only saw")
	require.NotContains(t, got, old, "acted on before the window")

	rec = b.do(t, req{method: http.MethodGet, path: "/api/digest/weekly?days=31", cookie: cookie})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

// downSource cannot be reached.
type downSource struct{}

func (downSource) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return nil, fmt.Errorf("dial tcp: lookup export.arxiv.org: no such host")
}

// When no source could be reached, today's empty deck says so in a sentence, and
// neither blames the arXiv calendar nor shows the network's text.
func TestAnEmptyDeckSaysTheSourcesWereDown(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: downSource{}}} }
	})
	ann := b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	_, err := pulse.NewStore(b.pool).AddTopic(context.Background(), ann.ID, pulse.Topic{Name: "retrieval", Query: "retrieval"})
	require.NoError(t, err)
	_, err = b.app.PulseGen.Run(context.Background(), ann.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	rec := b.do(t, req{method: http.MethodGet, path: "/api/pulse/today", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "None of the paper sources could be reached for today's deck")
	require.NotContains(t, rec.Body.String(), "arXiv announced nothing")
	requireNoNetworkText(t, rec.Body.String())
}
