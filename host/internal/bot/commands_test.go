package bot_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
)

// seedPaper makes a private upload of u's, in u's library.
func seedPaper(t *testing.T, b *testBundle, u uuid.UUID, title string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx,
		`INSERT INTO papers (title, source, discovered_by) VALUES ($1, 'upload', $2) RETURNING id`, title, u).Scan(&id))
	_, err := b.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, u, id)
	require.NoError(t, err)
	return id
}

// paperState renders every per-user row about a paper, of any user, as text.
func paperState(t *testing.T, b *testBundle, paper uuid.UUID) string {
	t.Helper()
	var out string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT coalesce((SELECT string_agg(s::text, ';') FROM paper_user_state s WHERE paper_id = $1), '') || ' | ' ||
		       coalesce((SELECT string_agg(l::text, ';') FROM user_library l WHERE paper_id = $1), '') || ' | ' ||
		       coalesce((SELECT string_agg(f::text, ';') FROM recommendation_feedback f WHERE paper_id = $1), '')`, paper).Scan(&out))
	return out
}

// signIn gives u a session and returns its cookie value.
func signIn(t *testing.T, b *testBundle, u uuid.UUID) string {
	t.Helper()
	token := uuid.NewString() + uuid.NewString()
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO user_sessions (user_id, token_hash, expires_at) VALUES ($1, sha256($2::bytea), now() + interval '1 day')`, u, []byte(token))
	require.NoError(t, err)
	return token
}

// browser calls the API with a session cookie, as the dashboard does, and decodes
// the answer into out.
func (b *testBundle) browser(t *testing.T, method, path, cookie string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, b.server.URL+path, nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie})
	req.Header.Set("Origin", b.server.URL)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(raw, out), string(raw))
	}
	return resp.StatusCode
}

// TestPairedChatActsOnlyAsItsUser: Bob's chat pressing a button that names
// Ann's private paper gets the API's 404, and nothing of Ann's or Bob's changes;
// the same buttons on Bob's own paper work.
func TestPairedChatActsOnlyAsItsUser(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "UTC")
	annPaper := seedPaper(t, b, ann.ID, "Ann's private draft")
	bobPaper := seedPaper(t, b, bob.ID, "Bob's own paper")
	b.pair(t, "bob-chat", bob.ID)

	before := paperState(t, b, annPaper)
	for _, action := range []string{"star", "unstar", "save", "skip", "trash", "up", "down"} {
		text, got := b.press(t, "bob-chat", "paper:"+action+":"+annPaper.String())
		require.Empty(t, got)
		require.NotContains(t, text, "Ann's private draft")
		require.Regexp(t, `(?i)not found|not in your Pulse deck|no such paper`, text, "%s on Ann's paper is the API's 404", action)
		require.Equal(t, before, paperState(t, b, annPaper), "%s on Ann's paper changes nothing", action)
	}

	text, _ := b.press(t, "bob-chat", "paper:star:"+bobPaper.String())
	require.Equal(t, "Starred.", text)
	var starred bool
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT starred FROM paper_user_state WHERE user_id = $1 AND paper_id = $2`, bob.ID, bobPaper).Scan(&starred))
	require.True(t, starred, "Bob's own paper is starred")
	text, _ = b.press(t, "bob-chat", "paper:trash:"+bobPaper.String())
	require.Equal(t, "Moved to the trash.", text)

	text, _ = b.press(t, "bob-chat", "paper:star:not-a-uuid")
	require.Equal(t, "This button no longer works.", text)

	// Bob's lists show his papers, never Ann's.
	got := b.say(t, "bob-chat", "/papers")
	require.NotEmpty(t, got)
	for _, m := range got {
		require.NotContains(t, m.Text, "Ann's private draft")
	}
	got = b.say(t, "bob-chat", "/papers draft")
	require.Equal(t, []string{"No papers found in your library."}, texts(got))
}

// TestReviewSession: /review shows a due card, Show answer turns it over, a
// rating is recorded through the API and the next card follows; /cancel ends.
func TestReviewSession(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ctx := context.Background()
	// Cards are due from when they were made, by the database's clock.
	b.clock.Set(time.Now().Add(time.Minute))
	bob := b.user(t, "bob@example.org", "UTC")
	b.pair(t, "bob-chat", bob.ID)
	var deck struct {
		ID string `json:"id"`
	}
	require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/decks", map[string]string{"name": "Attention"}, &deck))
	for _, fb := range [][2]string{{"What does attention weigh?", "The values, by query-key similarity."}, {"Who wrote it?", "Vaswani et al."}} {
		require.NoError(t, b.client.Do(ctx, bob.ID, http.MethodPost, "/api/cards",
			map[string]string{"deck_id": deck.ID, "front": fb[0], "back": fb[1]}, nil))
	}

	got := b.say(t, "bob-chat", "/review")
	require.Len(t, got, 1)
	first := got[0]
	require.Equal(t, "show_answer", first.Buttons[0][0].CallbackData)

	_, got = b.press(t, "bob-chat", "show_answer")
	require.Empty(t, got)
	edits := b.tr.takeEdits()
	require.Len(t, edits, 1)
	require.Equal(t, first.ID, edits[0].ID)
	require.Contains(t, edits[0].Text, first.Text)
	require.Len(t, edits[0].Buttons[0], 4, "Again, Hard, Good, Easy")

	text, got := b.press(t, "bob-chat", "rate_3")
	require.Equal(t, "Rated Good.", text)
	require.Len(t, got, 1, "the next card follows")
	require.NotEqual(t, first.Text, got[0].Text)
	var rating int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT rating FROM review_logs WHERE user_id = $1`, bob.ID).Scan(&rating))
	require.Equal(t, 3, rating)

	got = b.say(t, "bob-chat", "/cancel")
	require.Equal(t, []string{"Review ended: 1 cards rated."}, texts(got))
	text, _ = b.press(t, "bob-chat", "rate_4")
	require.Contains(t, text, "No review is in progress")
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM review_logs WHERE user_id = $1`, bob.ID).Scan(&n))
	require.Equal(t, 1, n, "a rating after /cancel records nothing")
}

// TestAPIDownNothingActedOn: with the API unreachable, every command and button
// answers "Lectern is not reachable" and nothing changes; pairing, which is the
// bot's own, still works.
func TestAPIDownNothingActedOn(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{apiDown: true})
	bob := b.user(t, "bob@example.org", "UTC")
	paper := seedPaper(t, b, bob.ID, "Bob's paper")
	b.pair(t, "bob-chat", bob.ID)
	before := paperState(t, b, paper)
	for _, line := range []string{"/papers", "/inbox", "/whoami", "/review", "/briefing", "/stats", "/projects",
		"/newproject Thesis", "/tasks", "/done 1", "/next", "/ask what?"} {
		got := b.say(t, "bob-chat", line)
		require.Len(t, got, 1, line)
		require.True(t, strings.HasPrefix(got[0].Text, "Lectern is not reachable"), "%s: %s", line, got[0].Text)
	}
	for _, action := range []string{"star", "save", "trash", "up"} {
		text, _ := b.press(t, "bob-chat", "paper:"+action+":"+paper.String())
		require.True(t, strings.HasPrefix(text, "Lectern is not reachable"), text)
	}
	require.Equal(t, before, paperState(t, b, paper), "nothing was acted on")
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM projects WHERE user_id = $1`, bob.ID).Scan(&n))
	require.Zero(t, n)
}

// TestRateLimits: a chat's sixth /papers within a minute is refused, and
// allowed again once the window has slid past; /pulse_now waits five minutes.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	bob := b.user(t, "bob@example.org", "UTC")
	ann := b.user(t, "ann@example.org", "UTC")
	b.pair(t, "bob-chat", bob.ID)
	b.pair(t, "ann-chat", ann.ID)
	for range 5 {
		got := b.say(t, "bob-chat", "/papers")
		require.NotContains(t, got[0].Text, "Too many")
		b.clock.Advance(time.Second)
	}
	got := b.say(t, "bob-chat", "/papers")
	require.Equal(t, []string{"Too many requests. Try /papers again in 55 seconds."}, texts(got))
	require.NotContains(t, b.say(t, "ann-chat", "/papers")[0].Text, "Too many", "another chat has its own window")
	b.clock.Advance(56 * time.Second)
	require.NotContains(t, b.say(t, "bob-chat", "/papers")[0].Text, "Too many")

	require.NotContains(t, b.say(t, "bob-chat", "/pulse_now")[0].Text, "Too many")
	b.clock.Advance(2 * time.Minute)
	require.Contains(t, b.say(t, "bob-chat", "/pulse_now")[0].Text, "Too many", "the cooldown is five minutes")
	b.clock.Advance(3 * time.Minute)
	require.NotContains(t, b.say(t, "bob-chat", "/pulse_now")[0].Text, "Too many")
}
