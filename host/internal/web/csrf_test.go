package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A page on another site cannot make a signed-in browser post the dashboard's
// forms or call the API through its proxy: the browser says where the request
// comes from, and both refuse it before acting.
func TestCrossSiteFormsAreRefused(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)

	forged := func(path, contentType, body string) int {
		req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", "https://evil.example")
		resp, err := b.c.Do(req) // the jar sends the session cookie, as a browser would
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, forged("/settings/profile", "application/x-www-form-urlencoded",
		url.Values{"display_name": {"Mallory"}, "timezone": {"Pacific/Kiritimati"}}.Encode()))
	require.Equal(t, http.StatusForbidden, forged("/api/rag/ask", "text/plain", `{"question":"exfiltrate"}`))

	p = b.get("/settings")
	require.Equal(t, http.StatusOK, p.status)
	require.NotContains(t, p.body, "Mallory", "the forged form changed nothing")
	require.NotContains(t, p.body, "Pacific/Kiritimati")
}
