// Package refmanager is the reference-manager plugin kind (Zotero and the like): the
// Manager interface an author implements, its request and response types, and the
// gRPC glue.
//
// The user's API key arrives in each request's Credentials map, decrypted by the host
// for that call only; never read it from the environment or a file, never log it.
//
// This package follows semantic versioning with the sdk module.
package refmanager

import (
	"context"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Manager is a reference manager. Every method must return when ctx is done (with
// ctx.Err()) and fail with the typed errors of package protocol.
type Manager interface {
	protocol.Plugin

	// Libraries lists the user's own library and the group libraries they can read.
	Libraries(ctx context.Context, req *LibrariesRequest) (*LibrariesResponse, error)
	// ItemsSince lists the items of a library changed after req.SinceVersion,
	// deleted ones included (Deleted set), one page at a time.
	ItemsSince(ctx context.Context, req *ItemsSinceRequest) (*ItemsSinceResponse, error)
	// Notes lists the notes attached to one item.
	Notes(ctx context.Context, req *NotesRequest) (*NotesResponse, error)
	// WriteNote creates a note (empty Key) or updates one, returning it as stored.
	WriteNote(ctx context.Context, req *WriteNoteRequest) (*WriteNoteResponse, error)
	// Push files papers into a collection, creating each item at most once: an
	// item already there (by DOI or marker) is linked, and a retried or repeated
	// push never makes a second copy. One failing item fails only its result.
	Push(ctx context.Context, req *PushRequest) (*PushResponse, error)
}

// LibraryType says whose a library is.
type LibraryType int

// Library types.
const (
	// LibraryUnknown is not a valid answer; it is the zero value.
	LibraryUnknown LibraryType = iota
	// LibraryUser is the user's own library.
	LibraryUser
	// LibraryGroup is a shared group library.
	LibraryGroup
)

// Library is one library.
type Library struct {
	// ID is the library id the other calls take.
	ID string
	// Name is for people.
	Name string
	// Type is LibraryUser or LibraryGroup.
	Type LibraryType
	// Version is the library's current version.
	Version int64
	// Writable is true when notes can be written.
	Writable bool
}

// LibrariesRequest lists libraries.
type LibrariesRequest struct {
	// Credentials for the reference manager, per call.
	Credentials map[string]string
}

// LibrariesResponse lists libraries.
type LibrariesResponse struct {
	// Libraries readable with the credentials.
	Libraries []Library
}

// Item is one library item.
type Item struct {
	// Key identifies the item in its library.
	Key string
	// Version is the item's version.
	Version int64
	// Paper is the bibliographic record.
	Paper paper.Paper
	// Collections are the keys of the collections holding the item.
	Collections []string
	// Tags are the item's tags.
	Tags []string
	// Deleted marks an item removed since the requested version.
	Deleted bool
}

// ItemsSinceRequest lists changed items.
type ItemsSinceRequest struct {
	// Credentials for the reference manager, per call.
	Credentials map[string]string
	// LibraryID is the library.
	LibraryID string
	// SinceVersion lists items changed after this version; 0 lists all.
	SinceVersion int64
	// Cursor is the NextCursor of the previous page; empty for the first page.
	Cursor string
	// PageSize is how many items a page holds; 0 means the plugin's default.
	PageSize int
}

// ItemsSinceResponse is one page of changed items.
//
// Pages follow ascending version and end at a version boundary; removed items come
// on the first page. Once a page is processed the caller may store Through and,
// after a crash, resume with it as SinceVersion (and no cursor): nothing is
// skipped. A changed note, attachment or annotation is reported as its top-level
// item (read its Notes again); items in the trash are Deleted; items Lectern
// pushed (MarkerPrefix) are left out.
type ItemsSinceResponse struct {
	// Items on this page.
	Items []Item
	// LibraryVersion is the library version this listing is consistent with.
	LibraryVersion int64
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string
	// Through is the version up to which every change has been listed once this
	// page is processed: the SinceVersion to resume from.
	Through int64
}

// Note is a note attached to an item.
type Note struct {
	// Key identifies the note; empty for a new note.
	Key string
	// ParentItemKey is the item the note belongs to.
	ParentItemKey string
	// HTML is the note body.
	HTML string
	// Version is the note's version; writing with a stale version is a BadRequest.
	Version int64
	// Annotation is set for an annotation on the item's PDF; HTML is then its
	// comment.
	Annotation *Annotation
}

// Annotation is a PDF annotation.
type Annotation struct {
	// Type is the manager's kind: "highlight", "underline", "note", "image", "ink".
	Type string
	// Text is the highlighted text.
	Text string
	// PageLabel is the page as printed on it.
	PageLabel string
}

// NotesRequest lists an item's notes.
type NotesRequest struct {
	// Credentials for the reference manager, per call.
	Credentials map[string]string
	// LibraryID is the library.
	LibraryID string
	// ItemKey is the item.
	ItemKey string
}

// NotesResponse lists notes.
type NotesResponse struct {
	// Notes of the item.
	Notes []Note
}

// WriteNoteRequest creates or updates a note.
type WriteNoteRequest struct {
	// Credentials for the reference manager, per call.
	Credentials map[string]string
	// LibraryID is the library.
	LibraryID string
	// Note is what to write.
	Note Note
}

// WriteNoteResponse returns the note as stored.
type WriteNoteResponse struct {
	// Note as stored, with its key and new version.
	Note Note
}

// MarkerPrefix starts every PushItem.Marker: "lectern-paper: <paper id>". A plugin
// writes the marker where the manager keeps free text (Zotero's Extra field) and
// leaves items carrying one out of ItemsSince: they are Lectern's own pushes.
const MarkerPrefix = "lectern-paper:"

// PushItem is one paper to push.
type PushItem struct {
	// Marker identifies the paper in the manager (written into the item), so a
	// push never creates it twice and a sync never takes it for a new item.
	Marker string
	Paper  paper.Paper
	// Key is the item's key from an earlier push; empty when never pushed.
	Key string
}

// PushRequest files papers into a collection of a library.
type PushRequest struct {
	// Credentials for the reference manager, per call.
	Credentials map[string]string
	// LibraryID is the library.
	LibraryID string
	// Collection names the collection to file the items in, created when missing;
	// empty files nothing.
	Collection string
	Items      []PushItem
	// SinceVersion is the library version the caller last synced.
	SinceVersion int64
}

// PushOutcome is what a push did with one item.
type PushOutcome int

// Push outcomes.
const (
	// PushUnknown is not a valid answer; it is the zero value.
	PushUnknown PushOutcome = iota
	// PushCreated: a new item.
	PushCreated
	// PushLinked: an item with the paper's DOI or marker was there already; it was
	// filed in the collection.
	PushLinked
	// PushUnchanged: the item was there and filed already.
	PushUnchanged
	// PushFailed: see Error.
	PushFailed
)

// PushResult is the outcome for one PushItem.
type PushResult struct {
	Marker  string
	Key     string
	Outcome PushOutcome
	// Error says why, in words, when Outcome is PushFailed.
	Error string
}

// PushResponse has one result per item, in order.
type PushResponse struct {
	Results []PushResult
	// LibraryVersion is the library's version after the push.
	LibraryVersion int64
	// CollectionKey is the collection's key, when one was named.
	CollectionKey string
}
