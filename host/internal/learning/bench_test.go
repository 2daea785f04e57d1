package learning

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// BenchmarkDueQueue measures the due query for a user holding 100k cards, a tenth of
// them due, through the same reads the API runs (dueCards; goal: p95 under 10 ms), and review
// writes (a scheduled review, its log row and the day's count, in one transaction).
func BenchmarkDueQueue(b *testing.B) {
	pool := dbtest.NewDB(b)
	ctx := context.Background()
	var user, deck uuid.UUID
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bench@example.org') RETURNING id`).Scan(&user))
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO decks (user_id, name) VALUES ($1, 'bench') RETURNING id`, user).Scan(&deck))
	_, err := pool.Exec(ctx, `
		INSERT INTO cards (user_id, deck_id, front, back, fsrs_state, stability, difficulty, due_at, last_review_at, reps, status)
		SELECT $1, $2, 'front ' || g, 'back', 2, 5.0, 5.0,
		       now() + make_interval(hours => (g % 1000) - 100), now() - interval '3 days', 3,
		       CASE WHEN g % 50 = 0 THEN 'suspended' ELSE 'active' END
		  FROM generate_series(1, 100000) g`, user, deck)
	require.NoError(b, err)
	_, err = pool.Exec(ctx, `ANALYZE`)
	require.NoError(b, err)

	b.Run("due_query", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			cards, err := dueCards(ctx, pool, user, nil, 50, time.Now())
			if err != nil || len(cards) != 50 {
				b.Fatalf("%d cards, %v", len(cards), err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
	})

	b.Run("review_write", func(b *testing.B) {
		rows, err := pool.Query(ctx, `SELECT id FROM cards WHERE user_id = $1 AND status = 'active' LIMIT 5000`, user)
		require.NoError(b, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(b, err)
		i := 0
		start := time.Now()
		for b.Loop() {
			id := ids[i%len(ids)]
			i++
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				_, err := ReviewTx(ctx, tx, user, ReviewInput{CardID: id, Rating: 3}, time.Now())
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reviews/s")
	})
}
