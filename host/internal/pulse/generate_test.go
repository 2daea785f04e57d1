package pulse_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The night of Wednesday 25 November 2026, UTC.
var night = time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)

// shelf is a paper source answering every query with the same recent papers: the
// nightly discovery of a small field.
type shelf struct{ papers []paper.Paper }

func (s shelf) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return &source.Page{Papers: s.papers}, nil
}

func recent(title, abstract, arxiv string, daysAgo int, authors ...string) paper.Paper {
	d := night.AddDate(0, 0, -daysAgo)
	p := paper.Paper{Title: title, Abstract: abstract, IDs: paper.IDs{ArXivID: arxiv}, Source: "arxiv",
		Published: paper.Date{Year: d.Year(), Month: int(d.Month()), Day: d.Day(), Precision: paper.PrecisionDay}}
	for _, a := range authors {
		p.Authors = append(p.Authors, paper.Author{Name: a})
	}
	return p
}

var field = []paper.Paper{
	recent("Reciprocal rank fusion for hybrid dense and lexical retrieval",
		"We combine BM25 and dense retrieval rankings with reciprocal rank fusion and show gains on passage retrieval benchmarks.", "2611.00001", 1, "Grace Hopper"),
	recent("Learned sparse retrieval with lexical expansion",
		"A sparse lexical retrieval model that expands queries and documents, evaluated on passage ranking.", "2611.00002", 2),
	recent("Dense passage retrieval at scale with quantised indexes",
		"Product quantisation of dense retrieval indexes keeps recall while cutting memory for passage ranking.", "2611.00003", 3),
	recent("Seasonal migration of Arctic terns",
		"We tracked forty terns with geolocators across three breeding seasons and describe their stopover sites.", "2611.00004", 1),
	recent("Soil microbiome responses to drought",
		"Drought reshapes soil bacterial communities; we sequence samples from twelve sites over two years.", "2611.00005", 2),
	recent("Query performance prediction for neural rankers",
		"Predicting the effectiveness of neural retrieval rankers without relevance judgements.", "2611.00006", 4),
}

type bench struct {
	pool  *pgxpool.Pool
	gen   *pulse.Generator
	store *pulse.Store
	ann   uuid.UUID
	key   []byte
}

func setup(t *testing.T) *bench { return setupWith(t, field) }

func setupWith(t *testing.T, found []paper.Paper) *bench {
	return setupSource(t, shelf{found})
}

func setupSource(t *testing.T, src search.Searcher) *bench {
	t.Helper()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	keys, err := secrets.NewKeyring("", "")
	require.NoError(t, err)
	gw := llmgw.New(llmgw.Config{Settings: userconfig.New(pool, keys), Builtin: extractive.New(nil), Logger: slog.New(slog.DiscardHandler)})
	embedder := llmgw.Embedder{G: gw}
	svc := search.New(pool, func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: src}} })
	key := []byte("a-dedicated-model-signing-key-of-32+chars")
	st := pulse.NewStore(pool)
	gen := &pulse.Generator{Store: st, Papers: papers.New(pool), Discover: svc.Search,
		Embed: func(ctx context.Context, texts []string) ([][]float32, error) {
			r, err := embedder.Embed(ctx, texts)
			return r.Vectors, err
		},
		Key: func() ([]byte, error) { return key, nil }, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return night }}
	_, err = st.AddTopic(ctx, ann, pulse.Topic{Name: "hybrid retrieval", Query: "dense lexical passage retrieval ranking fusion"})
	require.NoError(t, err)
	return &bench{pool: pool, gen: gen, store: st, ann: ann, key: key}
}

func (b *bench) paperID(t *testing.T, arxiv string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT id FROM papers WHERE arxiv_id = $1`, arxiv).Scan(&id))
	return id
}

func titles(t *testing.T, b *bench, d pulse.Deck) []string {
	t.Helper()
	var out []string
	for _, c := range d.Cards {
		var title string
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT title FROM papers WHERE id = $1`, c.PaperID).Scan(&title))
		out = append(out, title)
	}
	return out
}

func TestTheDeckFollowsWhatTheUserFollows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.store.FollowAuthor(ctx, b.ann, pulse.Author{Name: "grace hopper"})
	require.NoError(t, err)

	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.Equal(t, "2026-11-26", d.Date)
	require.False(t, d.Stale)
	require.Len(t, d.Cards, len(field))
	got := titles(t, b, d)
	require.Equal(t, "Reciprocal rank fusion for hybrid dense and lexical retrieval", got[0], "on topic, recent and by a followed author")
	last2 := got[len(got)-2:]
	require.ElementsMatch(t, []string{"Seasonal migration of Arctic terns", "Soil microbiome responses to drought"}, last2)
	require.Contains(t, d.Cards[0].Why, "By Grace Hopper, whom you follow")
	require.Equal(t, 1.0, d.Cards[0].Signals[score.AuthorBonus])
	require.Equal(t, len(field), d.Stats.CandidateCount)
	require.Equal(t, "ok", d.Stats.Sources["arxiv"].Status)
	require.False(t, d.Stats.Classifier.Available)
	require.Contains(t, d.Stats.Classifier.Degradation, "No classifier yet")

	// Suggestions are instance-level discoveries: in nobody's library.
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM user_library`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM papers WHERE discovered_by IS NOT NULL`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM pulse_runs WHERE user_id = $1 AND status = 'ok'`, b.ann).Scan(&n))
	require.Equal(t, 1, n)
}

// Every reason a paper must not be suggested keeps it out of the deck: trashed,
// done, already in the library, turned down lately (as a thumb or a dismissal).
func TestExcludedPapersNeverReachTheDeck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.gen.Run(ctx, b.ann, "2026-11-26") // brings the papers into the corpus
	require.NoError(t, err)
	st := papers.New(b.pool)
	trash, done := "trash", "done"
	excluded := map[string]string{}
	_, err = st.SetState(ctx, b.ann, b.paperID(t, "2611.00001"), papers.StatePatch{State: &trash})
	require.NoError(t, err)
	excluded["2611.00001"] = "trashed"
	_, err = st.SetState(ctx, b.ann, b.paperID(t, "2611.00002"), papers.StatePatch{State: &done})
	require.NoError(t, err)
	excluded["2611.00002"] = "done"
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if err := papers.AddToLibraryTx(ctx, tx, b.ann, b.paperID(t, "2611.00003"), "pulse_save"); err != nil {
			return err
		}
		if err := papers.GiveFeedbackTx(ctx, tx, b.ann, b.paperID(t, "2611.00006"), false, papers.FeedbackPulse, ""); err != nil {
			return err
		}
		return papers.GiveFeedbackTx(ctx, tx, b.ann, b.paperID(t, "2611.00005"), false, papers.FeedbackDismiss, "")
	}))
	excluded["2611.00003"], excluded["2611.00006"], excluded["2611.00005"] = "in the library", "down-voted", "dismissed"

	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	for arxiv, why := range excluded {
		id := b.paperID(t, arxiv)
		for _, c := range d.Cards {
			require.NotEqual(t, id, c.PaperID, "a paper %s is never suggested", why)
		}
	}
	require.Len(t, d.Cards, len(field)-len(excluded))

	// The recommendations keep the same papers out.
	recs, err := b.gen.Recommend(ctx, b.ann, 20)
	require.NoError(t, err)
	require.Len(t, recs, len(field)-len(excluded))
	for arxiv, why := range excluded {
		for _, c := range recs {
			require.NotEqual(t, b.paperID(t, arxiv), c.PaperID, "a paper %s is never recommended", why)
		}
	}

	// A down-vote older than 60 days no longer excludes.
	_, err = b.pool.Exec(ctx, `UPDATE recommendation_feedback SET created_at = now() - interval '61 days' WHERE source = 'pulse_thumbs'`)
	require.NoError(t, err)
	d, err = b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.Len(t, d.Cards, len(field)-len(excluded)+1)
}

// A stored classifier with one flipped byte is not loaded: the deck is still
// made, with no classifier signal, and its diagnostics say why.
func TestATamperedClassifierIsNotLoaded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var examples []classifier.Example
	for i := range 60 {
		rel := float64(i%10) / 10
		examples = append(examples, classifier.Example{Signals: map[string]float64{score.Embedding: rel, score.Topic: rel},
			Positive: i%10 >= 5, At: night.Add(-time.Duration(i) * time.Hour)})
	}
	m, err := classifier.Train(examples, night)
	require.NoError(t, err)
	blob, tag, err := classifier.Seal(m, b.ann, b.key)
	require.NoError(t, err)
	require.NoError(t, b.store.SaveModel(ctx, b.ann, pulse.StoredModel{Blob: blob, Tag: tag, Version: classifier.Version, SampleCount: m.Samples}, nil))
	set := pulse.DefaultSettings()
	set.Weights[score.Classifier] = 0.5
	require.NoError(t, b.store.PutSettings(ctx, b.ann, set))

	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.True(t, d.Stats.Classifier.Available, d.Stats.Classifier.Degradation)
	require.Positive(t, d.Cards[0].Signals[score.Classifier])

	blob[len(blob)/2] ^= 0x01
	require.NoError(t, b.store.SaveModel(ctx, b.ann, pulse.StoredModel{Blob: blob, Tag: tag, Version: classifier.Version, SampleCount: m.Samples}, nil))
	d, err = b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.NotEmpty(t, d.Cards, "the deck is still made")
	require.False(t, d.Stats.Classifier.Available)
	require.Equal(t, "The stored classifier did not match its signature, so it was not loaded; the deck is scored without it until the next training replaces it.",
		d.Stats.Classifier.Degradation)
	for _, c := range d.Cards {
		require.Zero(t, c.Signals[score.Classifier])
	}
}

// A relevance model that fails or hangs leaves a deck ranked without it, marked
// degraded; a judgement that works adds its signals.
func TestJudgementsThatFailDegradeTheDeck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.gen.JudgeTimeout = 50 * time.Millisecond
	b.gen.Judge = func(ctx context.Context, interests, title, abstract string) (pulse.Judgement, error) {
		if title == "Seasonal migration of Arctic terns" {
			<-ctx.Done()
			return pulse.Judgement{}, ctx.Err()
		}
		if title == "Soil microbiome responses to drought" {
			return pulse.Judgement{}, fmt.Errorf("the model refused")
		}
		return pulse.Judgement{Relevance: 9, Novelty: 6, Reason: "On hybrid retrieval."}, nil
	}
	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.Equal(t, "The relevance model could not judge 2 of 6 papers in time; they are ranked by similarity, topics, recency and authors alone.",
		d.DegradedReason)
	require.Equal(t, 4, d.Stats.Stage2Scored)
	require.Equal(t, 0.9, d.Cards[0].Signals[score.LLMRelevance])
	require.Equal(t, "On hybrid retrieval.", d.Cards[0].Reason)
	var status string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT status FROM pulse_runs WHERE user_id = $1`, b.ann).Scan(&status))
	require.Equal(t, "degraded", status)
}

// Today falls back to the last deck with cards in the past week, marked stale.
func TestTodayFallsBackToTheLastDeck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	_, err = b.store.SaveDeck(ctx, b.ann, "2026-11-28", nil, pulse.Stats{Quiet: "arXiv announced nothing."})
	require.NoError(t, err)
	d, err := b.store.Today(ctx, b.ann, "2026-11-28")
	require.NoError(t, err)
	require.True(t, d.Stale)
	require.Equal(t, 2, d.StaleAgeDays)
	require.Equal(t, "2026-11-26", d.Date)
	require.NotEmpty(t, d.Cards)
	require.NotNil(t, d.StaleDiagnostics)
	require.Equal(t, "arXiv announced nothing.", d.StaleDiagnostics.Quiet, "tonight's diagnostics go with the stale deck")
	_, err = b.store.Today(ctx, b.ann, "2026-12-10")
	require.ErrorIs(t, err, pulse.ErrNotFound, "older than a week")

	var bob uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	_, err = b.store.Today(ctx, bob, "2026-11-26")
	require.ErrorIs(t, err, pulse.ErrNotFound, "Ann's deck is not Bob's")
}

// The night after Thanksgiving arXiv announced nothing: the empty deck says so
// rather than looking like a failure.
func TestAnEmptyArxivNightIsExplained(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil)
	b.gen.Now = func() time.Time { return time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC) }
	d, err := b.gen.Run(context.Background(), b.ann, "2026-11-27")
	require.NoError(t, err)
	require.Empty(t, d.Cards)
	require.Equal(t, "ok", d.Stats.Sources["arxiv"].Status)
	require.Equal(t, "arXiv announced nothing new since Wednesday, 25 November 20:00 US Eastern time: arXiv does not announce on Thanksgiving.",
		d.Stats.Quiet)
}

// down is a source that cannot be reached.
type down struct{}

func (down) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return nil, fmt.Errorf("dial tcp: lookup export.arxiv.org: no such host")
}

// A night every source failed is not explained by the arXiv calendar (arXiv did
// not answer): the deck says the source could not be reached, in words.
func TestANightTheSourcesFailedIsNotCalledQuiet(t *testing.T) {
	t.Parallel()
	b := setupSource(t, down{})
	b.gen.Now = func() time.Time { return time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC) }
	d, err := b.gen.Run(context.Background(), b.ann, "2026-11-27")
	require.NoError(t, err, "a failing source never fails the run")
	require.Empty(t, d.Cards)
	require.Empty(t, d.Stats.Quiet)
	require.Equal(t, "error", d.Stats.Sources["arxiv"].Status)
	require.NotContains(t, d.Stats.Sources["arxiv"].Message, "dial tcp")
	require.Contains(t, d.Stats.Sources["arxiv"].Message, "no other source answered either",
		"with every source down there are no others for the deck to use")
}

// graphShelf is shelf with a citation graph: the papers citing the paper with
// DOI cited.
type graphShelf struct {
	shelf
	cited  string
	citing []paper.Paper
	asked  *[]paper.IDs
}

func (g graphShelf) Citations(_ context.Context, req *source.CitationsRequest) (*source.Page, error) {
	*g.asked = append(*g.asked, req.IDs)
	if req.IDs.DOI != g.cited {
		return &source.Page{}, nil
	}
	return &source.Page{Papers: g.citing}, nil
}

// The papers citing a starred paper are candidates when they are recent; an old
// citing paper is not, and a source without a citation graph is no failure.
func TestPapersCitingAStarredPaperAreCandidates(t *testing.T) {
	t.Parallel()
	var asked []paper.IDs
	old := recent("An older work that cites the starred paper",
		"Dense passage retrieval with hard negatives, revisited for ranking.", "2001.00001", 400)
	fresh := recent("A new study building on the starred survey of dense retrieval",
		"We extend dense passage retrieval with late interaction and evaluate ranking.", "2611.00009", 2)
	src := graphShelf{shelf: shelf{field[:3]}, cited: "10.1145/3397271.3401075", citing: []paper.Paper{old, fresh}, asked: &asked}
	b := setupSource(t, src)
	ctx := context.Background()
	var starred uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var err error
		starred, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{DOI: "10.1145/3397271.3401075",
			Title: "Dense passage retrieval for open-domain question answering"}, b.ann, "manual_save")
		if err != nil {
			return err
		}
		return papers.SetStateTx(ctx, tx, b.ann, starred, papers.StatePatch{Starred: ptr(true)})
	}))

	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.Equal(t, []paper.IDs{{DOI: "10.1145/3397271.3401075"}}, asked, "the starred paper's citing papers were asked for")
	got := titles(t, b, d)
	require.Contains(t, got, fresh.Title)
	require.NotContains(t, got, old.Title, "older than the lookback")
	require.Equal(t, "ok", d.Stats.Sources["arxiv"].Status)
}

func TestASourceWithoutACitationGraphIsNoFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		id, _, err := papers.UpsertForUserTx(ctx, tx, papers.Input{DOI: "10.1145/3397271.3401075", Title: "Dense passage retrieval"}, b.ann, "manual_save")
		if err != nil {
			return err
		}
		return papers.SetStateTx(ctx, tx, b.ann, id, papers.StatePatch{Starred: ptr(true)})
	}))
	d, err := b.gen.Run(ctx, b.ann, "2026-11-26")
	require.NoError(t, err)
	require.Equal(t, "ok", d.Stats.Sources["arxiv"].Status)
	require.Len(t, d.Cards, len(field))
	var failures int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT consecutive_failures FROM pulse_source_health WHERE user_id = $1 AND source = 'arxiv'`, b.ann).Scan(&failures))
	require.Zero(t, failures)
}

func ptr[T any](v T) *T { return &v }
