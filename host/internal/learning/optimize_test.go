package learning

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/fsrs"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

// TestOptimizeJobFitsTheOwnersHistory runs fsrs.optimize through the real queue on a
// user whose review history is the shared real review log, and checks the fitted
// parameters are applied because they predict that history better.
func TestOptimizeJobFitsTheOwnersHistory(t *testing.T) {
	t.Parallel()
	raw := fixturetest.Read(t, "fsrs/py-fsrs_review_logs_josh_1711744352250_to_1728234780857.csv")
	reviews, err := fsrs.ReadReviewLog(bytes.NewReader(raw))
	require.NoError(t, err)
	pool := dbtest.NewDB(t)
	ctx := context.Background()

	var user, other, deck uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&other))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO decks (user_id, name) VALUES ($1, 'imported') RETURNING id`, user).Scan(&deck))
	cards := map[string]uuid.UUID{}
	var cardIDs, logCards []uuid.UUID
	var ratings []int16
	var times []time.Time
	for _, rv := range reviews {
		id, ok := cards[rv.CardID]
		if !ok {
			id = uuid.New()
			cards[rv.CardID] = id
			cardIDs = append(cardIDs, id)
		}
		logCards, ratings, times = append(logCards, id), append(ratings, int16(rv.Rating)), append(times, rv.Time)
	}
	_, err = pool.Exec(ctx, `INSERT INTO cards (id, user_id, deck_id, front, back) SELECT id, $2, $3, 'q', 'a' FROM unnest($1::uuid[]) id`, cardIDs, user, deck)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO review_logs (user_id, card_id, rating, reviewed_at, state_before, state_after, stability_after, difficulty_after, elapsed_days, scheduled_days)
		SELECT $1, c, r, t, 0, 2, 1, 5, 0, 1 FROM unnest($2::uuid[], $3::smallint[], $4::timestamptz[]) AS u(c, r, t)`, user, logCards, ratings, times)
	require.NoError(t, err)

	reg := jobs.NewRegistry()
	require.NoError(t, RegisterJobs(reg, pool, nil))
	svc, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	require.NoError(t, err)
	require.NoError(t, svc.Start(ctx))
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })

	env, err := svc.Enqueue(ctx, user, OptimizeArgs{})
	require.NoError(t, err)
	var state string
	var output []byte
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT state, coalesce(metadata->'output', 'null') FROM river_job WHERE id = $1`, env.ID).Scan(&state, &output))
		if state == "completed" || state == "discarded" || state == "cancelled" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Equal(t, "completed", state, "output: %s", output)

	var params fsrs.Params
	var stored []byte
	require.NoError(t, pool.QueryRow(ctx, `SELECT value::text FROM user_config WHERE user_id = $1 AND key = $2`, user, ParamsKey).Scan(&stored))
	require.NoError(t, json.Unmarshal(stored, &params))
	require.NoError(t, params.Validate())
	require.NotEqual(t, fsrs.DefaultParams(), params, "the fitted parameters now schedule Ann's cards")

	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM user_config WHERE user_id = $1`, other).Scan(&n))
	require.Zero(t, n, "nobody else's settings change")
}
