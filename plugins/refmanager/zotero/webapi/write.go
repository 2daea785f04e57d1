package webapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// WriteToken returns a new Zotero-Write-Token: 32 random hex characters. Zotero
// keeps a successful request's token for 12 hours and refuses a repeat of it with
// 412, so a POST retried after its answer was lost never creates twice.
func WriteToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// WriteResult is Zotero's per-object outcome of a multi-object write, by the
// object's index in the request.
type WriteResult struct {
	// Created maps an index to the key of the object written (successful).
	Created map[int]string
	// Unchanged maps an index to the key of an object that needed no change.
	Unchanged map[int]string
	// Failed maps an index to Zotero's reason.
	Failed map[int]string
	// LibraryVersion is the library's version after the write.
	LibraryVersion int64
}

// Create writes new items (at most BatchSize) with the write token. A token Zotero
// has seen already comes back as ErrTokenUsed: the first request went through and
// only its answer was lost, so the caller looks the items up (Find) rather than
// writing them again.
func (c *Client) Create(ctx context.Context, lib Library, items []map[string]any, token string) (WriteResult, error) {
	if len(items) == 0 || len(items) > BatchSize {
		return WriteResult{}, fmt.Errorf("webapi: %d items in one write, want 1 to %d", len(items), BatchSize)
	}
	body, err := json.Marshal(items)
	if err != nil {
		return WriteResult{}, fmt.Errorf("webapi: encode the items: %w", err)
	}
	r, err := c.do(ctx, request{method: http.MethodPost, path: lib.prefix() + "/items", body: body,
		header: http.Header{"Zotero-Write-Token": {token}}})
	if errors.Is(err, ErrPrecondition) {
		return WriteResult{}, ErrTokenUsed
	}
	if err != nil {
		return WriteResult{}, err
	}
	return decodeWrite(r)
}

// ErrTokenUsed is Create's 412: Zotero has applied a request with this token.
var ErrTokenUsed = errors.New("zotero has already applied a write with this token")

func decodeWrite(r *response) (WriteResult, error) {
	var raw struct {
		Successful map[string]json.RawMessage `json:"successful"`
		Success    map[string]string          `json:"success"`
		Unchanged  map[string]string          `json:"unchanged"`
		Failed     map[string]struct {
			Key     string `json:"key"`
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"failed"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil {
		return WriteResult{}, malformed("the write result", err)
	}
	out := WriteResult{Created: map[int]string{}, Unchanged: map[int]string{}, Failed: map[int]string{},
		LibraryVersion: r.version()}
	for i, key := range raw.Success {
		if n, err := strconv.Atoi(i); err == nil {
			out.Created[n] = key
		}
	}
	for i, obj := range raw.Successful { // older servers sent only "successful"
		var k struct {
			Key string `json:"key"`
		}
		if n, err := strconv.Atoi(i); err == nil && json.Unmarshal(obj, &k) == nil && out.Created[n] == "" {
			out.Created[n] = k.Key
		}
	}
	for i, key := range raw.Unchanged {
		if n, err := strconv.Atoi(i); err == nil {
			out.Unchanged[n] = key
		}
	}
	for i, f := range raw.Failed {
		if n, err := strconv.Atoi(i); err == nil {
			out.Failed[n] = fmt.Sprintf("%s (code %d)", f.Message, f.Code)
		}
	}
	return out, nil
}

// Update patches one item's fields, provided Zotero's copy is still at version.
// A newer copy comes back as ErrPrecondition; see Merge.
func (c *Client) Update(ctx context.Context, lib Library, key string, version int64, fields map[string]any) (int64, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return 0, fmt.Errorf("webapi: encode the change: %w", err)
	}
	r, err := c.do(ctx, request{method: http.MethodPatch, path: lib.prefix() + "/items/" + url.PathEscape(key), body: body,
		header: http.Header{"If-Unmodified-Since-Version": {strconv.FormatInt(version, 10)}}})
	if err != nil {
		return 0, err
	}
	return r.version(), nil
}

// Item fetches one item.
func (c *Client) Item(ctx context.Context, lib Library, key string) (Item, error) {
	r, err := c.do(ctx, request{method: http.MethodGet, path: lib.prefix() + "/items/" + url.PathEscape(key)})
	if err != nil {
		return Item{}, err
	}
	var raw itemObject
	if err := json.Unmarshal(r.body, &raw); err != nil {
		return Item{}, malformed("item "+key, err)
	}
	return raw.decode()
}

// mergeAttempts bounds Merge's rounds against a library that keeps changing.
const mergeAttempts = 4

// Merge writes change(current) to the item: it patches against the version it
// knows and, when Zotero's copy moved on (412), reads the item again, lets change
// merge into the newer copy, and retries. change returns the fields to write; it
// must keep what someone else changed (it sees their copy).
func (c *Client) Merge(ctx context.Context, lib Library, current Item, change func(Item) map[string]any) (int64, error) {
	for range mergeAttempts {
		v, err := c.Update(ctx, lib, current.Key, current.Version, change(current))
		if !errors.Is(err, ErrPrecondition) {
			return v, err
		}
		if current, err = c.Item(ctx, lib, current.Key); err != nil {
			return 0, err
		}
	}
	return 0, &Error{Kind: ErrPrecondition, Message: fmt.Sprintf("item %s kept changing while we wrote it; try again later", current.Key)}
}

// Find returns the items changed after version since whose Extra holds marker: how
// a caller recovers the keys of a Create whose answer was lost (ErrTokenUsed).
func (c *Client) Find(ctx context.Context, lib Library, since int64, marker string) ([]Item, error) {
	v, err := c.Changed(ctx, lib, "items", since)
	if err != nil {
		return nil, err
	}
	items, err := c.Items(ctx, lib, slices.Sorted(maps.Keys(v.Keys)))
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, it := range items {
		if strings.Contains(it.Extra, marker) {
			out = append(out, it)
		}
	}
	return out, nil
}

// CreateOnce creates one item whose Extra carries marker, exactly once, however
// the exchange fails: a retried POST reuses the write token (Zotero refuses the
// repeat), and when the outcome is unknown — the token was used, or every attempt
// lost its answer — it looks for the marker among the items changed after since
// (the library version the caller last synced) before reporting a failure, so a
// later retry with a new token does not create a second copy.
func (c *Client) CreateOnce(ctx context.Context, lib Library, since int64, item map[string]any, marker string) (string, error) {
	res, err := c.Create(ctx, lib, []map[string]any{item}, WriteToken())
	if err == nil {
		if key := res.Created[0]; key != "" {
			return key, nil
		}
		if key := res.Unchanged[0]; key != "" {
			return key, nil
		}
		return "", &Error{Kind: ErrRejected, Message: res.Failed[0]}
	}
	if !errors.Is(err, ErrTokenUsed) && !errors.Is(err, ErrUnavailable) {
		return "", err
	}
	found, ferr := c.Find(ctx, lib, since, marker)
	if ferr != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].Key, nil
	}
	return "", err
}

// CreateCollection makes a top-level collection and returns its key.
func (c *Client) CreateCollection(ctx context.Context, lib Library, name string) (string, error) {
	body, err := json.Marshal([]map[string]any{{"name": name}})
	if err != nil {
		return "", fmt.Errorf("webapi: encode the collection: %w", err)
	}
	r, err := c.do(ctx, request{method: http.MethodPost, path: lib.prefix() + "/collections", body: body,
		header: http.Header{"Zotero-Write-Token": {WriteToken()}}})
	if errors.Is(err, ErrPrecondition) {
		return "", ErrTokenUsed
	}
	if err != nil {
		return "", err
	}
	res, err := decodeWrite(r)
	if err != nil {
		return "", err
	}
	if key := res.Created[0]; key != "" {
		return key, nil
	}
	return "", &Error{Kind: ErrRejected, Message: res.Failed[0]}
}
