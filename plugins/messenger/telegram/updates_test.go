package main

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// collect runs Updates from offset in the background until want updates have
// arrived and getUpdates has been called polls times, then cancels it and
// returns the updates and Updates' error.
func collect(t *testing.T, tg *Telegram, f *fakeBot, offset int64, want, polls int) ([]*messenger.Update, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var got []*messenger.Update
	done := make(chan error, 1)
	go func() {
		done <- tg.Updates(ctx, &messenger.UpdatesRequest{Credentials: creds, Offset: offset}, messenger.UpdateStreamFunc(func(u *messenger.Update) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, u)
			return nil
		}))
	}()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= want && len(f.callsOf("getUpdates")) >= polls
	}, 10*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		mu.Lock()
		defer mu.Unlock()
		return got, err
	case <-time.After(5 * time.Second):
		t.Fatal("Updates did not return after its context was cancelled")
		return nil, nil
	}
}

func TestUpdatesMapsCommandsMessagesCallbacksAndDocuments(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("getUpdates", reply{200, testdata(t, "getupdates_mixed.json")})
	tg := newTransport(t, f, nil)

	got, err := collect(t, tg, f, 900001, 6, 2)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, got, 6, "the edit, the other bot's command, the sticker and the unparsable update are skipped")

	pair := got[0]
	require.EqualValues(t, 900001, pair.ID)
	require.Equal(t, "5550001", pair.ChatID)
	require.Equal(t, messenger.ChatPrivate, pair.ChatType)
	require.Equal(t, messenger.User{ID: "5550001", Username: "ada_l", DisplayName: "Ada Lovelace", Language: "en"}, pair.From)
	require.Equal(t, &messenger.Command{MessageID: "11", Name: "pair", Args: "0123456789abcdef0123456789abcdef"}, pair.Command)
	require.Equal(t, time.Unix(1764230400, 0).UTC(), pair.Time)

	group := got[1]
	require.Equal(t, messenger.ChatGroup, group.ChatType, "a supergroup is a group: the bot refuses pairing there")
	require.Equal(t, "-1001234567890", group.ChatID)
	require.Equal(t, "pair", group.Command.Name)

	press := got[2]
	require.EqualValues(t, 900005, press.ID)
	require.Equal(t, &messenger.Callback{CallbackID: "4382bfdwdsb323b2d9", MessageID: "4242", Data: "paper:save:8f14e45f"}, press.Callback)
	require.Equal(t, messenger.ChatPrivate, press.ChatType)
	require.Equal(t, "5550001", press.From.ID)

	text := got[3]
	require.Equal(t, &messenger.Message{MessageID: "15", Text: "what is a transformer?\nand attention?"}, text.Message)

	doc := got[4]
	require.Equal(t, &messenger.Document{MessageID: "16", FileID: "BQACAgQAAxkBAAIB", FileName: "attention.pdf",
		MIMEType: "application/pdf", Size: 2215244, Caption: "please add"}, doc.Document)

	require.Equal(t, &messenger.Command{MessageID: "17", Name: "ask", Args: "What is FSRS?"}, got[5].Command)

	polls := f.callsOf("getUpdates")
	require.Equal(t, float64(900001), polls[0].params["offset"])
	require.Equal(t, float64(1), polls[0].params["timeout"])
	require.Equal(t, []any{"message", "callback_query"}, polls[0].params["allowed_updates"])
	require.Equal(t, float64(900011), polls[1].params["offset"], "the next poll confirms every update of the batch, skipped ones too")
	require.Equal(t, testToken, polls[0].token)
	require.Len(t, f.callsOf("getMe"), 1, "getMe learns the bot's name for /cmd@name")
}

func TestUpdatesFromZeroSkipTheBacklog(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("getUpdates", reply{200, []byte(`{"ok":true,"result":[{"update_id":500,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"old"}}]}`)})
	tg := newTransport(t, f, nil)

	got, err := collect(t, tg, f, 0, 0, 2)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, got, "updates from before the stream started are not delivered")
	polls := f.callsOf("getUpdates")
	require.Equal(t, float64(-1), polls[0].params["offset"])
	require.Equal(t, float64(0), polls[0].params["timeout"])
	require.Equal(t, float64(501), polls[1].params["offset"])
}

// The shared fixtures are recorded Bot API answers from other projects' tests.
func TestUpdatesReplayTheSharedFixtures(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "telegram")
	single := func(name string) []byte {
		return []byte(`{"ok":true,"result":[` + string(plugintest.ReadFixture(t, dir, name)) + `]}`)
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"getupdates_ok_result_array.json", plugintest.ReadFixture(t, dir, "getupdates_ok_result_array.json")},
		{"update_all_fields_with_callback_query.json", single("update_all_fields_with_callback_query.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeBot(t)
			f.push("getUpdates", reply{200, tc.body})
			got, err := collect(t, newTransport(t, f, nil), f, 10000, 1, 2)
			require.ErrorIs(t, err, context.Canceled)
			require.Len(t, got, 1, "an update is delivered once, by its message, whatever else it carries")
			u := got[0]
			require.EqualValues(t, 10000, u.ID)
			require.Equal(t, "1111111", u.ChatID)
			require.Equal(t, messenger.ChatPrivate, u.ChatType)
			require.Equal(t, "Testusername", u.From.Username)
			require.Equal(t, "Test Firstname Test Lastname", u.From.DisplayName)
			require.Equal(t, &messenger.Document{MessageID: "1365", FileID: "AwADBAADbXXXXXXXXXXXGBdhD2l6_XX",
				FileName: "Testfile.pdf", MIMEType: "application/pdf", Size: 536392}, u.Document)
			require.Equal(t, float64(10001), f.callsOf("getUpdates")[1].params["offset"])
		})
	}
	t.Run("update_message_document_pdf.json", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		f.push("getUpdates", reply{200, single("update_message_document_pdf.json")})
		got, err := collect(t, newTransport(t, f, nil), f, 2, 1, 2)
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, got, 1)
		require.Equal(t, "application/pdf", got[0].Document.MIMEType)
		require.EqualValues(t, 123456, got[0].Document.Size)
		require.Equal(t, "12345678", got[0].From.ID)
	})
}

func TestUpdatesFailWithTypedErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		method string
		reply  reply
		want   *protocol.Error
	}{
		{"refused token", "getMe", reply{401, nil}, protocol.ErrUnauthorized},
		{"another poller", "getUpdates", reply{409, nil}, protocol.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeBot(t)
			body := map[int]string{401: "error_401_unauthorized.json", 409: "error_409_conflict.json"}[tc.reply.status]
			f.push(tc.method, reply{tc.reply.status, testdata(t, body)})
			err := newTransport(t, f, nil).Updates(t.Context(), &messenger.UpdatesRequest{Credentials: creds, Offset: 1},
				messenger.UpdateStreamFunc(func(*messenger.Update) error { return nil }))
			require.ErrorIs(t, err, tc.want)
			require.NotContains(t, err.Error(), testToken)
		})
	}
}

func TestUpdatesStopWhenTheReceiverIsGone(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("getUpdates", reply{200, testdata(t, "getupdates_mixed.json")})
	gone := context.Canceled
	n := 0
	err := newTransport(t, f, nil).Updates(t.Context(), &messenger.UpdatesRequest{Credentials: creds, Offset: 1},
		messenger.UpdateStreamFunc(func(*messenger.Update) error { n++; return gone }))
	require.ErrorIs(t, err, gone)
	require.Equal(t, 1, n)
}

func TestMapUpdateIgnoresWhatTheHostDoesNotHandle(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 8, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		raw  string
	}{
		{"edited message", `{"update_id":1,"edited_message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"/unpair"}}`},
		{"channel post", `{"update_id":1,"channel_post":{"message_id":1,"chat":{"id":-100,"type":"channel"},"date":1,"text":"hi"}}`},
		{"inline-mode button", `{"update_id":1,"callback_query":{"id":"q","from":{"id":1},"inline_message_id":"abc","data":"x"}}`},
		{"service message", `{"update_id":1,"message":{"message_id":1,"chat":{"id":-5,"type":"group"},"date":1,"new_chat_members":[{"id":2}]}}`},
		{"another bot's command", `{"update_id":1,"message":{"message_id":1,"chat":{"id":-5,"type":"group"},"date":1,"text":"/help@other_bot"}}`},
		{"not json", `{"update_id":1,"message":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, u := mapUpdate(json.RawMessage(tc.raw), "lectern_test_bot", now)
			require.EqualValues(t, 1, id)
			require.Nil(t, u)
		})
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, name, target, args string
		ok                       bool
	}{
		{"/start", "start", "", "", true},
		{"/papers graph neural networks", "papers", "", "graph neural networks", true},
		{"/Papers@Lectern_Bot  spaced   ", "papers", "Lectern_Bot", "spaced", true},
		{"/ask\nwhat is attention?", "ask", "", "what is attention?", true},
		{"/pulse_now", "pulse_now", "", "", true},
		{"/", "", "", "", false},
		{"/ not a command", "", "", "", false},
		{"/déjà vu", "", "", "", false},
		{"hello /start", "", "", "", false},
		{"/" + string(make([]byte, 33)), "", "", "", false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			name, target, args, ok := parseCommand(tc.text)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.name, name)
			require.Equal(t, tc.target, target)
			require.Equal(t, tc.args, args)
		})
	}
}
