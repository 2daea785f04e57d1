package bot_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bot"
	"github.com/lectern-research/lectern/sdk/messenger"
)

// seedDeck gives u a Pulse deck dated date with one card per title, ranked in
// order, each on a new public paper of the shared corpus.
func seedDeck(t *testing.T, b *testBundle, u uuid.UUID, date, degraded string, titles ...string) {
	t.Helper()
	ctx := context.Background()
	var deck uuid.UUID
	var reason *string
	if degraded != "" {
		reason = &degraded
	}
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO pulse_decks (user_id, deck_date, card_count, degraded_reason) VALUES ($1, $2, $3, $4) RETURNING id`,
		u, date, len(titles), reason).Scan(&deck))
	for i, title := range titles {
		var paper uuid.UUID
		require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source) VALUES ($1, 'arxiv') RETURNING id`, title).Scan(&paper))
		_, err := b.pool.Exec(ctx, `INSERT INTO pulse_cards (deck_id, user_id, paper_id, rank, score, why) VALUES ($1, $2, $3, $4, $5, $6)`,
			deck, u, paper, i+1, 1-float64(i)/10, "because of "+title)
		require.NoError(t, err)
	}
}

// TestMorningPulseDelivery: at 09:00 local each user gets the top five of their
// deck with Save and thumbs buttons; a deck from an earlier day and one made with
// fewer signals say so. The buttons work as the user.
func TestMorningPulseDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "Asia/Tokyo")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	var six []string
	for i := range 6 {
		six = append(six, fmt.Sprintf("Ann paper %d", i+1))
	}
	// Tomorrow by the database's clock: the API lets a deck be rated for 30 days
	// after its date, counted from the database's date.
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	seedDeck(t, b, ann.ID, day.Format(time.DateOnly), "", six...)
	seedDeck(t, b, bob.ID, day.AddDate(0, 0, -2).Format(time.DateOnly), "a source was down", "Bob paper")

	b.clock.Set(day) // 09:00 in Tokyo
	_ = b.bot.Tick(context.Background())
	bobGot := pulseMessages(b.tr.take("bob-chat"))
	require.Len(t, bobGot, 1)
	require.Contains(t, bobGot[0].Text, "This deck is 2 days old")
	require.Contains(t, bobGot[0].Text, "fewer signals than usual")
	require.Contains(t, bobGot[0].Text, "Bob paper")
	require.NotContains(t, bobGot[0].Text, "Ann paper")
	require.Empty(t, pulseMessages(b.tr.take("ann-chat")), "not yet 09:00 in UTC")

	b.clock.Set(day.Add(9 * time.Hour))
	_ = b.bot.Tick(context.Background())
	got := pulseMessages(b.tr.take("ann-chat"))
	require.Len(t, got, 1)
	m := got[0]
	for i := 1; i <= 5; i++ {
		require.Contains(t, m.Text, fmt.Sprintf("%d. Ann paper %d", i, i))
	}
	require.NotContains(t, m.Text, "Ann paper 6", "the top five only")
	require.NotContains(t, m.Text, "days old")
	require.Len(t, m.Buttons, 5)
	save := m.Buttons[0][0]
	require.Equal(t, "1 Save", save.Text)

	text, _ := b.press(t, "ann-chat", save.CallbackData)
	require.Equal(t, "Saved to your library.", text)
	text, _ = b.press(t, "ann-chat", m.Buttons[1][1].CallbackData)
	require.Equal(t, "Noted: more like this.", text)
	text, _ = b.press(t, "bob-chat", m.Buttons[2][1].CallbackData)
	require.Equal(t, "That paper is not in your Pulse deck.", text, "Ann's deck is not Bob's to rate")
}

func pulseMessages(ms []sent) []sent {
	var out []sent
	for _, m := range ms {
		if strings.HasPrefix(m.Text, "Your Pulse for today") {
			out = append(out, m)
		}
	}
	return out
}

// TestDeadlineAndReviewReminders: at 12:00 the milestones due within three days
// (red within one), and at 14:00 a reminder only on a day cards are due.
func TestDeadlineAndReviewReminders(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "bob-chat", bob.ID)
	// Cards are due from when the database made them: run on tomorrow's date.
	day := time.Now().UTC().AddDate(0, 0, 1)
	at := func(h int) time.Time { return time.Date(day.Year(), day.Month(), day.Day(), h, 0, 0, 0, time.UTC) }
	var proj struct {
		ID string `json:"id"`
	}
	require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/projects", map[string]string{"name": "Thesis"}, &proj))
	for title, in := range map[string]int{"Draft chapter": 1, "Submit": 3, "Defence": 9} {
		require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/projects/"+proj.ID+"/milestones",
			map[string]string{"title": title, "due_date": day.AddDate(0, 0, in).Format(time.DateOnly)}, nil))
	}

	b.clock.Set(at(12))
	_ = b.bot.Tick(ctx)
	b.clock.Set(at(14))
	_ = b.bot.Tick(ctx)
	got := b.tr.take("bob-chat")
	require.Len(t, got, 1, "the deadlines; no reminder without due cards: %q", texts(got))
	require.Contains(t, got[0].Text, "🔴 Thesis: Draft chapter")
	require.Contains(t, got[0].Text, "• Thesis: Submit")
	require.NotContains(t, got[0].Text, "Defence", "nine days away")

	var deck struct {
		ID string `json:"id"`
	}
	require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/decks", map[string]string{"name": "D"}, &deck))
	require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/cards", map[string]string{"deck_id": deck.ID, "front": "Q", "back": "A"}, nil))
	b.clock.Set(at(14).AddDate(0, 0, 1))
	_ = b.bot.Tick(ctx)
	_ = b.bot.Tick(ctx)
	got = b.tr.take("bob-chat")
	var reminders []sent
	for _, m := range got {
		if strings.Contains(m.Text, "due for review") {
			reminders = append(reminders, m)
		}
	}
	require.Len(t, reminders, 1)
	require.Equal(t, "1 cards are due for review.", reminders[0].Text)
	require.Equal(t, [][]messenger.Button{{{Text: "Start review", CallbackData: "start_review"}}}, reminders[0].Buttons)
}

// scriptedTransport delivers updates to the bot's stream, then waits.
type scriptedTransport struct {
	*chatTransport
	updates []*messenger.Update
	offsets chan int64
	menu    chan []messenger.BotCommand
}

// SetCommands records the command menu the bot gives.
func (s *scriptedTransport) SetCommands(_ context.Context, req *messenger.SetCommandsRequest) (*messenger.SetCommandsResponse, error) {
	s.menu <- req.Commands
	return &messenger.SetCommandsResponse{}, nil
}

func (s *scriptedTransport) Updates(ctx context.Context, req *messenger.UpdatesRequest, stream messenger.UpdateStream) error {
	s.offsets <- req.Offset
	for _, u := range s.updates {
		if u.ID < req.Offset {
			continue
		}
		if err := stream.Send(u); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestRunAnswersTheStream: Run reads the messenger's updates and answers each,
// and stops when its context ends.
func TestRunAnswersTheStream(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	tr := &scriptedTransport{chatTransport: b.tr, offsets: make(chan int64, 4), menu: make(chan []messenger.BotCommand, 4), updates: []*messenger.Update{
		{ID: 7, ChatID: "stranger", ChatType: messenger.ChatPrivate, From: messenger.User{ID: "stranger"}, Command: &messenger.Command{Name: "start"}},
	}}
	runner := b.withTransport(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	require.Equal(t, int64(0), <-tr.offsets)
	require.Eventually(t, func() bool { return len(b.tr.take("stranger")) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, map[string]string{"bot_token": "test-token"}, b.tr.lastCredentials(), "the token goes with each call")
	menu := <-tr.menu
	require.Len(t, menu, len(bot.Commands), "the messenger got the command menu")
	require.Equal(t, "papers", menu[0].Name)
	stopRun(t, cancel, done)
}

// TestAuthorAlert: after the morning deck, the papers of today's deck by authors
// the user follows come once more as an alert; a stale deck alerts nothing.
func TestAuthorAlert(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	seedDeck(t, b, ann.ID, day.Format(time.DateOnly), "", "Plain paper", "Paper by Grace Hopper")
	seedDeck(t, b, bob.ID, day.AddDate(0, 0, -1).Format(time.DateOnly), "", "Bob's old paper by Hopper")
	_, err := b.pool.Exec(context.Background(), `UPDATE pulse_cards c SET signals = '{"author_bonus": 1}'
		FROM papers p WHERE p.id = c.paper_id AND p.title LIKE '%Hopper%'`)
	require.NoError(t, err)

	alerts := func(chat string) []sent {
		var out []sent
		for _, m := range b.tr.take(chat) {
			if strings.HasPrefix(m.Text, "New from authors you follow") {
				out = append(out, m)
			}
		}
		return out
	}
	b.clock.Set(day.Add(9*time.Hour + 6*time.Minute))
	_ = b.bot.Tick(context.Background())
	got := alerts("ann-chat")
	require.Len(t, got, 1)
	require.Contains(t, got[0].Text, "1. Paper by Grace Hopper")
	require.NotContains(t, got[0].Text, "Plain paper")
	require.Len(t, got[0].Buttons, 1)
	require.Empty(t, alerts("bob-chat"), "yesterday's deck has nothing new")

	_ = b.bot.Tick(context.Background())
	require.Empty(t, alerts("ann-chat"), "once a day")
}
