package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/refsync"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// A user sets their Zotero key in Settings: the status says so, the hourly sync
// is for them alone, "sync now" starts one job and refuses a second, and a key
// check on a host without the plugin says what to do in words.
func TestZoteroKeyStatusAndSyncNow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")
	b.user(t, "bob@example.org", "user")
	annCookie, bobCookie := b.signIn(t, "ann@example.org"), b.signIn(t, "bob@example.org")

	status := func(cookie string) map[string]any {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/integrations/zotero", cookie: cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var out map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		return out
	}
	require.Equal(t, false, status(annCookie)["configured"])
	rec := b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/sync", cookie: annCookie})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Contains(t, rec.Body.String(), "add yours in Settings")

	rec = b.do(t, req{method: http.MethodPut, path: "/api/settings/config/zotero.api_key", cookie: annCookie,
		body: map[string]any{"value": "P9NiFoyLeZu2bZNvvuQPDWsd"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, true, status(annCookie)["configured"])
	require.Equal(t, false, status(bobCookie)["configured"], "Ann's key is hers")

	users, err := b.app.Settings.UsersWithKey(context.Background(), "zotero.api_key")
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]bool{ann.ID: true}, users, "the hourly sync runs for Ann alone")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/test", cookie: annCookie})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "an admin can enable it under Plugins")
	require.NotContains(t, rec.Body.String(), "P9NiFoyLeZu2bZNvvuQPDWsd")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/sync", cookie: annCookie})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	rec = b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/sync", cookie: annCookie})
	require.Equal(t, http.StatusConflict, rec.Code, "one sync of a library at a time: %s", rec.Body.String())
}

// Without the Zotero plugin the sync job ends at once (no retries) and says why
// in words.
func TestZoteroSyncWithoutThePluginSaysSo(t *testing.T) {
	t.Parallel()
	// The plugin is listed but disabled, as plugins.toml ships it.
	host := pluginhost.New([]pluginhost.Entry{{Name: "zotero", Kind: protocol.KindRefManager, Path: "/nonexistent/zotero",
		Enabled: false, CallTimeout: time.Second, MaxConcurrency: 1}}, pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, host.Start(context.Background()))
	t.Cleanup(host.Close)
	b := setupWith(t, nil, func(o *Options) { o.Plugins = host })
	b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	rec := b.do(t, req{method: http.MethodPut, path: "/api/settings/config/zotero.api_key", cookie: cookie,
		body: map[string]any{"value": "P9NiFoyLeZu2bZNvvuQPDWsd"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	b.startJobs(t)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/sync", cookie: cookie})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var env jobs.Envelope
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	done := b.waitJob(t, cookie, env.ID)
	require.Equal(t, jobs.StateCancelled, done.State, "%+v", done)
	require.Equal(t, 1, done.Attempt)
	require.NotNil(t, done.Error)
	require.Equal(t, "no_plugin", done.Error.Code)
	require.Contains(t, done.Error.Message, "an admin can enable it under Plugins")
}

// An admin sets up group libraries for the whole instance: the key is sealed and
// shown masked, the groups are checked, "sync now" starts one system job and
// refuses a second, and no user can set the instance's key through their own
// settings.
func TestZoteroInstanceGroupsAreAnAdminsSetting(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "root@example.org", "admin")
	b.user(t, "ann@example.org", "user")
	admin, ann := b.signIn(t, "root@example.org"), b.signIn(t, "ann@example.org")

	rec := b.do(t, req{method: http.MethodGet, path: "/api/admin/zotero", cookie: admin})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"api_key_set":false,"group_ids":[],"libraries":[]}`, rec.Body.String())
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/zotero/sync", cookie: admin})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "at least one group library")

	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/zotero", cookie: admin,
		body: map[string]any{"group_ids": []string{"twelve"}}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "group_ids")

	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/zotero", cookie: admin,
		body: map[string]any{"api_key": "P9NiFoyLeZu2bZNvvuQPDWsd", "group_ids": []string{"12345", "groups/678", "12345"}}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "P9NiFoyLeZu2bZNvvuQPDWsd", "the key is only ever shown masked")
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.Equal(t, true, out["api_key_set"])
	require.Equal(t, []any{"12345", "678"}, out["group_ids"])

	acct, err := b.app.RefSync.Instance(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"groups/12345", "groups/678"}, acct.Libraries)
	require.Equal(t, "P9NiFoyLeZu2bZNvvuQPDWsd", acct.Credentials["api_key"])

	rec = b.do(t, req{method: http.MethodPut, path: "/api/settings/config/zotero.instance_api_key", cookie: ann,
		body: map[string]any{"value": "mine"}})
	require.NotEqual(t, http.StatusOK, rec.Code, "a user cannot set the instance's key: %s", rec.Body.String())
	require.Less(t, rec.Code, 500)
	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/zotero", cookie: ann, body: map[string]any{"group_ids": []string{"1"}}})
	require.Equal(t, http.StatusForbidden, rec.Code)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/zotero/sync", cookie: admin})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var env jobs.Envelope
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	require.Equal(t, "refmanager.sync_instance", env.Kind)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/zotero/sync", cookie: admin})
	require.Equal(t, http.StatusConflict, rec.Code, "one instance sync at a time: %s", rec.Body.String())

	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/zotero", cookie: admin, body: map[string]any{"group_ids": []string{}}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, err = b.app.RefSync.Instance(context.Background())
	require.ErrorIs(t, err, refsync.ErrInstanceNotConfigured, "an empty list stops the instance's sync")
}
