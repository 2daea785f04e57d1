package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// briefings are the daily briefings among ms.
func briefings(ms []sent) []sent {
	var out []sent
	for _, m := range ms {
		if strings.HasPrefix(m.Text, "Good morning.") {
			out = append(out, m)
		}
	}
	return out
}

// TestBriefingsAtLocalHalfPastEightOnceEach: Ann in New York and Bob in Berlin
// get their briefing at 08:30 of their own clock, exactly once a day, over four
// days that include New York's change to summer time (8 March 2026), with the
// scheduler ticking every five minutes and sometimes twice in a row.
func TestBriefingsAtLocalHalfPastEightOnceEach(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "America/New_York")
	bob := b.user(t, "bob@example.org", "Europe/Berlin")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	ctx := context.Background()

	b.clock.Set(time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	end := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	for i := 0; b.clock.Now().Before(end); i++ {
		_ = b.bot.Tick(ctx) // a day with nothing to say for a kind is no failure; only sends are checked
		if i%7 == 0 {
			_ = b.bot.Tick(ctx) // a second tick at the same moment sends nothing more
		}
		b.clock.Advance(5 * time.Minute)
	}

	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	wantAt := func(loc *time.Location, days ...int) []time.Time {
		var out []time.Time
		for _, d := range days {
			out = append(out, time.Date(2026, 3, d, 8, 30, 0, 0, loc).UTC())
		}
		return out
	}
	at := func(ms []sent) []time.Time {
		var out []time.Time
		for _, m := range briefings(ms) {
			out = append(out, m.At.UTC())
		}
		return out
	}
	annGot, bobGot := b.tr.take("ann-chat"), b.tr.take("bob-chat")
	// New York: 13:30 UTC before the change, 12:30 UTC from 8 March on.
	require.Equal(t, wantAt(ny, 6, 7, 8, 9), at(annGot))
	require.Equal(t, time.Date(2026, 3, 7, 13, 30, 0, 0, time.UTC), at(annGot)[1])
	require.Equal(t, time.Date(2026, 3, 8, 12, 30, 0, 0, time.UTC), at(annGot)[2])
	// Berlin (no change in these days): 07:30 UTC.
	require.Equal(t, wantAt(berlin, 6, 7, 8, 9), at(bobGot))
	for _, m := range briefings(annGot) {
		require.NotContains(t, m.Text, "bob")
	}

	var n int
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT count(*) FROM messenger_deliveries WHERE kind = 'briefing' AND sent_at IS NOT NULL AND message_id IS NOT NULL`).Scan(&n))
	require.Equal(t, 8, n, "each briefing is recorded as sent once")
}

// TestBriefingAcrossFallBack: on the day New York leaves summer time (1
// November 2026) the briefing still comes once, at 08:30 EST.
func TestBriefingAcrossFallBack(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "America/New_York")
	b.pair(t, "ann-chat", ann.ID)
	b.clock.Set(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	for b.clock.Now().Before(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC)) {
		_ = b.bot.Tick(context.Background())
		b.clock.Advance(10 * time.Minute)
	}
	got := briefings(b.tr.take("ann-chat"))
	require.Len(t, got, 1)
	require.Equal(t, time.Date(2026, 11, 1, 13, 30, 0, 0, time.UTC), got[0].At.UTC())
}

// TestOneUsersFailureIsIsolated: when Ann's chat cannot be reached, Bob still
// gets his briefing; Ann's is not marked sent, and goes out on a later tick
// once her chat answers, still only once.
func TestOneUsersFailureIsIsolated(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	b.tr.setFailing("ann-chat", true)
	b.clock.Set(time.Date(2026, 3, 3, 8, 30, 0, 0, time.UTC))

	require.Error(t, b.bot.Tick(ctx), "the failure is reported")
	require.Len(t, briefings(b.tr.take("bob-chat")), 1, "Bob's briefing goes out")
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM messenger_deliveries WHERE user_id = $1`, ann.ID).Scan(&n))
	require.Zero(t, n, "Ann's failed delivery is not marked")

	b.tr.setFailing("ann-chat", false)
	b.clock.Advance(time.Minute)
	_ = b.bot.Tick(ctx)
	_ = b.bot.Tick(ctx)
	got := briefings(b.tr.take("ann-chat"))
	require.Len(t, got, 1)
	require.Equal(t, time.Date(2026, 3, 3, 8, 31, 0, 0, time.UTC), got[0].At)
	require.Empty(t, briefings(b.tr.take("bob-chat")), "Bob's is not sent again")
}

// TestBriefingWaitsForTheAPI: at 08:30 with the API down nothing is sent and
// nothing is marked; the briefing is not lost.
func TestBriefingWaitsForTheAPI(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{apiDown: true})
	ctx := context.Background()
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "bob-chat", bob.ID)
	b.clock.Set(time.Date(2026, 3, 3, 8, 30, 0, 0, time.UTC))
	require.Error(t, b.bot.Tick(ctx))
	require.Empty(t, b.tr.take("bob-chat"))
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM messenger_deliveries`).Scan(&n))
	require.Zero(t, n, "nothing is marked while the API is down")
}

// TestJobFailureAlert: a job that failed for good is reported to the owner's
// chat once, naming the job but not its user.
func TestJobFailureAlert(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{ownerChat: "owner-chat"})
	ctx := context.Background()
	bob := b.user(t, "bob@example.org", "UTC")
	_, err := b.pool.Exec(ctx, `
		INSERT INTO system_events (user_id, level, category, source, message, context, created_at)
		VALUES ($1, 'error', 'job', 'jobs', 'Job 42 (ingest.pdf) failed: Bob''s secret title', '{"job_id": 42, "kind": "ingest.pdf", "error_code": "pdf_unreadable"}', $2)`,
		bob.ID, b.clock.Now().Add(-time.Minute))
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `
		INSERT INTO system_events (user_id, level, category, source, message, created_at)
		VALUES ($1, 'info', 'job', 'jobs', 'Job 43 finished', $2)`, bob.ID, b.clock.Now())
	require.NoError(t, err)

	require.NoError(t, b.bot.Tick(ctx))
	require.NoError(t, b.bot.Tick(ctx))
	got := b.tr.take("owner-chat")
	require.Len(t, got, 1, "one alert, once")
	require.Contains(t, got[0].Text, "ingest.pdf (job 42)")
	require.Contains(t, got[0].Text, "pdf_unreadable")
	require.NotContains(t, got[0].Text, "secret")
	require.NotContains(t, got[0].Text, "bob")
}
