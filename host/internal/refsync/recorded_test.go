package refsync

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// recordedLibrary serves the recorded Zotero items (../shared/fixtures/zotero) as
// user 1's library (and group 42's), read-only except for deletions, at the API's paths.
type recordedLibrary struct {
	mu      sync.Mutex
	version int64
	objects map[string]json.RawMessage
	at      map[string]int64
	deleted map[string]int64
}

func serveRecorded(t *testing.T, files ...string) (*recordedLibrary, string) {
	lib := &recordedLibrary{objects: map[string]json.RawMessage{}, at: map[string]int64{}, deleted: map[string]int64{}}
	dir := plugintest.FixturesDir(t, "zotero")
	for _, f := range files {
		var objs []json.RawMessage
		require.NoError(t, json.Unmarshal(plugintest.ReadFixture(t, dir, f), &objs))
		for _, o := range objs {
			var head struct {
				Key     string `json:"key"`
				Version int64  `json:"version"`
			}
			require.NoError(t, json.Unmarshal(o, &head))
			lib.objects[head.Key], lib.at[head.Key] = o, head.Version
			lib.version = max(lib.version, head.Version)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(lib.serve))
	t.Cleanup(srv.Close)
	return lib, srv.URL
}

func (l *recordedLibrary) remove(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.version++
	delete(l.objects, key)
	l.deleted[key] = l.version
}

func (l *recordedLibrary) serve(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := r.URL.Query()
	since, _ := strconv.ParseInt(q.Get("since"), 10, 64)
	w.Header().Set("Last-Modified-Version", strconv.FormatInt(l.version, 10))
	send := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	// The same records serve as group 42's library (the instance's sync).
	switch path := strings.Replace(r.URL.Path, "/groups/42/", "/users/1/", 1); {
	case path == "/keys/current":
		send(map[string]any{"userID": 1, "username": "testuser",
			"access": map[string]any{"user": map[string]any{"library": true, "notes": true, "write": false}}})
	case path == "/users/1/items" && q.Get("format") == "versions":
		if v, err := strconv.ParseInt(r.Header.Get("If-Modified-Since-Version"), 10, 64); err == nil && v >= l.version {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		out := map[string]int64{}
		for k, v := range l.at {
			if _, ok := l.objects[k]; ok && v > since {
				out[k] = v
			}
		}
		send(out)
	case path == "/users/1/items":
		var out []json.RawMessage
		for k := range strings.SplitSeq(q.Get("itemKey"), ",") {
			if o, ok := l.objects[k]; ok {
				out = append(out, o)
			}
		}
		send(out)
	case strings.HasSuffix(path, "/children"):
		w.Header().Set("Total-Results", "0")
		send([]any{})
	case path == "/users/1/deleted":
		out := []string{}
		for k, v := range l.deleted {
			if v > since {
				out = append(out, k)
			}
		}
		send(map[string]any{"items": out, "collections": []string{}})
	default:
		http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
	}
}

// pluginFixture is a fixture whose syncer talks to the real Zotero plugin binary,
// pointed at the recorded library served at base.
func pluginFixture(t *testing.T, base string) *fixture {
	t.Helper()
	bin := plugintest.Build(t, "../../../plugins/refmanager/zotero")
	host := pluginhost.New([]pluginhost.Entry{{Name: "zotero", Kind: protocol.KindRefManager, Path: bin, Enabled: true,
		CallTimeout: 30 * time.Second, MaxConcurrency: 4, Settings: map[string]any{"base_url": base}}},
		pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, host.Start(context.Background()))
	t.Cleanup(host.Close)
	f := newFixture(t)
	f.syncer.Manager = func() (refmanager.Manager, error) { return host.RefManager("zotero") }
	f.syncer.MaxNew = 100
	return f
}

// TestSyncingTheRecordedLibraryTwiceThroughThePlugin runs the real plugin
// binary against the recorded library: the second sync changes nothing and a
// remote deletion removes exactly the rows its item brought.
func TestSyncingTheRecordedLibraryTwiceThroughThePlugin(t *testing.T) {
	lib, base := serveRecorded(t, "pyzotero_user_items_top.json", "webapi_user_items_with_note.json")
	f := pluginFixture(t, base)
	ctx := context.Background()

	rep, err := f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, 24, rep.Added, "20 + 4 recorded records; the standalone note is not a paper")
	require.Equal(t, lib.version, rep.Version)
	first := f.counts(t, f.ann)
	require.Equal(t, counts{library: 24, links: 24, papers: 24}, first)

	rep, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, Report{LibraryID: "users/1", Version: lib.version}, rep)
	require.Equal(t, first, f.counts(t, f.ann))

	gone := f.paperOf(t, f.ann, "PQKBRC33")
	lib.remove("PQKBRC33")
	rep, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Removed)
	require.Equal(t, lib.version, rep.Version, "the cursor moved to the deletion's version")
	require.Equal(t, counts{library: 23, links: 23, papers: 24}, f.counts(t, f.ann))
	var inLibrary bool
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`,
		f.ann, gone).Scan(&inLibrary))
	require.False(t, inLibrary, "exactly the deleted item's paper left the library")
}

// TestSyncingTheRecordedLibraryAsTheInstancesGroupThroughThePlugin runs the real
// plugin against the recorded records served as a group library the admin set
// up: they become shared papers in nobody's library, once.
func TestSyncingTheRecordedLibraryAsTheInstancesGroupThroughThePlugin(t *testing.T) {
	lib, base := serveRecorded(t, "pyzotero_user_items_top.json", "webapi_user_items_with_note.json")
	f := pluginFixture(t, base)
	f.withGroups("groups/42")
	ctx := context.Background()

	reps, err := f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, []Report{{LibraryID: "groups/42", Added: 24, Version: lib.version}}, reps)
	require.Equal(t, instanceCounts{links: 24, papers: 24, shared: 24}, f.instanceCounts(t))

	reps, err = f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, []Report{{LibraryID: "groups/42", Version: lib.version}}, reps)

	lib.remove("PQKBRC33")
	reps, err = f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, reps[0].Removed)
	require.Equal(t, instanceCounts{links: 23, papers: 24, shared: 24}, f.instanceCounts(t))
}
