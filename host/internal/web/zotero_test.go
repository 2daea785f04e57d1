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

// TestZoteroInstanceSection: an admin sets up the instance's group libraries on
// the settings page (a bad group number is shown against its field, the key only
// masked) and starts their sync; a user sees no such section and cannot post it.
func TestZoteroInstanceSection(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)

	p = b.get("/settings")
	require.Contains(t, p.body, "Zotero group libraries for everyone")
	require.NotContains(t, p.body, `action="/settings/zotero/instance/sync"`, "nothing to sync yet")

	p = b.post("/settings/zotero/instance", url.Values{"api_key": {"P9NiFoyLeZu2bZNvvuQPDWsd"}, "group_ids": {"12345, lab"}})
	require.Equal(t, http.StatusUnprocessableEntity, p.status, p.body)
	require.Contains(t, p.body, "a Zotero group&#39;s number")
	require.Contains(t, p.body, `value="12345, lab"`, "what was typed stays in the form")

	p = b.post("/settings/zotero/instance", url.Values{"api_key": {"P9NiFoyLeZu2bZNvvuQPDWsd"}, "group_ids": {"12345 groups/678"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "group libraries are saved")
	require.Contains(t, p.body, `value="12345, 678"`)
	require.NotContains(t, p.body, "P9NiFoyLeZu2bZNvvuQPDWsd", "the key is shown masked only")

	p = b.post("/settings/zotero/instance/sync", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "refmanager.sync_instance")

	p = b.post("/admin/users", url.Values{"email": {"cy@example.org"}, "role": {"user"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	cy := s.signInInvited(t, "cy@example.org")
	p = cy.get("/settings")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.NotContains(t, p.body, "Zotero group libraries for everyone")
	p = cy.post("/settings/zotero/instance", url.Values{"group_ids": {"1"}})
	require.Equal(t, http.StatusForbidden, p.status, p.body)
}
