package web

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestZoteroSection: Settings shows whether a Zotero key is set; with one, a key
// check on a host without the Zotero plugin says what to do in words, and "Sync
// now" starts the sync and shows its progress.
func TestZoteroSection(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)

	p = b.get("/settings")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "No Zotero key is set.")
	require.NotContains(t, p.body, `action="/settings/zotero/sync"`)

	p = b.post("/settings/config", url.Values{"key": {"zotero.api_key"}, "value": {"P9NiFoyLeZu2bZNvvuQPDWsd"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Not synced yet")
	require.NotContains(t, p.body, "P9NiFoyLeZu2bZNvvuQPDWsd", "the key is shown masked only")

	p = b.post("/settings/zotero/test", nil)
	require.Equal(t, http.StatusServiceUnavailable, p.status, p.body)
	require.Contains(t, p.body, "an admin can enable it under Plugins")
	require.NotContains(t, p.body, "P9NiFoyLeZu2bZNvvuQPDWsd")

	p = b.post("/settings/zotero/sync", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Your Zotero sync has started.")
	require.Contains(t, p.body, "refmanager.sync")
}
