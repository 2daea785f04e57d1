package main

import (
	"context"
	"errors"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// Notes lists a record's child notes and the annotations on its PDF attachments.
func (z *Zotero) Notes(ctx context.Context, req *refmanager.NotesRequest) (*refmanager.NotesResponse, error) {
	lib, err := library(req.LibraryID)
	if err != nil {
		return nil, err
	}
	if req.ItemKey == "" {
		return nil, protocol.BadRequest("no item key")
	}
	c, err := z.client(req.Credentials)
	if err != nil {
		return nil, err
	}
	children, err := c.Children(ctx, lib, req.ItemKey)
	if err != nil {
		return nil, typed(err)
	}
	out := &refmanager.NotesResponse{Notes: []refmanager.Note{}}
	for _, ch := range children {
		switch {
		case ch.Trashed:
		case ch.ItemType == "note":
			out.Notes = append(out.Notes, refmanager.Note{Key: ch.Key, ParentItemKey: req.ItemKey, HTML: ch.Note, Version: ch.Version})
		case ch.ItemType == "attachment" && ch.ContentType == "application/pdf":
			anns, err := c.Children(ctx, lib, ch.Key)
			if err != nil {
				return nil, typed(err)
			}
			for _, a := range anns {
				if a.ItemType != "annotation" || a.Trashed {
					continue
				}
				out.Notes = append(out.Notes, refmanager.Note{Key: a.Key, ParentItemKey: req.ItemKey, HTML: a.AnnotationComment,
					Version: a.Version, Annotation: &refmanager.Annotation{Type: a.AnnotationType, Text: a.AnnotationText,
						PageLabel: a.AnnotationPageLabel}})
			}
		}
	}
	return out, nil
}

// WriteNote creates a child note (empty Key, with a write token) or updates one
// at its version (a stale version is a BadRequest: read the notes again).
func (z *Zotero) WriteNote(ctx context.Context, req *refmanager.WriteNoteRequest) (*refmanager.WriteNoteResponse, error) {
	lib, err := library(req.LibraryID)
	if err != nil {
		return nil, err
	}
	n := req.Note
	if n.Annotation != nil {
		return nil, protocol.Unsupported("writing annotations is not supported; write a note")
	}
	if n.Key == "" && n.ParentItemKey == "" {
		return nil, protocol.BadRequest("a new note needs the item it belongs to")
	}
	c, err := z.client(req.Credentials)
	if err != nil {
		return nil, err
	}
	if n.Key == "" {
		res, err := c.Create(ctx, lib, []map[string]any{{"itemType": "note", "parentItem": n.ParentItemKey, "note": n.HTML,
			"tags": []any{}, "collections": []any{}, "relations": map[string]any{}}}, webapi.WriteToken())
		if err != nil {
			return nil, typed(err)
		}
		key := res.Created[0]
		if key == "" {
			return nil, protocol.BadRequest("zotero refused the note: %s", res.Failed[0])
		}
		n.Key, n.Version = key, res.LibraryVersion
		return &refmanager.WriteNoteResponse{Note: n}, nil
	}
	v, err := c.Update(ctx, lib, n.Key, n.Version, map[string]any{"note": n.HTML})
	if errors.Is(err, webapi.ErrPrecondition) {
		return nil, protocol.BadRequest("note %s changed in Zotero since version %d: read it again and merge", n.Key, n.Version)
	}
	if err != nil {
		return nil, typed(err)
	}
	n.Version = v
	return &refmanager.WriteNoteResponse{Note: n}, nil
}
