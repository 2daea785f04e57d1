package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// defaultPageSize is how many changed objects a page covers when the caller does
// not say (the API's batch size).
const defaultPageSize = webapi.BatchSize

// cursor is where a listing stands: the library version it is consistent with
// (target) and the version of the last object delivered (done).
type cursor struct{ target, done int64 }

func (c cursor) String() string { return fmt.Sprintf("%d:%d", c.target, c.done) }

func parseCursor(s string) (cursor, error) {
	a, b, ok := strings.Cut(s, ":")
	t, err1 := strconv.ParseInt(a, 10, 64)
	d, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || t < 0 || d < 0 || d > t {
		return cursor{}, protocol.BadRequest("cursor %q was not made by this plugin", s)
	}
	return cursor{target: t, done: d}, nil
}

// ItemsSince lists the records changed after req.SinceVersion in ascending
// version, a page at a time, each page ending at a version boundary. A changed
// child (note, attachment, annotation) stands for its record; records in the
// trash come as Deleted; items Lectern pushed (Extra holds the marker) and
// standalone notes are left out; removed items come on the first page, so a
// caller resuming from a page's Through has seen them.
func (z *Zotero) ItemsSince(ctx context.Context, req *refmanager.ItemsSinceRequest) (*refmanager.ItemsSinceResponse, error) {
	lib, err := library(req.LibraryID)
	if err != nil {
		return nil, err
	}
	cur := cursor{done: req.SinceVersion}
	if req.Cursor != "" {
		if cur, err = parseCursor(req.Cursor); err != nil {
			return nil, err
		}
	}
	size := req.PageSize
	if size <= 0 {
		size = defaultPageSize
	}
	c, err := z.client(req.Credentials)
	if err != nil {
		return nil, err
	}
	changed, err := c.Changed(ctx, lib, "items", cur.done)
	if err != nil {
		return nil, typed(err)
	}
	if changed.Unchanged {
		v := cmp.Or(cur.target, cur.done)
		return &refmanager.ItemsSinceResponse{Items: []refmanager.Item{}, LibraryVersion: v, Through: v}, nil
	}
	first := cur.target == 0
	if cur.target == 0 {
		cur.target = changed.LibraryVersion
	}
	page, last := pageOf(changed.Keys, cur, size)
	items, err := c.Items(ctx, lib, keysOf(page))
	if err != nil {
		return nil, typed(err)
	}
	out, err := z.records(ctx, c, lib, items)
	if err != nil {
		return nil, err
	}
	resp := &refmanager.ItemsSinceResponse{LibraryVersion: cur.target, Through: cur.target}
	if first {
		deleted, err := c.DeletedSince(ctx, lib, req.SinceVersion)
		if err != nil {
			return nil, typed(err)
		}
		for _, key := range deleted.Items {
			resp.Items = append(resp.Items, refmanager.Item{Key: key, Deleted: true})
		}
	}
	resp.Items = append(resp.Items, out...)
	if !last {
		resp.Through = page[len(page)-1].version
		resp.NextCursor = cursor{target: cur.target, done: resp.Through}.String()
	}
	return resp, nil
}

type keyVersion struct {
	key     string
	version int64
}

// pageOf returns the next objects after cur.done up to cur.target, in version
// order, at least size of them unless fewer are left, never splitting a version;
// last is true when nothing is left after them.
func pageOf(keys map[string]int64, cur cursor, size int) (page []keyVersion, last bool) {
	var all []keyVersion
	for k, v := range keys {
		if v > cur.done && v <= cur.target {
			all = append(all, keyVersion{k, v})
		}
	}
	slices.SortFunc(all, func(a, b keyVersion) int {
		return cmp.Or(cmp.Compare(a.version, b.version), strings.Compare(a.key, b.key))
	})
	n := min(size, len(all))
	for n < len(all) && n > 0 && all[n].version == all[n-1].version {
		n++
	}
	return all[:n], n == len(all)
}

func keysOf(kv []keyVersion) []string {
	out := make([]string, len(kv))
	for i, x := range kv {
		out[i] = x.key
	}
	return out
}

// records turns changed items into the records they are or belong to, each once,
// in the order met.
func (z *Zotero) records(ctx context.Context, c *webapi.Client, lib webapi.Library, items []webapi.Item) ([]refmanager.Item, error) {
	byKey := map[string]webapi.Item{}
	var order []string
	add := func(it webapi.Item) {
		if _, ok := byKey[it.Key]; !ok {
			order = append(order, it.Key)
		}
		byKey[it.Key] = it
	}
	var parents []string
	for _, it := range items {
		switch {
		case record(it):
			add(it)
		case it.ParentItem != "":
			parents = append(parents, it.ParentItem)
		}
	}
	// A child's parent may itself be a child (an annotation's attachment): two rounds.
	for range 2 {
		parents = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(parents))), func(k string) bool {
			_, ok := byKey[k]
			return ok
		})
		if len(parents) == 0 {
			break
		}
		got, err := c.Items(ctx, lib, parents)
		if err != nil {
			return nil, typed(err)
		}
		parents = nil
		for _, it := range got {
			switch {
			case record(it):
				add(it)
			case it.ParentItem != "":
				parents = append(parents, it.ParentItem)
			}
		}
	}
	out := make([]refmanager.Item, 0, len(order))
	for _, k := range order {
		it := byKey[k]
		if strings.Contains(it.Extra, refmanager.MarkerPrefix) {
			continue
		}
		if it.Trashed {
			out = append(out, refmanager.Item{Key: it.Key, Version: it.Version, Deleted: true})
			continue
		}
		out = append(out, refmanager.Item{Key: it.Key, Version: it.Version, Paper: toPaper(lib, it),
			Collections: it.Collections, Tags: it.Tags})
	}
	return out, nil
}
