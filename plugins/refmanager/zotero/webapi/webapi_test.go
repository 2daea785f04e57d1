package webapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/plugintest"
)

// fakeClock is time that passes only when the client sleeps.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.slept = append(f.slept, d)
	f.mu.Unlock()
	return ctx.Err()
}

// fixture reads a recorded Zotero response from the shared fixtures.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return plugintest.ReadFixture(t, plugintest.FixturesDir(t, "zotero"), name)
}

const testKey = "P9NiFoyLeZu2bZNvvuQPDWsd"

// server answers with handler and records, by the fake clock, when each request
// arrived.
type server struct {
	*httptest.Server
	clock *fakeClock
	mu    sync.Mutex
	at    []time.Time
	paths []string
}

func newServer(t *testing.T, clock *fakeClock, handler http.HandlerFunc) (*server, *Client) {
	t.Helper()
	s := &server{clock: clock}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.at = append(s.at, clock.Now())
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		if r.Header.Get("Zotero-API-Key") != testKey || r.Header.Get("Zotero-API-Version") != "3" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s, New(Config{BaseURL: s.URL, APIKey: testKey, Clock: clock})
}

func (s *server) arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

func TestA429WithRetryAfterDelaysTheRetryByAtLeastTheStatedTime(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		want         time.Duration
	}{
		{"seconds", "30", 30 * time.Second},
		{"HTTP date", "Fri, 27 Nov 2026 09:02:00 GMT", 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			var calls atomic.Int32
			s, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					w.Header().Set("Retry-After", tc.header)
					http.Error(w, "Too many requests, please slow down", http.StatusTooManyRequests)
					return
				}
				w.Header().Set("Last-Modified-Version", "4087")
				_, _ = w.Write(fixture(t, "pyzotero_item_versions.json"))
			})
			v, err := c.Changed(context.Background(), User(475425), "items", 0)
			require.NoError(t, err)
			require.Equal(t, map[string]int64{"EAWCSKSF": 4087, "RRK27C5F": 4000}, v.Keys)
			require.EqualValues(t, 4087, v.LibraryVersion)
			at := s.arrivals()
			require.Len(t, at, 2)
			require.GreaterOrEqual(t, at[1].Sub(at[0]), tc.want)
		})
	}
}

func TestABackoffHeaderOnA200DelaysTheNextRequest(t *testing.T) {
	clock := newFakeClock()
	s, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/users/1/deleted" {
			w.Header().Set("Backoff", "45")
			w.Header().Set("Last-Modified-Version", "300")
			_, _ = w.Write([]byte(`{"collections":["QM6T3KHX"],"searches":[],"items":["VG79HDDM","BBCCDDEE"],"tags":[],"settings":[]}`))
			return
		}
		w.Header().Set("Last-Modified-Version", "300")
		_, _ = w.Write([]byte(`{}`))
	})
	ctx := context.Background()
	d, err := c.DeletedSince(ctx, User(1), 250)
	require.NoError(t, err)
	require.Equal(t, []string{"VG79HDDM", "BBCCDDEE"}, d.Items)
	require.Equal(t, []string{"QM6T3KHX"}, d.Collections)
	require.EqualValues(t, 300, d.LibraryVersion)

	_, err = c.Changed(ctx, User(1), "collections", 250)
	require.NoError(t, err)
	at := s.arrivals()
	require.Len(t, at, 2)
	require.GreaterOrEqual(t, at[1].Sub(at[0]), 45*time.Second, "the Backoff of a successful answer holds the next request")
}

func TestAWaitLongerThanAllowedFailsInWordsWithoutRetrying(t *testing.T) {
	clock := newFakeClock()
	s, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	_, err := c.CurrentKey(context.Background())
	require.ErrorIs(t, err, ErrRateLimited)
	require.Contains(t, err.Error(), "asked to wait 2h0m0s")
	require.Len(t, s.arrivals(), 1)
}

func TestServerErrorsAreRetriedWithBackoffAndThenReported(t *testing.T) {
	clock := newFakeClock()
	s, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "An error occurred", http.StatusInternalServerError)
	})
	_, err := c.CurrentKey(context.Background())
	require.ErrorIs(t, err, ErrUnavailable)
	require.Len(t, s.arrivals(), 5)
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, clock.slept)
}

func TestAnUnchangedLibraryIsOne304(t *testing.T) {
	clock := newFakeClock()
	_, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-Modified-Since-Version") == "4087" {
			w.Header().Set("Last-Modified-Version", "4087")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		http.Error(w, "unexpected", http.StatusBadRequest)
	})
	v, err := c.Changed(context.Background(), Group(2), "items", 4087)
	require.NoError(t, err)
	require.True(t, v.Unchanged)
	require.Empty(t, v.Keys)
	require.EqualValues(t, 4087, v.LibraryVersion)
}

func TestItemsAreFetchedInBatchesOf50WithAtMostFourInFlight(t *testing.T) {
	clock := newFakeClock()
	var inFlight, most atomic.Int32
	var batches atomic.Int32
	release := make(chan struct{})
	_, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if batches.Add(1) == 4 {
			close(release)
		}
		<-release
		keys := strings.Split(r.URL.Query().Get("itemKey"), ",")
		if len(keys) > BatchSize || r.URL.Query().Get("includeTrashed") != "1" {
			http.Error(w, "bad batch", http.StatusBadRequest)
			return
		}
		var out []map[string]any
		for _, k := range keys {
			out = append(out, map[string]any{"key": k, "version": 1, "data": map[string]any{"key": k, "itemType": "journalArticle", "title": "Paper " + k}})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	keys := make([]string, 420)
	for i := range keys {
		keys[i] = fmt.Sprintf("K%07d", i)
	}
	items, err := c.Items(context.Background(), User(1), keys)
	require.NoError(t, err)
	require.Len(t, items, 420)
	require.EqualValues(t, 9, batches.Load())
	require.EqualValues(t, 4, most.Load())
}

func TestRecordedItemsReadAsNotesAnnotationsAndRecords(t *testing.T) {
	clock := newFakeClock()
	_, c := newServer(t, clock, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/users/1/items":
			w.Header().Set("Total-Results", "2")
			_, _ = w.Write(fixture(t, "webapi_user_items_with_note.json"))
		case "/users/1/items/VG79HDDM/children":
			w.Header().Set("Total-Results", "1")
			_, _ = w.Write(fixture(t, "webapi_user_attachment_annotations.json"))
		case "/users/475425/items":
			_, _ = w.Write(fixture(t, "pyzotero_user_items_top.json"))
		default:
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()
	items, err := c.Items(ctx, User(1), []string{"Q6ALXLJG"})
	require.NoError(t, err)
	require.NotEmpty(t, items)
	var note *Item
	for i := range items {
		if items[i].ItemType == "note" {
			note = &items[i]
		}
	}
	require.NotNil(t, note, "the recorded library holds a standalone note")
	require.Contains(t, note.Note, "<h1>Photos</h1>")
	require.Contains(t, note.Tags, "cute")

	anns, err := c.Children(ctx, User(1), "VG79HDDM")
	require.NoError(t, err)
	require.NotEmpty(t, anns)
	for _, a := range anns {
		require.Equal(t, "annotation", a.ItemType)
		require.NotEmpty(t, a.ParentItem)
		require.NotEmpty(t, a.AnnotationType)
	}

	top, err := c.Items(ctx, User(475425), []string{"X"})
	require.NoError(t, err)
	var withCreators int
	for _, it := range top {
		if len(it.Creators) > 0 && it.Creators[0].Display() != "" {
			withCreators++
		}
	}
	require.Positive(t, withCreators)
}

func TestTheKeyIsNeverInAnErrorAndTheNetworksWordsNeither(t *testing.T) {
	clock := newFakeClock()
	c := New(Config{BaseURL: "http://127.0.0.1:1", APIKey: testKey, Clock: clock})
	_, err := c.CurrentKey(context.Background())
	require.ErrorIs(t, err, ErrUnavailable)
	require.NotContains(t, err.Error(), testKey)
	require.NotContains(t, err.Error(), "127.0.0.1")
	require.NotContains(t, err.Error(), "connection refused")
}

// library is a small in-memory Zotero library: items by key with versions, write
// tokens remembered, and If-Unmodified-Since-Version checked.
type library struct {
	mu      sync.Mutex
	version int64
	items   map[string]map[string]any
	tokens  map[string]bool
	// dropNextPOST closes the connection after applying the next POST, as if the
	// answer were lost on the way.
	dropNextPOST bool
}

func (l *library) handle(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/users/1")
	switch {
	case r.Method == http.MethodPost && path == "/items":
		token := r.Header.Get("Zotero-Write-Token")
		if l.tokens[token] {
			http.Error(w, "Write token already used", http.StatusPreconditionFailed)
			return
		}
		var in []map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		l.tokens[token] = true
		l.version++
		success := map[string]string{}
		for i, it := range in {
			key := fmt.Sprintf("NEW%05d", len(l.items))
			it["key"], it["version"] = key, float64(l.version)
			l.items[key] = it
			success[strconv.Itoa(i)] = key
		}
		if l.dropNextPOST {
			l.dropNextPOST = false
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		w.Header().Set("Last-Modified-Version", strconv.FormatInt(l.version, 10))
		_ = json.NewEncoder(w).Encode(map[string]any{"success": success, "unchanged": map[string]string{}, "failed": map[string]any{}})
	case r.Method == http.MethodPatch && strings.HasPrefix(path, "/items/"):
		key := strings.TrimPrefix(path, "/items/")
		it, ok := l.items[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("If-Unmodified-Since-Version") != strconv.FormatInt(int64(it["version"].(float64)), 10) {
			http.Error(w, "Item has been modified since specified version", http.StatusPreconditionFailed)
			return
		}
		var change map[string]any
		if err := json.NewDecoder(r.Body).Decode(&change); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		l.version++
		for k, v := range change {
			it[k] = v
		}
		it["version"] = float64(l.version)
		w.Header().Set("Last-Modified-Version", strconv.FormatInt(l.version, 10))
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/items/"):
		it, ok := l.items[strings.TrimPrefix(path, "/items/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"key": it["key"], "version": it["version"], "data": it})
	case r.Method == http.MethodGet && path == "/items" && r.URL.Query().Get("format") == "versions":
		since, _ := strconv.ParseFloat(r.URL.Query().Get("since"), 64)
		out := map[string]int64{}
		for k, it := range l.items {
			if v := it["version"].(float64); v > since {
				out[k] = int64(v)
			}
		}
		w.Header().Set("Last-Modified-Version", strconv.FormatInt(l.version, 10))
		_ = json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodGet && path == "/items":
		var out []map[string]any
		for k := range strings.SplitSeq(r.URL.Query().Get("itemKey"), ",") {
			if it, ok := l.items[k]; ok {
				out = append(out, map[string]any{"key": k, "version": it["version"], "data": it})
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	default:
		http.NotFound(w, r)
	}
}

func TestAPushRetriedAfterADroppedAnswerCreatesOneItem(t *testing.T) {
	clock := newFakeClock()
	lib := &library{version: 10, items: map[string]map[string]any{}, tokens: map[string]bool{}, dropNextPOST: true}
	_, c := newServer(t, clock, lib.handle)
	marker := "lectern_paper_id: 0b9f2d6e-6c8a-4f51-9a55-3f1b1f3c2a10"
	key, err := c.CreateOnce(context.Background(), User(1), 10, map[string]any{
		"itemType": "journalArticle", "title": "Attention Is All You Need", "DOI": "10.48550/arXiv.1706.03762",
		"extra": marker}, marker)
	require.NoError(t, err)
	lib.mu.Lock()
	defer lib.mu.Unlock()
	require.Len(t, lib.items, 1, "the retried POST reused its token, so Zotero applied it once")
	require.Contains(t, lib.items, key, "the key was recovered from the library")
}

func TestA412EndsInAMergedSuccessfulWrite(t *testing.T) {
	clock := newFakeClock()
	lib := &library{version: 20, items: map[string]map[string]any{
		"ABCD2345": {"key": "ABCD2345", "version": float64(20), "itemType": "journalArticle",
			"title": "A title", "tags": []any{map[string]any{"tag": "theirs"}}, "extra": ""},
	}, tokens: map[string]bool{}}
	_, c := newServer(t, clock, lib.handle)
	stale := Item{Key: "ABCD2345", Version: 19, Data: map[string]any{"tags": []any{}}}
	v, err := c.Merge(context.Background(), User(1), stale, func(cur Item) map[string]any {
		tags := append(append([]any{}, cur.Data["tags"].([]any)...), map[string]any{"tag": "lectern"})
		return map[string]any{"tags": tags}
	})
	require.NoError(t, err)
	require.EqualValues(t, 21, v)
	lib.mu.Lock()
	defer lib.mu.Unlock()
	require.Equal(t, []any{map[string]any{"tag": "theirs"}, map[string]any{"tag": "lectern"}}, lib.items["ABCD2345"]["tags"],
		"the write kept the tag someone else added and added ours")
}

func TestAWriteWithAUsedTokenIsNotReportedAsSuccess(t *testing.T) {
	clock := newFakeClock()
	lib := &library{version: 1, items: map[string]map[string]any{}, tokens: map[string]bool{"aaaa": true}}
	_, c := newServer(t, clock, lib.handle)
	_, err := c.Create(context.Background(), User(1), []map[string]any{{"itemType": "book", "title": "x"}}, "aaaa")
	require.True(t, errors.Is(err, ErrTokenUsed))
}
