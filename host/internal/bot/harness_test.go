package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/bot"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const testOpsKey = "bot-test-ops-key-0123456789abcdef0123456789"

// clock is the fake clock the bot, the API and the test share.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// sent is one message the bot posted, with the fake time it was posted at.
type sent struct {
	ID      string
	Chat    string
	Text    string
	Buttons [][]messenger.Button
	At      time.Time
}

// answered is one button acknowledgement.
type answered struct {
	CallbackID string
	Text       string
}

// chatTransport stands in for the external messenger: it records what the bot
// sends, and refuses sends to the chats in failing.
type chatTransport struct {
	protocol.ConfigureDefaults
	clock *clock

	mu       sync.Mutex
	next     int
	sent     []sent
	edits    []sent
	answers  []answered
	failing  map[string]bool
	lastCred map[string]string
}

var _ messenger.Transport = (*chatTransport)(nil)

func (tr *chatTransport) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "fake", Kind: protocol.KindMessenger}, nil
}

func (tr *chatTransport) Updates(ctx context.Context, _ *messenger.UpdatesRequest, _ messenger.UpdateStream) error {
	<-ctx.Done()
	return ctx.Err()
}

func (tr *chatTransport) Send(_ context.Context, req *messenger.SendRequest) (*messenger.SendResponse, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lastCred = req.Credentials
	if tr.failing[req.ChatID] {
		return nil, fmt.Errorf("%w: chat %s cannot be reached", protocol.ErrUnavailable, req.ChatID)
	}
	tr.next++
	id := strconv.Itoa(tr.next)
	tr.sent = append(tr.sent, sent{ID: id, Chat: req.ChatID, Text: req.Text, Buttons: req.Buttons, At: tr.clock.Now()})
	return &messenger.SendResponse{MessageID: id}, nil
}

func (tr *chatTransport) Edit(_ context.Context, req *messenger.EditRequest) (*messenger.EditResponse, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.edits = append(tr.edits, sent{ID: req.MessageID, Chat: req.ChatID, Text: req.Text, Buttons: req.Buttons, At: tr.clock.Now()})
	return &messenger.EditResponse{}, nil
}

func (tr *chatTransport) AnswerCallback(_ context.Context, req *messenger.AnswerCallbackRequest) (*messenger.AnswerCallbackResponse, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.answers = append(tr.answers, answered{CallbackID: req.CallbackID, Text: req.Text})
	return &messenger.AnswerCallbackResponse{}, nil
}

func (tr *chatTransport) lastCredentials() map[string]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.lastCred
}

func (tr *chatTransport) setFailing(chat string, fail bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.failing[chat] = fail
}

// take returns and forgets what was sent to chat.
func (tr *chatTransport) take(chat string) []sent {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out, rest []sent
	for _, s := range tr.sent {
		if s.Chat == chat {
			out = append(out, s)
		} else {
			rest = append(rest, s)
		}
	}
	tr.sent = rest
	return out
}

// takeAnswers returns and forgets the button acknowledgements.
func (tr *chatTransport) takeAnswers() []answered {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := tr.answers
	tr.answers = nil
	return out
}

func (tr *chatTransport) takeEdits() []sent {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := tr.edits
	tr.edits = nil
	return out
}

// testBundle is a real database, the real API served over HTTP in process, and a
// bot using both, on one fake clock.
type testBundle struct {
	pool   *pgxpool.Pool
	app    *app.App
	server *httptest.Server
	tr     *chatTransport
	clock  *clock
	bot    *bot.Bot
	client *bot.Client
	owner  string
	nextID int
	newBot func(t *testing.T, tr messenger.Transport) *bot.Bot
}

// withTransport is another bot over the same database, API and clock, talking
// to tr.
func (b *testBundle) withTransport(t *testing.T, tr messenger.Transport) *bot.Bot {
	t.Helper()
	return b.newBot(t, tr)
}

type bundleOpts struct {
	// apiDown points the bot at an address where nothing answers.
	apiDown bool
	// ownerChat is messenger.owner_chat_id.
	ownerChat string
}

func setup(t testing.TB, o bundleOpts) *testBundle {
	t.Helper()
	vars := map[string]string{
		"SERVICE_API_KEY":    testOpsKey,
		"SERVICE_CONFIG_KEY": "bot-test-config-key-0123456789abcdef0123",
		"PUBLIC_BASE_URL":    "http://lectern.test",
		"LECTERN_DATA_DIR":   t.TempDir(),
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	pool := dbtest.NewDB(t)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	clk := &clock{now: time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.Build(context.Background(), app.Options{Config: cfg, Pool: pool, Logger: log,
		Migrator: store.NewMigrator(pool, migs), Version: "test", Now: clk.Now})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	base := srv.URL
	if o.apiDown {
		down := httptest.NewServer(nil)
		base = down.URL
		down.Close()
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	client := bot.NewClient(u, testOpsKey, nil)
	tr := &chatTransport{clock: clk, failing: map[string]bool{}}
	b, err := bot.New(bot.Config{Pool: pool, Transport: tr, API: client, Now: clk.Now, Logger: log,
		DashboardURL: "http://lectern.test",
		CredentialsFunc: func(context.Context) (map[string]string, error) {
			return map[string]string{"bot_token": "test-token"}, nil
		},
		OwnerChatFunc: func(context.Context) (string, error) { return o.ownerChat, nil },
	})
	require.NoError(t, err)
	newBot := func(t *testing.T, tr messenger.Transport) *bot.Bot {
		t.Helper()
		nb, err := bot.New(bot.Config{Pool: pool, Transport: tr, API: client, Now: clk.Now, Logger: log,
			DashboardURL: "http://lectern.test",
			CredentialsFunc: func(context.Context) (map[string]string, error) {
				return map[string]string{"bot_token": "test-token"}, nil
			}})
		require.NoError(t, err)
		return nb
	}
	// The API's own client, for seeding through the real routes.
	apiURL, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return &testBundle{pool: pool, app: a, server: srv, tr: tr, clock: clk, bot: b,
		client: bot.NewClient(apiURL, testOpsKey, nil), owner: o.ownerChat, newBot: newBot}
}

// user makes a live account in time zone tz.
func (b *testBundle) user(t *testing.T, email, tz string) users.User {
	t.Helper()
	ctx := context.Background()
	u, err := users.Create(ctx, b.pool, email, "user")
	require.NoError(t, err)
	u, err = users.UpdateProfile(ctx, b.pool, u.ID, users.Profile{Timezone: &tz})
	require.NoError(t, err)
	return u
}

// token issues a pairing token for u now (what Settings → Integrations does).
func (b *testBundle) token(t *testing.T, u uuid.UUID) string {
	t.Helper()
	tok, _, err := users.IssuePairingToken(context.Background(), b.pool, u, b.clock.Now())
	require.NoError(t, err)
	return tok
}

// say sends a command from a private chat and returns what the chat got back.
func (b *testBundle) say(t *testing.T, chat, line string) []sent {
	t.Helper()
	return b.sayIn(t, chat, messenger.User{ID: chat, Username: "user_" + chat}, line)
}

// chatType is what a transport says of a chat: private when it is the sender's
// own (as Telegram numbers them), a group otherwise.
func chatType(chat string, from messenger.User) messenger.ChatType {
	if chat == from.ID {
		return messenger.ChatPrivate
	}
	return messenger.ChatGroup
}

// sayIn sends a command (or plain text) in chat from a person.
func (b *testBundle) sayIn(t *testing.T, chat string, from messenger.User, line string) []sent {
	t.Helper()
	b.nextID++
	u := &messenger.Update{ID: int64(b.nextID), ChatID: chat, ChatType: chatType(chat, from), From: from, Time: b.clock.Now()}
	if len(line) > 0 && line[0] == '/' {
		name, args := line[1:], ""
		for i, r := range name {
			if r == ' ' {
				name, args = line[1:i+1], line[i+2:]
				break
			}
		}
		u.Command = &messenger.Command{MessageID: "m" + strconv.Itoa(b.nextID), Name: name, Args: args}
	} else {
		u.Message = &messenger.Message{MessageID: "m" + strconv.Itoa(b.nextID), Text: line}
	}
	require.NoError(t, b.bot.Handle(context.Background(), u))
	return b.tr.take(chat)
}

// press presses a button with data in chat and returns the acknowledgement's text
// and any messages the chat got.
func (b *testBundle) press(t *testing.T, chat, data string) (string, []sent) {
	t.Helper()
	b.nextID++
	id := "cb" + strconv.Itoa(b.nextID)
	u := &messenger.Update{ID: int64(b.nextID), ChatID: chat, ChatType: messenger.ChatPrivate, From: messenger.User{ID: chat}, Time: b.clock.Now(),
		Callback: &messenger.Callback{CallbackID: id, MessageID: "1", Data: data}}
	require.NoError(t, b.bot.Handle(context.Background(), u))
	var text string
	found := false
	for _, a := range b.tr.takeAnswers() {
		if a.CallbackID == id {
			text, found = a.Text, true
		}
	}
	require.True(t, found, "the button press is acknowledged")
	return text, b.tr.take(chat)
}

// pair pairs chat with u through /pair.
func (b *testBundle) pair(t *testing.T, chat string, u uuid.UUID) {
	t.Helper()
	got := b.say(t, chat, "/pair "+b.token(t, u))
	require.Len(t, got, 1)
	require.Contains(t, got[0].Text, "Paired.")
}

// stopRun ends a Run started with cancel's context and waits for it to return
// (on done) without an error.
func stopRun(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}

func texts(ms []sent) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}
