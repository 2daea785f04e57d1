package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestSendPostsEscapedHTMLWithButtons(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	resp, err := tg.Send(t.Context(), &messenger.SendRequest{
		Credentials: creds, ChatID: "5550001", Text: "Attention <is> all you need & more", Silent: true,
		Buttons: [][]messenger.Button{{{Text: "Save", CallbackData: "paper:save:1"}, {Text: "Open", URL: "https://example.org/p/1"}}, {}},
	})
	require.NoError(t, err)
	require.Equal(t, "4242", resp.MessageID)
	sent := f.callsOf("sendMessage")
	require.Len(t, sent, 1)
	p := sent[0].params
	require.Equal(t, "5550001", p["chat_id"])
	require.Equal(t, "Attention &lt;is&gt; all you need &amp; more", p["text"])
	require.Equal(t, "HTML", p["parse_mode"])
	require.Equal(t, true, p["disable_notification"])
	require.Equal(t, map[string]any{"inline_keyboard": []any{[]any{
		map[string]any{"text": "Save", "callback_data": "paper:save:1"},
		map[string]any{"text": "Open", "url": "https://example.org/p/1"},
	}}}, p["reply_markup"], "an empty row is dropped")
}

func TestSendSplitsALongMessageWithButtonsOnTheLastPart(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	var lines []string
	for i := range 300 {
		lines = append(lines, "line "+strings.Repeat("x", i%40)+" <b>&amp;</b> end")
	}
	text := strings.Join(lines, "\n")
	_, err := tg.Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "5550001", Text: "<i>" + text + "</i>",
		Format: messenger.FormatHTML, Buttons: [][]messenger.Button{{{Text: "More", CallbackData: "more"}}}})
	require.NoError(t, err)
	sent := f.callsOf("sendMessage")
	require.Greater(t, len(sent), 2)
	var visible []string
	for i, call := range sent {
		html := call.params["text"].(string)
		require.True(t, strings.HasPrefix(html, "<i>line "), "part %d opens the italics again and starts at a line", i)
		require.True(t, strings.HasSuffix(html, "end</i>"), "part %d closes what it opened and ends at a line: %q", i, html[max(0, len(html)-80):])
		rt, err := parseHTML(html)
		require.NoError(t, err)
		require.LessOrEqual(t, utf16Len(rt.plainText()), maxMessageLen)
		visible = append(visible, rt.plainText())
		_, hasButtons := call.params["reply_markup"]
		require.Equal(t, i == len(sent)-1, hasButtons, "only the last part carries the buttons")
	}
	want, err := parseHTML("<i>" + text + "</i>")
	require.NoError(t, err)
	require.Equal(t, want.plainText(), strings.Join(visible, "\n"), "nothing is lost but the line breaks at the cuts")
}

func TestSendRefusesBadRequestsBeforeCallingTelegram(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	long := strings.Repeat("d", 65)
	for _, tc := range []struct {
		name string
		req  messenger.SendRequest
		want string
	}{
		{"no chat", messenger.SendRequest{Text: "hi"}, "chat id"},
		{"no text", messenger.SendRequest{ChatID: "1", Text: " \n "}, "no visible text"},
		{"unknown tag", messenger.SendRequest{ChatID: "1", Text: "<div>x</div>", Format: messenger.FormatHTML}, "does not allow <div>"},
		{"crossed tags", messenger.SendRequest{ChatID: "1", Text: "<b><i>x</b></i>", Format: messenger.FormatHTML}, "closes </b>"},
		{"javascript link", messenger.SendRequest{ChatID: "1", Text: `<a href="javascript:alert(1)">x</a>`, Format: messenger.FormatHTML}, "not an http, https or tg URL"},
		{"button without text", messenger.SendRequest{ChatID: "1", Text: "x", Buttons: [][]messenger.Button{{{CallbackData: "a"}}}}, "has no text"},
		{"button with both", messenger.SendRequest{ChatID: "1", Text: "x", Buttons: [][]messenger.Button{{{Text: "a", CallbackData: "a", URL: "https://a.b"}}}}, "exactly one"},
		{"callback data too long", messenger.SendRequest{ChatID: "1", Text: "x", Buttons: [][]messenger.Button{{{Text: "a", CallbackData: long}}}}, "65 bytes"},
		{"javascript url", messenger.SendRequest{ChatID: "1", Text: "x", Buttons: [][]messenger.Button{{{Text: "a", URL: "javascript:alert(1)"}}}}, "not http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := tc.req
			req.Credentials = creds
			_, err := tg.Send(t.Context(), &req)
			require.ErrorIs(t, err, protocol.ErrBadRequest)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	require.Empty(t, f.callsOf("sendMessage"))
}

func TestTokenIsRequiredAndWellFormed(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	for _, token := range []string{"", "123:short", "123456789:AAF-test_token_value_abcdefghij/../../x", "nodigits:AAF-test_token_value_abcdefghij"} {
		_, err := tg.Send(t.Context(), &messenger.SendRequest{Credentials: map[string]string{messenger.CredBotToken: token}, ChatID: "1", Text: "x"})
		require.ErrorIs(t, err, protocol.ErrUnauthorized)
		if token != "" {
			require.NotContains(t, err.Error(), token)
		}
	}
	require.Empty(t, f.callsOf("sendMessage"))
}

func TestRateLimitIsWaitedOutThenRetried(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("sendMessage", reply{429, testdata(t, "error_429_retry_after.json")})
	tg := newTransport(t, f, nil)
	start := time.Now()
	resp, err := tg.Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "5550001", Text: "hi"})
	require.NoError(t, err)
	require.Equal(t, "4242", resp.MessageID)
	require.GreaterOrEqual(t, time.Since(start), time.Second, "retry_after is 1 s")
	require.Len(t, f.callsOf("sendMessage"), 2)
}

func TestRateLimitLongerThanTheCapIsReturned(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("sendMessage", reply{429, testdata(t, "error_429_retry_after_long.json")})
	start := time.Now()
	_, err := newTransport(t, f, nil).Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "5550001", Text: "hi"})
	require.ErrorIs(t, err, protocol.ErrRateLimited)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 35*time.Second, pe.RetryAfter)
	require.Contains(t, err.Error(), "Too Many Requests: retry after 35")
	require.Less(t, time.Since(start), time.Second, "a wait over max_retry_wait is not slept through")
	require.Len(t, f.callsOf("sendMessage"), 1)
}

func TestRateLimitWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("sendMessage", reply{429, testdata(t, "error_429_retry_after.json")})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newTransport(t, f, nil).Send(ctx, &messenger.SendRequest{Credentials: creds, ChatID: "5550001", Text: "hi"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 900*time.Millisecond)
}

func TestErrorsAreTypedAndSaidInWords(t *testing.T) {
	t.Parallel()
	dir := plugintest.FixturesDir(t, "telegram")
	for _, tc := range []struct {
		name  string
		reply reply
		want  *protocol.Error
		words string
	}{
		{"chat not found", reply{400, testdata(t, "error_400_chat_not_found.json")}, protocol.ErrNotFound, "Bad Request: chat not found"},
		{"markup refused", reply{400, testdata(t, "error_400_cant_parse.json")}, protocol.ErrBadRequest, `can't parse entities: Unsupported start tag "div"`},
		{"token refused", reply{401, testdata(t, "error_401_unauthorized.json")}, protocol.ErrUnauthorized, "refused the bot token"},
		{"blocked", reply{403, testdata(t, "error_403_blocked.json")}, protocol.ErrNotFound, "bot was blocked by the user"},
		{"group migrated (shared fixture)", reply{400, plugintest.ReadFixture(t, dir, "error_response_400_with_parameters.json")}, protocol.ErrBadRequest, "supergroup with chat id 12345 (Error descriptions)"},
		{"proxy page", reply{502, []byte("<html>Bad Gateway</html>")}, protocol.ErrUnavailable, "HTTP 502"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeBot(t)
			f.push("sendMessage", tc.reply)
			_, err := newTransport(t, f, nil).Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "5550001", Text: "hi"})
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), tc.words)
			require.Len(t, f.callsOf("sendMessage"), 1, "sendMessage is not repeated once Telegram may have posted it")
		})
	}
}

func TestIdempotentCallsRetryServerErrors(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("editMessageText", reply{502, []byte("bad gateway")}, reply{500, []byte(`{"ok":false,"error_code":500,"description":"Internal Server Error"}`)})
	_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "4242", Text: "new"})
	require.NoError(t, err)
	require.Len(t, f.callsOf("editMessageText"), 3)
}

func TestTheTokenNeverReachesAnErrorOrALog(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	var logs bytes.Buffer
	tg := New(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	_, err := tg.Configure(t.Context(), &protocol.ConfigureRequest{Settings: map[string]any{"base_url": closed.URL, "backoff_base": "1ms", "max_retries": 2.0}})
	require.NoError(t, err)
	_, err = tg.Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "1", MessageID: "2", Text: "x"})
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.Contains(t, err.Error(), "connection refused")
	require.NotContains(t, err.Error(), testToken)
	require.NotContains(t, err.Error(), "AAF-test")
	require.Contains(t, logs.String(), "retrying", "the retries were logged")
	require.NotContains(t, logs.String(), "AAF-test")

	f := newFakeBot(t)
	f.push("sendMessage", reply{400, []byte(`{"ok":false,"error_code":400,"description":"Bad Request: see /bot` + testToken + `/sendMessage"}`)})
	_, err = newTransport(t, f, nil).Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "1", Text: "x"})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	require.NotContains(t, err.Error(), "AAF-test")
	require.Contains(t, err.Error(), "[token]")
}

func TestEdit(t *testing.T) {
	t.Parallel()
	t.Run("replaces text and buttons", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "4242",
			Text: "*Saved* _to your library_", Format: messenger.FormatMarkdown, Buttons: [][]messenger.Button{{{Text: "Undo", CallbackData: "undo"}}}})
		require.NoError(t, err)
		p := f.callsOf("editMessageText")[0].params
		require.Equal(t, float64(4242), p["message_id"])
		require.Equal(t, "<b>Saved</b> <i>to your library</i>", p["text"])
		require.NotNil(t, p["reply_markup"])
	})
	t.Run("without buttons removes them", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "4242", Text: "done"})
		require.NoError(t, err)
		_, has := f.callsOf("editMessageText")[0].params["reply_markup"]
		require.False(t, has)
	})
	t.Run("an edit that changes nothing succeeds", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		f.push("editMessageText", reply{400, testdata(t, "error_400_not_modified.json")})
		_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "4242", Text: "same"})
		require.NoError(t, err)
	})
	t.Run("text over one message is refused", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "4242",
			Text: strings.Repeat("word ", 1000)})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.Contains(t, err.Error(), "send it as a new message")
		require.Empty(t, f.callsOf("editMessageText"))
	})
	t.Run("a message id that is not Telegram's is refused", func(t *testing.T) {
		t.Parallel()
		f := newFakeBot(t)
		_, err := newTransport(t, f, nil).Edit(t.Context(), &messenger.EditRequest{Credentials: creds, ChatID: "5550001", MessageID: "m9", Text: "x"})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
	})
}

func TestAnswerCallback(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	_, err := tg.AnswerCallback(t.Context(), &messenger.AnswerCallbackRequest{Credentials: creds, CallbackID: "4382bfdwdsb323b2d9",
		Text: strings.Repeat("é", 250), Alert: true})
	require.NoError(t, err)
	p := f.callsOf("answerCallbackQuery")[0].params
	require.Equal(t, "4382bfdwdsb323b2d9", p["callback_query_id"])
	require.Equal(t, 200, len([]rune(p["text"].(string))), "cut to Telegram's 200 characters")
	require.Equal(t, true, p["show_alert"])

	f.push("answerCallbackQuery", reply{400, []byte(`{"ok":false,"error_code":400,"description":"Bad Request: query is too old and response timeout expired or query ID is invalid"}`)})
	_, err = tg.AnswerCallback(t.Context(), &messenger.AnswerCallbackRequest{Credentials: creds, CallbackID: "old"})
	require.ErrorIs(t, err, protocol.ErrNotFound)

	_, err = tg.AnswerCallback(t.Context(), &messenger.AnswerCallbackRequest{Credentials: creds})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestSetCommands(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	tg := newTransport(t, f, nil)
	_, err := tg.SetCommands(t.Context(), &messenger.SetCommandsRequest{Credentials: creds, Commands: []messenger.BotCommand{
		{Name: "papers", Description: "Your library, or a search in it"}, {Name: "pulse_now", Description: "Run Pulse now"},
	}})
	require.NoError(t, err)
	require.Equal(t, []any{
		map[string]any{"command": "papers", "description": "Your library, or a search in it"},
		map[string]any{"command": "pulse_now", "description": "Run Pulse now"},
	}, f.callsOf("setMyCommands")[0].params["commands"])

	_, err = tg.SetCommands(t.Context(), &messenger.SetCommandsRequest{Credentials: creds})
	require.NoError(t, err)
	require.Len(t, f.callsOf("deleteMyCommands"), 1, "an empty menu removes it")

	for _, bad := range [][]messenger.BotCommand{
		{{Name: "Papers", Description: "x"}},
		{{Name: "/papers", Description: "x"}},
		{{Name: "papers", Description: " "}},
		{{Name: "a", Description: "x"}, {Name: "a", Description: "y"}},
	} {
		_, err := tg.SetCommands(t.Context(), &messenger.SetCommandsRequest{Credentials: creds, Commands: bad})
		require.ErrorIs(t, err, protocol.ErrBadRequest, "%+v", bad)
	}
	require.Len(t, f.callsOf("setMyCommands"), 1)
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tg := New(slog.New(slog.DiscardHandler))
	for _, bad := range []map[string]any{
		{"bot_token": "x"},
		{"base_url": "ftp://api.telegram.org"},
		{"base_url": "https://user:pw@api.telegram.org"},
		{"poll_timeout": "2m"},
		{"max_retries": 11.0},
		{"request_timeout": "0s"},
	} {
		_, err := tg.Configure(t.Context(), &protocol.ConfigureRequest{Settings: bad})
		require.ErrorIs(t, err, protocol.ErrBadRequest, "%v", bad)
	}
	_, err := tg.Configure(t.Context(), &protocol.ConfigureRequest{Settings: map[string]any{"base_url": "https://api.telegram.org/", "poll_timeout": 50.0}})
	require.NoError(t, err)
	require.Equal(t, "https://api.telegram.org", tg.set.baseURL)
	require.Equal(t, 50*time.Second, tg.set.pollTimeout)
}

func TestPartialSendSaysHowManyPartsWent(t *testing.T) {
	t.Parallel()
	f := newFakeBot(t)
	f.push("sendMessage", reply{200, testdata(t, "sendmessage_ok.json")}, reply{403, testdata(t, "error_403_blocked.json")})
	_, err := newTransport(t, f, nil).Send(t.Context(), &messenger.SendRequest{Credentials: creds, ChatID: "1", Text: strings.Repeat("word ", 2000)})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	require.Contains(t, err.Error(), "1 of 3 parts of the message were sent")
	require.False(t, errors.Is(err, protocol.ErrBadRequest))
}
