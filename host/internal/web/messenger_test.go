package web

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/users"
)

var pairingCommand = regexp.MustCompile(`data-testid="pairing-command">/pair ([A-Z2-7]+)<`)

// TestMessengerPairingSection: Settings → Integrations issues a pairing token
// shown once, shows the chat it paired, and unpairs it.
func TestMessengerPairingSection(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)

	p = b.get("/settings")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "No chat is paired.")
	require.NotRegexp(t, pairingCommand, p.body)

	p = b.post("/settings/messenger/token", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	m := pairingCommand.FindStringSubmatch(p.body)
	require.NotNil(t, m, "the page shows the /pair command")
	require.NotRegexp(t, pairingCommand, b.get("/settings").body, "the token is shown only once")

	res, err := users.Pair(context.Background(), s.pool, m[1], "4242", "ada_l", time.Now())
	require.NoError(t, err)
	require.Equal(t, users.OutcomePaired, res.Outcome)
	p = b.get("/settings")
	require.Contains(t, html.UnescapeString(p.body), "4242 (@ada_l)")
	require.Contains(t, p.body, `action="/settings/messenger/unpair"`)

	p = b.post("/settings/messenger/unpair", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "The chat is unpaired.")
	require.Contains(t, p.body, "No chat is paired.")
	_, err = users.PairingByChat(context.Background(), s.pool, "4242")
	require.ErrorIs(t, err, users.ErrNotFound)
}
