package learning

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

type testBundle struct {
	pool  *pgxpool.Pool
	store *Store
	now   time.Time
	user  uuid.UUID
	deck  uuid.UUID
}

// setup gives a user with one deck and a store on a clock the test moves.
func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{pool: dbtest.NewDB(t), now: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)}
	b.store = New(b.pool).WithClock(func() time.Time { return b.now })
	b.user = b.newUser(t, "ann@example.org")
	require.NoError(t, b.pool.QueryRow(context.Background(), `INSERT INTO decks (user_id, name) VALUES ($1, 'Methods') RETURNING id`, b.user).Scan(&b.deck))
	return b
}

func (b *testBundle) newUser(t *testing.T, email string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.pool.QueryRow(context.Background(), `INSERT INTO users (email) VALUES ($1) RETURNING id`, email).Scan(&id))
	return id
}

func (b *testBundle) card(t *testing.T, front string) uuid.UUID {
	t.Helper()
	c, err := b.store.CreateCard(context.Background(), b.user, NewCard{DeckID: b.deck, CardType: "basic", Front: front, Back: "back",
		Tags: []string{}, Status: "active"})
	require.NoError(t, err)
	return c.ID
}

func (b *testBundle) review(t *testing.T, card uuid.UUID, rating int) ReviewResult {
	t.Helper()
	ms := 3000
	res, err := b.store.Review(context.Background(), b.user, ReviewInput{CardID: card, Rating: rating, DurationMS: &ms}, b.now)
	require.NoError(t, err)
	return res
}

// snapshot is the card's row and the user's day counts as text.
func (b *testBundle) snapshot(t *testing.T, card uuid.UUID) string {
	t.Helper()
	var row, days string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT concat_ws('|', fsrs_state, step, stability, difficulty, due_at, last_review_at, reps, lapses, status, front, back)
		  FROM cards WHERE id = $1`, card).Scan(&row))
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT coalesce(string_agg(concat_ws('|', log_date, cards_reviewed, review_ms), ';' ORDER BY log_date), '')
		  FROM daily_log WHERE user_id = $1 AND cards_reviewed > 0`, b.user).Scan(&days))
	return row + " / " + days
}

// Undoing a review puts the card back exactly as it was, through every state of
// the scheduler: new, learning steps, review, a lapse into relearning.
func TestUndoRestoresTheCardAsItWas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	card := b.card(t, "What does RRF fuse?")
	steps := []struct {
		rating  int
		advance time.Duration
	}{
		{3, 0}, {1, 2 * time.Minute}, {2, 90 * time.Second}, {3, 6 * time.Minute}, {3, 11 * time.Minute},
		{3, 4 * 24 * time.Hour}, {1, 20 * 24 * time.Hour}, {2, 11 * time.Minute}, {3, 12 * time.Minute}, {4, 30 * 24 * time.Hour},
	}
	for i, s := range steps {
		b.now = b.now.Add(s.advance)
		before := b.snapshot(t, card)
		first := b.review(t, card, s.rating)
		require.NotEqual(t, before, b.snapshot(t, card))
		undone, err := b.store.UndoReview(ctx, b.user, first.ReviewID)
		require.NoError(t, err, "step %d", i)
		require.Equal(t, before, b.snapshot(t, card), "step %d (rating %d): undo restores the card and the day's counts", i, s.rating)
		require.Equal(t, card, undone.ID)
		var logs int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM review_logs WHERE id = $1`, first.ReviewID).Scan(&logs))
		require.Zero(t, logs, "the review is gone from the log")
		again := b.review(t, card, s.rating)
		require.WithinDuration(t, first.Card.DueAt, again.Card.DueAt, 0, "step %d: rating again after the undo schedules as the first time", i)
		require.Equal(t, first.Card.State, again.Card.State)
	}
}

// Only a card's latest review is undone, and only by its owner.
func TestUndoOnlyTheLatestReviewOfYourOwn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	card := b.card(t, "What does RRF fuse?")
	first := b.review(t, card, 3)
	b.now = b.now.Add(11 * time.Minute)
	second := b.review(t, card, 3)
	_, err := b.store.UndoReview(ctx, b.user, first.ReviewID)
	require.ErrorIs(t, err, ErrNotLastReview)
	bob := b.newUser(t, "bob@example.org")
	before := b.snapshot(t, card)
	_, err = b.store.UndoReview(ctx, bob, second.ReviewID)
	require.ErrorIs(t, err, ErrNotFound, "another user's review answers as a missing one")
	require.Equal(t, before, b.snapshot(t, card))
	_, err = b.store.UndoReview(ctx, b.user, uuid.New())
	require.ErrorIs(t, err, ErrNotFound)
	_, err = b.store.UndoReview(ctx, b.user, second.ReviewID)
	require.NoError(t, err)
	_, err = b.store.UndoReview(ctx, b.user, first.ReviewID)
	require.NoError(t, err, "once the later review is undone, the earlier one is the latest")
	c, err := b.store.Card(ctx, b.user, card, b.now)
	require.NoError(t, err)
	require.Equal(t, "new", c.State)
	require.Zero(t, c.Reps)
}

// A card rated Again comes back in the same session once its step (1 minute)
// has passed, ahead of older overdue reviews; until then the queue says when.
func TestLearningCardComesBackAfterItsStep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for range 3 {
		_, err := b.pool.Exec(ctx, `INSERT INTO cards (user_id, deck_id, front, back, fsrs_state, stability, difficulty, due_at, last_review_at, reps)
			VALUES ($1, $2, 'an old review', 'b', 2, 5, 5, $3, $4, 3)`, b.user, b.deck, b.now.Add(-72*time.Hour), b.now.Add(-9*24*time.Hour))
		require.NoError(t, err)
	}
	card := b.card(t, "What does RRF fuse?")
	rated := b.review(t, card, 1)
	require.Equal(t, "learning", rated.Card.State)
	require.WithinDuration(t, b.now.Add(time.Minute), rated.Card.DueAt, 0, "Again waits the first learning step")

	due, err := b.store.Due(ctx, b.user, nil, 10, b.now)
	require.NoError(t, err)
	require.Len(t, due, 3, "the overdue reviews only: the card rated Again waits its step")
	next, ok, err := b.store.NextLearningDue(ctx, b.user, nil, b.now)
	require.NoError(t, err)
	require.True(t, ok)
	require.WithinDuration(t, rated.Card.DueAt, next, 0, "the session knows when it comes back")

	b.now = b.now.Add(61 * time.Second)
	due, err = b.store.Due(ctx, b.user, nil, 1, b.now)
	require.NoError(t, err)
	require.Len(t, due, 1)
	require.Equal(t, card, due[0].ID, "once its step has passed it comes first, before older reviews")
	_, ok, err = b.store.NextLearningDue(ctx, b.user, nil, b.now)
	require.NoError(t, err)
	require.False(t, ok, "nothing else waits on a step")
}

// The card browser searches front, back and tags, filters by state, and pages.
func TestCardBrowserSearchesFiltersAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for i, f := range []string{"Reciprocal rank fusion", "BM25 weights terms", "Dense retrieval", "Rank fusion again", "Cross-encoders rerank"} {
		_, err := b.store.CreateCard(ctx, b.user, NewCard{DeckID: b.deck, CardType: "basic", Front: f, Back: "b", Tags: []string{"ir", "t" + string(rune('a'+i))},
			Status: "active"})
		require.NoError(t, err)
		b.now = b.now.Add(time.Second)
	}
	page, err := b.store.Cards(ctx, b.user, CardListParams{Query: "FUSION", Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2, "case-folded search of the front")
	page, err = b.store.Cards(ctx, b.user, CardListParams{Query: "tc", Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1, "and of the tags")
	require.Equal(t, "Dense retrieval", page.Items[0].Front)

	seen := map[uuid.UUID]bool{}
	p := CardListParams{Limit: 2}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		page, err := b.store.Cards(ctx, b.user, p)
		require.NoError(t, err)
		for _, c := range page.Items {
			require.False(t, seen[c.ID], "a card on two pages")
			seen[c.ID] = true
		}
		if page.NextOffset == nil {
			break
		}
		p.Offset = *page.NextOffset
	}
	require.Len(t, seen, 5, "the pages hold every card once")

	first := page.Items[0].ID
	b.review(t, first, 3)
	page, err = b.store.Cards(ctx, b.user, CardListParams{State: "learning", Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, first, page.Items[0].ID)
	page, err = b.store.Cards(ctx, b.newUser(t, "bob@example.org"), CardListParams{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, page.Items, "another user sees none of them")
}

// Drafts wait for the user: they are not new cards in the analytics.
func TestAnalyticsCountsNoDrafts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.card(t, "accepted")
	for _, f := range []string{"draft one", "draft two"} {
		_, err := b.store.CreateCard(ctx, b.user, NewCard{DeckID: b.deck, CardType: "cloze", Front: f + " ____", Back: "x", Tags: []string{}, Status: "draft"})
		require.NoError(t, err)
	}
	a, err := b.store.Analytics(ctx, b.user, 30, b.now)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"new": 1}, a.CardsByState)
}

// A cloze card's back shows its sentence apart from the answer, with where the
// sentence stands in its passage (rune offsets) and on which page.
func TestClozeCardSource(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	content := "Über die Methode.\nReciprocal rank fusion combines several\nranked lists into one ranking without training. More."
	var paper, chunk uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('Fusion', 'arxiv', 'public') RETURNING id`).Scan(&paper))
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		VALUES ($1, 0, $2, 3, 3, 0, length($2), 30) RETURNING id`, paper, content).Scan(&chunk))
	page := 3
	for _, back := range []string{"ranked lists", "ranked lists\n\nReciprocal rank fusion combines several ranked lists into one ranking without training."} {
		c, err := b.store.CreateCard(ctx, b.user, NewCard{DeckID: b.deck, PaperID: &paper, ChunkID: &chunk, PageNumber: &page, CardType: "cloze",
			Front: "Reciprocal rank fusion combines several ____ into one ranking without training.", Back: back, Tags: []string{}, Status: "active"})
		require.NoError(t, err)
		got, err := b.store.Card(ctx, b.user, c.ID, b.now)
		require.NoError(t, err)
		require.Equal(t, "ranked lists", got.Answer())
		require.NotNil(t, got.Source)
		require.Equal(t, "Reciprocal rank fusion combines several ranked lists into one ranking without training.", got.Source.Sentence)
		require.Equal(t, paper, got.Source.PaperID)
		require.Equal(t, chunk, *got.Source.ChunkID)
		require.Equal(t, 3, *got.Source.Page)
		runes := []rune(content)
		require.NotNil(t, got.Source.Start)
		require.Equal(t, "Reciprocal rank fusion combines several\nranked lists into one ranking without training.",
			string(runes[*got.Source.Start:*got.Source.End]), "offsets count runes (Ü is one)")
		require.Equal(t, utf8.RuneCountInString("Über die Methode.\n"), *got.Source.Start)
	}
}

// The due queue in one round trip: each card's preview uses its own deck's
// settings, cards of several decks come in one read, and the next learning
// card's time comes with them, the same as NextLearningDue's.
func TestQueuePreviewsEachCardWithItsOwnDeck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var loose uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO decks (user_id, name, desired_retention) VALUES ($1, 'Loose', 0.75) RETURNING id`, b.user).Scan(&loose))
	_, err := b.pool.Exec(ctx, `UPDATE decks SET desired_retention = 0.97 WHERE id = $1`, b.deck)
	require.NoError(t, err)
	for _, deck := range []uuid.UUID{b.deck, loose} {
		// The same memory state in both decks, due a day ago.
		_, err := b.pool.Exec(ctx, `INSERT INTO cards (user_id, deck_id, front, back, fsrs_state, stability, difficulty, due_at, last_review_at, reps)
			VALUES ($1, $2, 'a review', 'b', 2, 10, 5, $3, $4, 3)`, b.user, deck, b.now.Add(-24*time.Hour), b.now.Add(-11*24*time.Hour))
		require.NoError(t, err)
	}
	rated := b.review(t, b.card(t, "on a step"), 1)

	q, err := b.store.Queue(ctx, b.user, nil, 10, b.now)
	require.NoError(t, err)
	require.Len(t, q.Cards, 2)
	good := map[uuid.UUID]string{}
	for _, c := range q.Cards {
		require.Len(t, c.Next, 4)
		good[c.DeckID] = c.Next[2].Interval
	}
	require.NotEqual(t, good[b.deck], good[loose], "a deck asking for 97% retention schedules Good sooner than one asking for 75%")
	require.NotNil(t, q.NextLearningDue)
	require.WithinDuration(t, rated.Card.DueAt, *q.NextLearningDue, 0)

	due, err := b.store.Due(ctx, b.user, nil, 10, b.now)
	require.NoError(t, err)
	require.Equal(t, q.Cards, due)
	one, err := b.store.Queue(ctx, b.user, &loose, 10, b.now)
	require.NoError(t, err)
	require.Len(t, one.Cards, 1)
	require.Equal(t, loose, one.Cards[0].DeckID)
	require.Equal(t, good[loose], one.Cards[0].Next[2].Interval)
	require.Nil(t, one.NextLearningDue, "the card on a step is in the other deck")
}
