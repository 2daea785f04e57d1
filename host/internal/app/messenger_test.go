package app

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAdminMessengerSettings: an admin sets the bot token (sealed, shown only
// masked) and the owner's chat; an empty string removes one; a token with
// spaces is refused and nothing changes.
func TestAdminMessengerSettings(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	admin := b.user(t, "root@example.org", "admin")
	cookie := b.insertSession(t, admin.ID, timeIn(1))
	const token = "123456:AAbbCCddEEffGGhhIIjjKKllMMnnOOpp"

	rec := b.do(t, req{method: http.MethodPut, path: "/api/admin/messenger", cookie: cookie,
		body: map[string]any{"bot_token": token, "owner_chat_id": "42"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), token, "the token is never sent back")
	var got struct {
		Set    bool   `json:"bot_token_set"`
		Masked string `json:"bot_token_masked"`
		Owner  string `json:"owner_chat_id"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.True(t, got.Set)
	require.NotEmpty(t, got.Masked)
	require.Equal(t, "42", got.Owner)
	secret, err := b.app.Settings.SystemSecret(t.Context(), "messenger.bot_token")
	require.NoError(t, err)
	require.Equal(t, token, secret, "the bot reads the token back")

	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/messenger", cookie: cookie, body: map[string]any{"bot_token": "has a space"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/messenger", cookie: cookie, body: map[string]any{"owner_chat_id": ""}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got.Owner = ""
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.True(t, got.Set, "the token stays: it was left out")
	require.Empty(t, got.Owner, "the owner's chat is removed")
}
