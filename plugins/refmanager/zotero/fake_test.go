package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/plugintest"
)

const testKey = "P9NiFoyLeZu2bZNvvuQPDWsd"

// zoteroLib is an in-memory Zotero user library (user 1) behind the Web API's
// paths, enough of it for the plugin: versions, items and children, the trash,
// /deleted, collections, searches and writes with tokens and preconditions.
type zoteroLib struct {
	t       *testing.T
	mu      sync.Mutex
	version int64
	objects map[string]map[string]any // items by key: the editable JSON
	meta    map[string]map[string]any
	colls   map[string]map[string]any
	deleted map[string]int64 // removed item keys and the version they went at
	tokens  map[string]bool
	posts   int
	srv     *httptest.Server
}

func newZoteroLib(t *testing.T) *zoteroLib {
	z := &zoteroLib{t: t, objects: map[string]map[string]any{}, meta: map[string]map[string]any{},
		colls: map[string]map[string]any{}, deleted: map[string]int64{}, tokens: map[string]bool{}}
	z.srv = httptest.NewServer(http.HandlerFunc(z.serve))
	t.Cleanup(z.srv.Close)
	return z
}

// load adds the objects of a recorded response, each at a new library version.
func (z *zoteroLib) load(name string) {
	var objs []struct {
		Key  string         `json:"key"`
		Meta map[string]any `json:"meta"`
		Data map[string]any `json:"data"`
	}
	require.NoError(z.t, json.Unmarshal(plugintest.ReadFixture(z.t, plugintest.FixturesDir(z.t, "zotero"), name), &objs))
	for _, o := range objs {
		z.put(o.Key, o.Data, o.Meta)
	}
}

// put stores an item at the next library version.
func (z *zoteroLib) put(key string, data, meta map[string]any) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.version++
	data["key"], data["version"] = key, float64(z.version)
	z.objects[key] = data
	z.meta[key] = meta
	delete(z.deleted, key)
}

// remove deletes an item for good.
func (z *zoteroLib) remove(key string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.version++
	delete(z.objects, key)
	z.deleted[key] = z.version
}

func (z *zoteroLib) object(key string) map[string]any {
	return map[string]any{"key": key, "version": z.objects[key]["version"], "meta": z.meta[key], "data": z.objects[key]}
}

func (z *zoteroLib) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Zotero-API-Key") != testKey {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	q := r.URL.Query()
	since, _ := strconv.ParseInt(q.Get("since"), 10, 64)
	w.Header().Set("Last-Modified-Version", strconv.FormatInt(z.version, 10))
	send := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	path := r.URL.Path
	switch {
	case path == "/keys/current":
		send(map[string]any{"key": testKey, "userID": 1, "username": "testuser",
			"access": map[string]any{"user": map[string]any{"library": true, "notes": true, "write": true},
				"groups": map[string]any{"all": map[string]any{"library": true, "write": false}}}})
	case path == "/users/1/groups":
		_, _ = w.Write(plugintest.ReadFixture(z.t, plugintest.FixturesDir(z.t, "zotero"), "webapi_user_groups_min.json"))
	case r.Method == http.MethodGet && path == "/users/1/items" && q.Get("format") == "versions":
		if v, err := strconv.ParseInt(r.Header.Get("If-Modified-Since-Version"), 10, 64); err == nil && v >= z.version {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		out := map[string]int64{}
		for k, o := range z.objects {
			if v := int64(o["version"].(float64)); v > since {
				out[k] = v
			}
		}
		send(out)
	case r.Method == http.MethodGet && path == "/users/1/items":
		var out []any
		for k := range strings.SplitSeq(q.Get("itemKey"), ",") {
			if _, ok := z.objects[k]; ok {
				out = append(out, z.object(k))
			}
		}
		send(out)
	case r.Method == http.MethodGet && path == "/users/1/items/top":
		var out []any
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range z.objects {
				if !yield(k) {
					return
				}
			}
		}) {
			o := z.objects[k]
			if o["parentItem"] == nil && strings.Contains(strings.ToLower(fmt.Sprint(o)), strings.ToLower(q.Get("q"))) {
				out = append(out, z.object(k))
			}
		}
		send(out)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/children"):
		parent := strings.TrimSuffix(strings.TrimPrefix(path, "/users/1/items/"), "/children")
		var out []any
		for k, o := range z.objects {
			if o["parentItem"] == parent && o["deleted"] == nil {
				out = append(out, z.object(k))
			}
		}
		w.Header().Set("Total-Results", strconv.Itoa(len(out)))
		send(out)
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/users/1/items/"):
		k := strings.TrimPrefix(path, "/users/1/items/")
		if _, ok := z.objects[k]; !ok {
			http.Error(w, "Not found", http.StatusNotFound)
			return
		}
		send(z.object(k))
	case path == "/users/1/deleted":
		var items []string
		for k, v := range z.deleted {
			if v > since {
				items = append(items, k)
			}
		}
		slices.Sort(items)
		send(map[string]any{"items": items, "collections": []string{}, "searches": []string{}, "tags": []string{}, "settings": []string{}})
	case r.Method == http.MethodGet && path == "/users/1/collections" && q.Get("format") == "versions":
		out := map[string]int64{}
		for k, c := range z.colls {
			out[k] = int64(c["version"].(float64))
		}
		send(out)
	case r.Method == http.MethodGet && path == "/users/1/collections":
		var out []any
		for k := range strings.SplitSeq(q.Get("collectionKey"), ",") {
			if c, ok := z.colls[k]; ok {
				out = append(out, map[string]any{"key": k, "version": c["version"], "data": c})
			}
		}
		send(out)
	case r.Method == http.MethodPost:
		z.write(w, r, path)
	case r.Method == http.MethodPatch && strings.HasPrefix(path, "/users/1/items/"):
		k := strings.TrimPrefix(path, "/users/1/items/")
		o, ok := z.objects[k]
		if !ok {
			http.Error(w, "Not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("If-Unmodified-Since-Version") != strconv.FormatInt(int64(o["version"].(float64)), 10) {
			http.Error(w, "Item has been modified since specified version", http.StatusPreconditionFailed)
			return
		}
		var change map[string]any
		_ = json.NewDecoder(r.Body).Decode(&change)
		z.version++
		for k, v := range change {
			o[k] = v
		}
		o["version"] = float64(z.version)
		w.Header().Set("Last-Modified-Version", strconv.FormatInt(z.version, 10))
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
	}
}

func (z *zoteroLib) write(w http.ResponseWriter, r *http.Request, path string) {
	token := r.Header.Get("Zotero-Write-Token")
	if z.tokens[token] {
		http.Error(w, "Write token already used", http.StatusPreconditionFailed)
		return
	}
	var in []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, "Invalid JSON", http.StatusBadRequest)
		return
	}
	z.tokens[token] = true
	z.posts++
	z.version++
	success := map[string]string{}
	for i, o := range in {
		key := fmt.Sprintf("NEW%05d", len(z.objects)+len(z.colls))
		o["key"], o["version"] = key, float64(z.version)
		if path == "/users/1/collections" {
			z.colls[key] = o
		} else {
			z.objects[key] = o
		}
		success[strconv.Itoa(i)] = key
	}
	w.Header().Set("Last-Modified-Version", strconv.FormatInt(z.version, 10))
	_ = json.NewEncoder(w).Encode(map[string]any{"success": success, "unchanged": map[string]string{}, "failed": map[string]any{}})
}
