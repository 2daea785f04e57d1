package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/search"
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

// A user asks for today's deck through POST /api/jobs, rates thirty-odd papers of
// it, and pulse.train_classifier enqueued the same way retrains at once: the new
// model is stored signed and verifies, and the next deck weighs it in.
func TestPulseTrainsTheClassifierOnDemand(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: fieldSource{}}} }
	})
	ann := b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
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
