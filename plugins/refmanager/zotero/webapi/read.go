package webapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Library is a user's own library or a group library.
type Library struct {
	// Type is "user" or "group".
	Type string
	ID   int64
}

// User is a user's own library; Group a group's.
func User(id int64) Library  { return Library{Type: "user", ID: id} }
func Group(id int64) Library { return Library{Type: "group", ID: id} }

// prefix is the library's path: /users/1 or /groups/2.
func (l Library) prefix() string { return "/" + l.Type + "s/" + strconv.FormatInt(l.ID, 10) }

func (l Library) String() string { return l.Type + " library " + strconv.FormatInt(l.ID, 10) }

// BatchSize is how many objects one request fetches or writes (the API's maximum).
const BatchSize = 50

// Access is what a key may do in one library.
type Access struct {
	Library bool `json:"library"`
	Notes   bool `json:"notes"`
	Write   bool `json:"write"`
}

// Key is what /keys/current says about the client's key.
type Key struct {
	UserID   int64  `json:"userID"`
	Username string `json:"username"`
	Access   struct {
		User Access `json:"user"`
		// Groups maps a group id, or "all", to the key's access there.
		Groups map[string]Access `json:"groups"`
	} `json:"access"`
}

// CurrentKey checks the key and returns its owner and permissions.
func (c *Client) CurrentKey(ctx context.Context) (Key, error) {
	r, err := c.do(ctx, request{method: http.MethodGet, path: "/keys/current"})
	if err != nil {
		return Key{}, err
	}
	var k Key
	if err := json.Unmarshal(r.body, &k); err != nil {
		return Key{}, malformed("the key's description", err)
	}
	return k, nil
}

// GroupInfo is one group the user belongs to.
type GroupInfo struct {
	ID      int64
	Name    string
	Version int64
}

// Groups lists the groups of user userID the key can see.
func (c *Client) Groups(ctx context.Context, userID int64) ([]GroupInfo, error) {
	r, err := c.do(ctx, request{method: http.MethodGet, path: User(userID).prefix() + "/groups",
		query: url.Values{"limit": {"100"}}})
	if err != nil {
		return nil, err
	}
	var raw []struct {
		ID      int64 `json:"id"`
		Version int64 `json:"version"`
		Data    struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil {
		return nil, malformed("the group list", err)
	}
	out := make([]GroupInfo, len(raw))
	for i, g := range raw {
		out[i] = GroupInfo{ID: g.ID, Name: g.Data.Name, Version: g.Version}
	}
	return out, nil
}

// Versions is what changed in a library since a version.
type Versions struct {
	// Keys maps each changed object's key to its version.
	Keys map[string]int64
	// LibraryVersion is the version the listing is consistent with.
	LibraryVersion int64
	// Unchanged is true when nothing changed (HTTP 304): Keys is empty.
	Unchanged bool
}

// Changed returns the keys of the objects (kind "items" or "collections") changed
// after version since, trashed items included, with If-Modified-Since-Version so
// an unchanged library costs one 304.
func (c *Client) Changed(ctx context.Context, lib Library, kind string, since int64) (Versions, error) {
	if kind != "items" && kind != "collections" {
		return Versions{}, fmt.Errorf("webapi: no such object kind %q", kind)
	}
	q := url.Values{"format": {"versions"}, "since": {strconv.FormatInt(since, 10)}}
	if kind == "items" {
		q.Set("includeTrashed", "1")
	}
	r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/" + kind, query: q,
		header: http.Header{"If-Modified-Since-Version": {strconv.FormatInt(since, 10)}}})
	if err != nil {
		return Versions{}, err
	}
	if r.status == http.StatusNotModified {
		return Versions{Keys: map[string]int64{}, LibraryVersion: since, Unchanged: true}, nil
	}
	v := Versions{Keys: map[string]int64{}, LibraryVersion: r.version()}
	if err := json.Unmarshal(r.body, &v.Keys); err != nil {
		return Versions{}, malformed("the version list", err)
	}
	return v, nil
}

// Deleted is what was removed from a library since a version.
type Deleted struct {
	Items       []string `json:"items"`
	Collections []string `json:"collections"`
	// LibraryVersion is the version the listing is consistent with.
	LibraryVersion int64 `json:"-"`
}

// DeletedSince lists the keys of items and collections deleted after version since.
func (c *Client) DeletedSince(ctx context.Context, lib Library, since int64) (Deleted, error) {
	r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/deleted",
		query: url.Values{"since": {strconv.FormatInt(since, 10)}}})
	if err != nil {
		return Deleted{}, err
	}
	var d Deleted
	if err := json.Unmarshal(r.body, &d); err != nil {
		return Deleted{}, malformed("the deletion list", err)
	}
	d.LibraryVersion = r.version()
	return d, nil
}

// Items fetches the items of keys, BatchSize per request, up to four requests at
// once (keys Zotero no longer has are left out), trashed ones included.
func (c *Client) Items(ctx context.Context, lib Library, keys []string) ([]Item, error) {
	return fetch(ctx, c, lib, "items", keys, func(b []byte) ([]Item, error) { return decodeItems(b) })
}

// Collections fetches the collections of keys like Items.
func (c *Client) Collections(ctx context.Context, lib Library, keys []string) ([]Collection, error) {
	return fetch(ctx, c, lib, "collections", keys, func(b []byte) ([]Collection, error) {
		var raw []struct {
			Key     string `json:"key"`
			Version int64  `json:"version"`
			Data    struct {
				Name             string `json:"name"`
				ParentCollection any    `json:"parentCollection"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, malformed("the collections", err)
		}
		out := make([]Collection, len(raw))
		for i, r := range raw {
			parent, _ := r.Data.ParentCollection.(string) // false when top level
			out[i] = Collection{Key: r.Key, Version: r.Version, Name: r.Data.Name, Parent: parent}
		}
		return out, nil
	})
}

// Children lists an item's child items: attachments and notes, or an
// attachment's annotations.
func (c *Client) Children(ctx context.Context, lib Library, itemKey string) ([]Item, error) {
	var out []Item
	for start := 0; ; start += 100 {
		r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/items/" + url.PathEscape(itemKey) + "/children",
			query: url.Values{"limit": {"100"}, "start": {strconv.Itoa(start)}}})
		if err != nil {
			return nil, err
		}
		page, err := decodeItems(r.body)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		total, err := strconv.Atoi(r.header.Get("Total-Results"))
		if err != nil || len(page) == 0 || start+len(page) >= total {
			return out, nil
		}
	}
}

// fetch gets the objects of keys in batches, concurrently, batch by batch.
func fetch[T any](ctx context.Context, c *Client, lib Library, kind string, keys []string, decode func([]byte) ([]T, error)) ([]T, error) {
	batches := slices.Collect(slices.Chunk(keys, BatchSize))
	results := make([][]T, len(batches))
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, batch := range batches {
		wg.Go(func() {
			q := url.Values{"itemKey": {strings.Join(batch, ",")}, "limit": {strconv.Itoa(BatchSize)}}
			if kind == "collections" {
				q = url.Values{"collectionKey": {strings.Join(batch, ",")}, "limit": {strconv.Itoa(BatchSize)}}
			} else {
				q.Set("includeTrashed", "1")
			}
			r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/" + kind, query: q})
			if err == nil {
				results[i], err = decode(r.body)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var out []T
	for i := range batches {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, results[i]...)
	}
	return out, nil
}

func malformed(what string, err error) error {
	return &Error{Kind: ErrUnavailable, Message: fmt.Sprintf("%s did not read as Zotero's JSON (%v)", what, err)}
}

// AllCollections lists every collection of a library.
func (c *Client) AllCollections(ctx context.Context, lib Library) ([]Collection, error) {
	v, err := c.Changed(ctx, lib, "collections", 0)
	if err != nil {
		return nil, err
	}
	return c.Collections(ctx, lib, slices.Sorted(maps.Keys(v.Keys)))
}

// Search lists up to 25 top-level items matching q in any field (qmode
// everything): how a push finds an item already holding a DOI.
func (c *Client) Search(ctx context.Context, lib Library, q string) ([]Item, error) {
	r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/items/top",
		query: url.Values{"q": {q}, "qmode": {"everything"}, "limit": {"25"}}})
	if err != nil {
		return nil, err
	}
	return decodeItems(r.body)
}
