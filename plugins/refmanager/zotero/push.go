package main

import (
	"context"
	"slices"
	"strings"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// maxPush bounds the items of one Push call.
const maxPush = 200

// Push files papers into a collection (created when missing): an item pushed
// before (Key) or already holding the paper's DOI is filed there with a merged
// write; any other is created once, marked in Extra. Each item's failure is its
// own result.
func (z *Zotero) Push(ctx context.Context, req *refmanager.PushRequest) (*refmanager.PushResponse, error) {
	lib, err := library(req.LibraryID)
	if err != nil {
		return nil, err
	}
	if len(req.Items) > maxPush {
		return nil, protocol.BadRequest("%d items in one push, at most %d", len(req.Items), maxPush)
	}
	for _, it := range req.Items {
		if !strings.HasPrefix(it.Marker, refmanager.MarkerPrefix) {
			return nil, protocol.BadRequest("marker %q does not start with %q", it.Marker, refmanager.MarkerPrefix)
		}
	}
	c, err := z.client(req.Credentials)
	if err != nil {
		return nil, err
	}
	resp := &refmanager.PushResponse{}
	if req.Collection != "" {
		if resp.CollectionKey, err = collection(ctx, c, lib, req.Collection); err != nil {
			return nil, typed(err)
		}
	}
	for _, it := range req.Items {
		resp.Results = append(resp.Results, pushOne(ctx, c, lib, req.SinceVersion, resp.CollectionKey, it))
	}
	v, err := c.Changed(ctx, lib, "collections", 0)
	if err == nil {
		resp.LibraryVersion = v.LibraryVersion
	}
	return resp, nil
}

// collection returns the key of the top-level collection named name, making it
// when there is none.
func collection(ctx context.Context, c *webapi.Client, lib webapi.Library, name string) (string, error) {
	all, err := c.AllCollections(ctx, lib)
	if err != nil {
		return "", err
	}
	for _, col := range all {
		if col.Parent == "" && col.Name == name {
			return col.Key, nil
		}
	}
	return c.CreateCollection(ctx, lib, name)
}

func pushOne(ctx context.Context, c *webapi.Client, lib webapi.Library, since int64, coll string, it refmanager.PushItem) refmanager.PushResult {
	res := refmanager.PushResult{Marker: it.Marker}
	fail := func(err error) refmanager.PushResult {
		res.Outcome, res.Error = refmanager.PushFailed, typed(err).Error()
		return res
	}
	existing, err := find(ctx, c, lib, it)
	if err != nil {
		return fail(err)
	}
	if existing == nil {
		key, err := c.CreateOnce(ctx, lib, since, fromPaper(it.Paper, it.Marker, coll), it.Marker)
		if err != nil {
			return fail(err)
		}
		res.Key, res.Outcome = key, refmanager.PushCreated
		return res
	}
	res.Key = existing.Key
	if coll == "" || slices.Contains(existing.Collections, coll) {
		res.Outcome = refmanager.PushUnchanged
		return res
	}
	_, err = c.Merge(ctx, lib, *existing, func(cur webapi.Item) map[string]any {
		cols := slices.Clone(cur.Collections)
		if !slices.Contains(cols, coll) {
			cols = append(cols, coll)
		}
		return map[string]any{"collections": cols}
	})
	if err != nil {
		return fail(err)
	}
	res.Outcome = refmanager.PushLinked
	return res
}

// find returns the item the paper already has in the library: the one pushed
// before, else one with the paper's DOI, else nil.
func find(ctx context.Context, c *webapi.Client, lib webapi.Library, it refmanager.PushItem) (*webapi.Item, error) {
	if it.Key != "" {
		got, err := c.Item(ctx, lib, it.Key)
		if err == nil && !got.Trashed {
			return &got, nil
		}
		if err != nil && !isNotFound(err) {
			return nil, err
		}
	}
	doi := it.Paper.IDs.DOI
	if doi == "" {
		return nil, nil
	}
	hits, err := c.Search(ctx, lib, doi)
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if !h.Trashed && strings.EqualFold(h.DOI, doi) {
			return &h, nil
		}
	}
	return nil, nil
}
