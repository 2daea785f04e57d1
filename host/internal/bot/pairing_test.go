package bot_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/messenger"
)

const pairPrompt = "This chat is not paired with a Lectern account. In Lectern, open Settings → Integrations, " +
	"create a pairing token, and send it here as /pair <token>."

// TestUnpairedChatGetsOnlyThePairPrompt: whatever an unpaired chat sends, a
// command, text or a button naming a real paper, it gets the /pair prompt and
// nothing else, and nothing changes.
func TestUnpairedChatGetsOnlyThePairPrompt(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	paper := seedPaper(t, b, ann.ID, "Ann's private notes on transformers")
	before := paperState(t, b, paper)

	for _, line := range []string{"/start", "/help", "/whoami", "/papers", "/inbox", "/review", "/briefing",
		"/ask what is attention?", "/unpair", "/done 1", "/nosuchcommand", "hello there"} {
		got := b.say(t, "stranger", line)
		require.Equal(t, []string{pairPrompt}, texts(got), "%q gets the prompt and nothing else", line)
		require.Empty(t, got[0].Buttons)
	}
	for _, data := range []string{"paper:star:" + paper.String(), "paper:trash:" + paper.String(), "show_answer", "rate_3"} {
		text, got := b.press(t, "stranger", data)
		require.Equal(t, pairPrompt, text, "%q gets the prompt", data)
		require.Empty(t, got, "and no message")
	}
	require.Equal(t, before, paperState(t, b, paper), "nothing the stranger sent changed Ann's paper")
}

// TestPairingOutcomes walks the outcomes of /pair: a group chat cannot pair, a
// wrong token is invalid, a token works once, an expired one is refused and
// deleted, a chat of another user is refused, and re-pairing moves the user and
// tells the old chat. /whoami and /unpair (idempotent) follow.
func TestPairingOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	ann := b.user(t, "ann@example.org", "Europe/Berlin")
	bob := b.user(t, "bob@example.org", "UTC")
	tok := b.token(t, ann.ID)

	// A group chat cannot pair, and the token survives the attempt.
	got := b.sayIn(t, "-100group", messenger.User{ID: "ann-person", Username: "ann"}, "/pair "+tok)
	require.Len(t, got, 1)
	require.Contains(t, got[0].Text, "only in a private chat")
	_, err := users.PairingByChat(ctx, b.pool, "-100group")
	require.ErrorIs(t, err, users.ErrNotFound)

	got = b.say(t, "ann-chat", "/pair not-a-token")
	require.Contains(t, texts(got)[0], "not valid")
	got = b.say(t, "ann-chat", "/pair")
	require.Contains(t, texts(got)[0], "/pair <token>")

	// The token works once.
	got = b.say(t, "ann-chat", "/pair "+tok)
	require.Contains(t, texts(got)[0], "Paired.")
	p, err := users.PairingByChat(ctx, b.pool, "ann-chat")
	require.NoError(t, err)
	require.Equal(t, ann.ID, p.UserID)
	require.Equal(t, "user_ann-chat", p.MessengerUsername)
	got = b.say(t, "other-chat", "/pair "+tok)
	require.Contains(t, texts(got)[0], "used already")
	_, err = users.PairingByChat(ctx, b.pool, "other-chat")
	require.ErrorIs(t, err, users.ErrNotFound, "a used token pairs nothing")

	// An expired token is refused, and deleted.
	late := b.token(t, bob.ID)
	b.clock.Advance(users.PairingTokenTTL + time.Second)
	got = b.say(t, "bob-chat", "/pair "+late)
	require.Contains(t, texts(got)[0], "expired")
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM messenger_pairing_tokens WHERE user_id = $1`, bob.ID).Scan(&n))
	require.Zero(t, n, "the expired token is deleted")
	got = b.say(t, "bob-chat", "/pair "+late)
	require.Contains(t, texts(got)[0], "not valid", "and then it is no token at all")

	// Bob cannot take Ann's chat; his token stays good for his own chat.
	bobTok := b.token(t, bob.ID)
	got = b.say(t, "ann-chat", "/pair "+bobTok)
	require.Contains(t, texts(got)[0], "paired with another Lectern account")
	p, err = users.PairingByChat(ctx, b.pool, "ann-chat")
	require.NoError(t, err)
	require.Equal(t, ann.ID, p.UserID, "Ann keeps her chat")
	got = b.say(t, "bob-chat", "/pair "+bobTok)
	require.Contains(t, texts(got)[0], "Paired.")

	// Re-pairing moves Ann to her new chat and tells the old one.
	got = b.say(t, "ann-phone", "/pair "+b.token(t, ann.ID))
	require.Contains(t, texts(got)[0], "Paired.")
	old := b.tr.take("ann-chat")
	require.Len(t, old, 1)
	require.Contains(t, old[0].Text, "no longer paired")
	require.Equal(t, []string{pairPrompt}, texts(b.say(t, "ann-chat", "/papers")), "the old chat is unpaired")

	got = b.say(t, "ann-phone", "/whoami")
	require.Len(t, got, 1)
	require.Contains(t, got[0].Text, "ann@example.org")
	require.Contains(t, got[0].Text, "Europe/Berlin")
	require.NotContains(t, got[0].Text, "bob@example.org")

	// /unpair deletes the pairing and outstanding tokens; again, it is the prompt.
	b.token(t, ann.ID)
	got = b.say(t, "ann-phone", "/unpair")
	require.Contains(t, texts(got)[0], "Unpaired.")
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM messenger_pairing_tokens WHERE user_id = $1 AND consumed_at IS NULL`, ann.ID).Scan(&n))
	require.Zero(t, n, "unpairing voids outstanding tokens")
	require.Equal(t, []string{pairPrompt}, texts(b.say(t, "ann-phone", "/unpair")))
	chat, err := users.Unpair(ctx, b.pool, ann.ID)
	require.NoError(t, err)
	require.Empty(t, chat, "unpairing twice is harmless")
	_, err = users.PairingByChat(ctx, b.pool, "bob-chat")
	require.NoError(t, err, "Bob's pairing is untouched by Ann's")
}

// TestConcurrentPairUsesATokenOnce: many chats racing with one token; exactly
// one pairs (the row lock).
func TestConcurrentPairUsesATokenOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	tok := b.token(t, ann.ID)
	const racers = 8
	outcomes := make(chan users.Outcome, racers)
	for i := range racers {
		go func() {
			res, err := users.Pair(context.Background(), b.pool, tok, "chat-"+string(rune('a'+i)), "", b.clock.Now())
			if err != nil {
				outcomes <- users.Outcome(err.Error())
				return
			}
			outcomes <- res.Outcome
		}()
	}
	count := map[users.Outcome]int{}
	for range racers {
		count[<-outcomes]++
	}
	require.Equal(t, map[users.Outcome]int{users.OutcomePaired: 1, users.OutcomeUsed: racers - 1}, count)
}

// TestPairingTokenRoute: the dashboard's route issues a token that pairs, and
// the status route shows the paired chat.
func TestPairingTokenRoute(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	cookie := signIn(t, b, ann.ID)
	var tok struct {
		Token   string `json:"token"`
		Command string `json:"command"`
	}
	require.Equal(t, http.StatusCreated, b.browser(t, http.MethodPost, "/api/me/messenger/pairing-token", cookie, &tok))
	require.Equal(t, "/pair "+tok.Token, tok.Command)
	var st struct {
		Paired         bool       `json:"paired"`
		ChatID         string     `json:"chat_id"`
		TokenExpiresAt *time.Time `json:"token_expires_at"`
	}
	require.Equal(t, http.StatusOK, b.browser(t, http.MethodGet, "/api/me/messenger", cookie, &st))
	require.False(t, st.Paired)
	require.NotNil(t, st.TokenExpiresAt)

	got := b.say(t, "ann-chat", tok.Command)
	require.Contains(t, texts(got)[0], "Paired.")
	st.TokenExpiresAt = nil
	require.Equal(t, http.StatusOK, b.browser(t, http.MethodGet, "/api/me/messenger", cookie, &st))
	require.True(t, st.Paired)
	require.Equal(t, "ann-chat", st.ChatID)
	require.Nil(t, st.TokenExpiresAt, "the token is used up")

	require.Equal(t, http.StatusNoContent, b.browser(t, http.MethodDelete, "/api/me/messenger", cookie, nil))
	require.Equal(t, []string{pairPrompt}, texts(b.say(t, "ann-chat", "/papers")), "unpaired from the dashboard")
}
