package bot_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bot"
)

// BenchmarkTickDelivered is one scheduler tick at 10:00 for 1,000 paired users
// whose briefing and Pulse of the day are already delivered (the common tick
// inside the catch-up windows): reading the ledger once first, against claiming
// each delivery and finding it taken.
//
//	./bin/lectern devdb exec -- go test -run '^$' -bench BenchmarkTickDelivered -benchtime 20x ./host/internal/bot/
func BenchmarkTickDelivered(b *testing.B) {
	tb := setup(b, bundleOpts{})
	ctx := context.Background()
	const n = 1000
	_, err := tb.pool.Exec(ctx, `
		WITH u AS (
			INSERT INTO users (email, role, timezone)
			SELECT 'user' || i || '@example.org', 'user', 'UTC' FROM generate_series(1, $1) i RETURNING id, email)
		INSERT INTO messenger_user_pairings (user_id, chat_id) SELECT id, email FROM u`, n)
	require.NoError(b, err)
	tb.clock.Set(time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC))
	_, err = tb.pool.Exec(ctx, `
		INSERT INTO messenger_deliveries (user_id, kind, local_date, chat_id, claimed_at, sent_at)
		SELECT p.user_id, k, DATE '2026-03-03', p.chat_id, $1, $1
		  FROM messenger_user_pairings p, unnest(ARRAY['briefing', 'pulse']) k`, tb.clock.Now().Add(-time.Hour))
	require.NoError(b, err)
	for _, preload := range []bool{false, true} {
		b.Run(fmt.Sprintf("preload=%v", preload), func(b *testing.B) {
			bot.SetPreload(tb.bot, preload)
			for b.Loop() {
				require.NoError(b, tb.bot.Tick(ctx))
			}
		})
	}
	require.Empty(b, tb.tr.sent, "nothing was sent: all was delivered before")
}
