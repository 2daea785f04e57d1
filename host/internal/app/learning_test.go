package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

type obj = map[string]any

func (b *testBundle) deckAndCard(t *testing.T, cookie string) (string, string) {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/decks", cookie: cookie, body: obj{"name": "Methods", "desired_retention": 0.85}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	deck := decode[obj](t, rec.Body.Bytes())["id"].(string)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: cookie, body: obj{"deck_id": deck, "front": "What does RRF fuse?", "back": "Ranks"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return deck, decode[obj](t, rec.Body.Bytes())["id"].(string)
}

func TestCardsAndReviews(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	deck, card := b.deckAndCard(t, ann)

	rec := b.do(t, req{method: http.MethodGet, path: "/api/cards/" + card, cookie: ann})
	require.Equal(t, http.StatusOK, rec.Code)
	c := decode[obj](t, rec.Body.Bytes())
	require.Equal(t, "new", c["state"])
	next := c["next"].([]any)
	require.Len(t, next, 4, "the interval each rating would give")
	require.Equal(t, "Again", next[0].(obj)["label"])
	require.Equal(t, "1m", next[0].(obj)["interval"], "py-fsrs's first learning step")
	require.Equal(t, "10m", next[2].(obj)["interval"])

	rec = b.do(t, req{method: http.MethodGet, path: "/api/reviews/due?deck_id=" + deck, cookie: ann})
	require.Len(t, decode[struct{ Items []obj }](t, rec.Body.Bytes()).Items, 1)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews", cookie: ann, body: obj{"card_id": card, "rating": 3, "duration_ms": 4200}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	after := decode[struct{ Card obj }](t, rec.Body.Bytes()).Card
	require.Equal(t, "learning", after["state"])
	require.EqualValues(t, 1, after["reps"])
	due, err := time.Parse(time.RFC3339Nano, after["due_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(10*time.Minute), due, time.Minute)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/reviews/due?deck_id=" + deck, cookie: ann})
	require.Empty(t, decode[struct{ Items []obj }](t, rec.Body.Bytes()).Items, "not due again for ten minutes")

	var logged, reviewed, reviewMS int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM review_logs`).Scan(&logged))
	require.Equal(t, 1, logged)
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT cards_reviewed, review_ms FROM daily_log`).Scan(&reviewed, &reviewMS))
	require.Equal(t, 1, reviewed)
	require.Equal(t, 4200, reviewMS)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews", cookie: ann, body: obj{"card_id": card, "rating": 5}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	// A draft waits for the user; it cannot be reviewed until accepted.
	rec = b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: ann, body: obj{"deck_id": deck, "front": "Draft", "status": "draft"}})
	draft := decode[obj](t, rec.Body.Bytes())["id"].(string)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews", cookie: ann, body: obj{"card_id": draft, "rating": 3}})
	require.Equal(t, http.StatusConflict, rec.Code)
	rec = b.do(t, req{method: http.MethodPatch, path: "/api/cards/" + draft, cookie: ann, body: obj{"status": "active"}})
	require.Equal(t, http.StatusOK, rec.Code)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews", cookie: ann, body: obj{"card_id": draft, "rating": 3}})
	require.Equal(t, http.StatusOK, rec.Code)

	rec = b.do(t, req{method: http.MethodPatch, path: "/api/cards/" + draft, cookie: ann, body: obj{"status": "buried"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "burying needs a time")
}

// A client that retries a batch while the first copy is still being applied (a
// phone on a flaky connection) gets the same answer twice, never a 500, and each
// review is logged once.
func TestTheSameBatchTwiceAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	_, card := b.deckAndCard(t, ann)
	t0 := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	const rounds = 10
	for round := range rounds {
		// Each round is a new batch, later than the last, sent four times at once.
		at := t0.Add(time.Duration(round) * time.Hour)
		batch := obj{"reviews": []obj{
			{"card_id": card, "rating": 3, "client_id": fmt.Sprintf("tab-%d-1", round), "reviewed_at": at.Format(time.RFC3339)},
			{"card_id": card, "rating": 4, "client_id": fmt.Sprintf("tab-%d-2", round), "reviewed_at": at.Add(10 * time.Minute).Format(time.RFC3339)},
		}}
		var wg sync.WaitGroup
		recs := make([]*httptest.ResponseRecorder, 4)
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				recs[i] = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: ann, body: batch})
			}()
		}
		wg.Wait()
		for _, rec := range recs {
			require.Equal(t, http.StatusOK, rec.Code, "round %d: %s", round, rec.Body.String())
			for _, item := range decode[obj](t, rec.Body.Bytes())["results"].([]any) {
				status := item.(map[string]any)["status"]
				require.Contains(t, []any{"applied", "duplicate"}, status, "round %d: a copy is a duplicate, not refused: %s", round, rec.Body.String())
			}
		}
	}
	var logged int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM review_logs WHERE card_id = $1`, card).Scan(&logged))
	require.Equal(t, 2*rounds, logged, "each review once")
}

func TestOfflineBatchIsIdempotentAndOrdered(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	annUser := b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	_, card := b.deckAndCard(t, ann)
	t0 := time.Now().Add(-3 * time.Hour).UTC().Truncate(time.Second)
	// Sent out of order: the host applies them in time order.
	batch := obj{"reviews": []obj{
		{"card_id": card, "rating": 3, "client_id": "phone-2", "reviewed_at": t0.Add(20 * time.Minute).Format(time.RFC3339)},
		{"card_id": card, "rating": 3, "client_id": "phone-1", "reviewed_at": t0.Format(time.RFC3339)},
		{"card_id": card, "rating": 3, "client_id": "phone-3", "reviewed_at": t0.Add(40 * time.Minute).Format(time.RFC3339)},
	}}
	rec := b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: ann, body: batch})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	res := decode[obj](t, rec.Body.Bytes())
	require.EqualValues(t, 3, res["applied"])

	snapshot := func() string {
		var s string
		require.NoError(t, b.pool.QueryRow(ctx, `
			SELECT (SELECT string_agg(client_id || ':' || state_before || '>' || state_after || '@' || reviewed_at, ',' ORDER BY reviewed_at) FROM review_logs)
			       || '|' || (SELECT c::text FROM cards c WHERE c.id = $1)`, card).Scan(&s))
		return s
	}
	first := snapshot()
	require.Contains(t, first, "phone-1:0>1", "the earliest review met the new card")
	require.Contains(t, first, "phone-2:1>2", "the second graduated it to review (steps 1 m, 10 m)")
	require.Contains(t, first, "phone-3:2>2")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: ann, body: batch})
	require.Equal(t, http.StatusOK, rec.Code)
	res = decode[obj](t, rec.Body.Bytes())
	require.EqualValues(t, 0, res["applied"])
	require.EqualValues(t, 3, res["duplicates"])
	require.Equal(t, first, snapshot(), "the same batch twice changes nothing the second time")

	// Captured offline while the session was within its grace window.
	graceSession := b.insertSession(t, annUser.ID, time.Now().Add(-23*time.Hour))
	late := obj{"reviews": []obj{{"card_id": card, "rating": 4, "client_id": "phone-4", "reviewed_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}}}
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: graceSession, body: late})
	require.Equal(t, http.StatusOK, rec.Code, "a session in its grace window is accepted: %s", rec.Body.String())
	require.EqualValues(t, 1, decode[obj](t, rec.Body.Bytes())["applied"])

	_, err := b.pool.Exec(ctx, `UPDATE user_sessions SET revoked_at = now() WHERE token_hash = sha256($1::bytea)`, []byte(graceSession))
	require.NoError(t, err)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: graceSession, body: late})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "a revoked one is not")

	old := obj{"reviews": []obj{{"card_id": card, "rating": 3, "client_id": "stale", "reviewed_at": t0.Add(-time.Hour).Format(time.RFC3339)}}}
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: ann, body: old})
	require.Contains(t, rec.Body.String(), `"status":"rejected"`, "a review older than the card's last one is rejected alone")

	bad := obj{"reviews": []obj{{"card_id": card, "rating": 3}}}
	rec = b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: ann, body: bad})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "offline reviews need a client id and a time")
}

func TestAnalytics(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	u := b.user(t, "ann@example.org", "user")
	_, err := b.pool.Exec(ctx, `UPDATE users SET timezone = 'Pacific/Auckland' WHERE id = $1`, u.ID)
	require.NoError(t, err)
	ann := b.signIn(t, "ann@example.org")
	deck, card := b.deckAndCard(t, ann)

	loc, err := time.LoadLocation("Pacific/Auckland")
	require.NoError(t, err)
	noon := func(daysAgo int) time.Time {
		d := time.Now().In(loc).AddDate(0, 0, -daysAgo)
		return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc)
	}
	// Reviews on each of the last three local days, and one a week ago: streak 3.
	// Of the four reviews of mature cards (state_before 2), three were recalled.
	for i, rv := range []struct {
		at     time.Time
		rating int
		state  int
	}{{noon(0), 3, 2}, {noon(1), 1, 2}, {noon(2), 3, 2}, {noon(7), 4, 2}, {noon(1), 3, 0}} {
		if rv.at.After(time.Now()) {
			rv.at = time.Now().Add(-time.Minute)
		}
		_, err := b.pool.Exec(ctx, `
			INSERT INTO review_logs (user_id, card_id, rating, reviewed_at, duration_ms, state_before, state_after, stability_after, difficulty_after, elapsed_days, scheduled_days, client_id)
			VALUES ($1, $2, $3, $4, 2000, $5, 2, 3, 5, 1, 3, $6)`, u.ID, card, rv.rating, rv.at, rv.state, "c"+string(rune('a'+i)))
		require.NoError(t, err)
	}
	// One card overdue, one due in five days.
	rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: ann, body: obj{"deck_id": deck, "front": "later"}})
	later := decode[obj](t, rec.Body.Bytes())["id"].(string)
	_, err = b.pool.Exec(ctx, `UPDATE cards SET due_at = now() + interval '5 days', fsrs_state = 2, stability = 5, difficulty = 5 WHERE id = $1`, later)
	require.NoError(t, err)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/analytics?days=30", cookie: ann})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	a := decode[obj](t, rec.Body.Bytes())
	require.Equal(t, "Pacific/Auckland", a["timezone"])
	require.EqualValues(t, 3, a["streak_days"])
	require.EqualValues(t, 5, a["total_reviews"])
	require.EqualValues(t, 10, a["total_seconds"])
	require.EqualValues(t, 4, a["mature_reviews"])
	require.InDelta(t, 0.75, a["true_retention"], 1e-9)
	var mature, recalled float64
	for _, d := range a["reviews_per_day"].([]any) {
		day := d.(map[string]any)
		m, _ := day["mature"].(float64)
		r, _ := day["recalled"].(float64)
		require.LessOrEqual(t, r, m, "a day recalls no more than it reviews")
		mature, recalled = mature+m, recalled+r
	}
	require.EqualValues(t, 4, mature, "the days' mature reviews add up to the total")
	require.EqualValues(t, 3, recalled)
	forecast := a["due_forecast"].([]any)
	require.Len(t, forecast, 2, "today (the overdue card) and the day in five days")
	require.Equal(t, time.Now().In(loc).Format(time.DateOnly), forecast[0].(obj)["date"])
	require.EqualValues(t, 1, forecast[1].(obj)["due"])
	require.Equal(t, obj{"new": float64(1), "review": float64(1)}, a["cards_by_state"])

	rec = b.do(t, req{method: http.MethodGet, path: "/api/analytics?days=0", cookie: ann})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

func TestCardExportAndImport(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	deck, _ := b.deckAndCard(t, ann)
	rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: ann,
		body: obj{"deck_id": deck, "front": "Two\nlines\twith a tab", "back": "b", "tags": []string{"ml", "two words"}}})
	require.Equal(t, http.StatusCreated, rec.Code)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/decks/" + deck + "/export", cookie: ann})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "#separator:tab\n#html:false\n#tags column:3\n#deck:Methods\n"+
		"What does RRF fuse?\tRanks\t\n"+
		"Two<br>lines with a tab\tb\tml two_words\n", rec.Body.String())

	rec = b.do(t, req{method: http.MethodGet, path: "/api/decks/" + deck + "/export?format=csv", cookie: ann})
	require.Equal(t, http.StatusOK, rec.Code)
	exported := rec.Body.String()

	rec = b.do(t, req{method: http.MethodPost, path: "/api/decks", cookie: ann, body: obj{"name": "Copy"}})
	copyDeck := decode[obj](t, rec.Body.Bytes())["id"].(string)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/decks/" + copyDeck + "/import", cookie: ann, body: exported + ",no front,\n\"broken,quote\n"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	res := decode[struct {
		Imported int
		Errors   []struct {
			Line    int
			Message string
		}
	}](t, rec.Body.Bytes())
	require.Equal(t, 2, res.Imported, "the round trip keeps both cards")
	require.Len(t, res.Errors, 2)
	require.Equal(t, 5, res.Errors[0].Line, "the quoted two-line card takes lines 3 and 4")
	require.Contains(t, res.Errors[0].Message, "front is empty")

	rec = b.do(t, req{method: http.MethodGet, path: "/api/cards?deck_id=" + copyDeck, cookie: ann})
	items := decode[struct{ Items []obj }](t, rec.Body.Bytes()).Items
	require.Len(t, items, 2)
	fronts := []any{items[0]["front"], items[1]["front"]}
	require.Contains(t, fronts, "Two\nlines\twith a tab", "CSV keeps line breaks and tabs")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/decks/" + copyDeck + "/import", cookie: ann, body: "question,answer\nq,a\n"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

func TestCardsFilterByPaper(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	deck, plain := b.deckAndCard(t, ann)
	var paper string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`INSERT INTO papers (title, source, visibility) VALUES ('Cards of a paper', 'arxiv', 'public') RETURNING id`).Scan(&paper))
	rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: ann,
		body: map[string]any{"deck_id": deck, "front": "of the paper", "back": "b", "paper_id": paper}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	ofPaper := decode[obj](t, rec.Body.Bytes())["id"].(string)

	list := func(query string) []string {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/cards" + query, cookie: ann})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var ids []string
		for _, c := range decode[obj](t, rec.Body.Bytes())["items"].([]any) {
			ids = append(ids, c.(map[string]any)["id"].(string))
		}
		return ids
	}
	require.ElementsMatch(t, []string{plain, ofPaper}, list(""))
	require.Equal(t, []string{ofPaper}, list("?paper_id="+paper))
	require.Empty(t, list("?paper_id="+uuid.NewString()))
	rec = b.do(t, req{method: http.MethodGet, path: "/api/cards?paper_id=nope", cookie: ann})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}
