// Command brokenrefmanager is a reference-manager plugin that breaks every rule
// the conformance kit checks, so that its test can show each check failing.
package main

import (
	"context"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
	"github.com/lectern-research/lectern/sdk/serve"
)

type broken struct{ protocol.ConfigureDefaults }

func (broken) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "broken", Version: "0.0.1"}, nil
}

// Libraries lists a library whoever asks.
func (broken) Libraries(context.Context, *refmanager.LibrariesRequest) (*refmanager.LibrariesResponse, error) {
	return &refmanager.LibrariesResponse{Libraries: []refmanager.Library{{ID: "users/1", Type: refmanager.LibraryUser}}}, nil
}

// ItemsSince accepts any library and never ends: every page has a next one, and
// its records have no title.
func (broken) ItemsSince(_ context.Context, req *refmanager.ItemsSinceRequest) (*refmanager.ItemsSinceResponse, error) {
	return &refmanager.ItemsSinceResponse{Items: []refmanager.Item{{Key: "A", Paper: paper.Paper{}}}, LibraryVersion: 5,
		Through: 1, NextCursor: req.Cursor + "x"}, nil
}

func (broken) Notes(context.Context, *refmanager.NotesRequest) (*refmanager.NotesResponse, error) {
	return &refmanager.NotesResponse{}, nil
}

func (broken) WriteNote(context.Context, *refmanager.WriteNoteRequest) (*refmanager.WriteNoteResponse, error) {
	return &refmanager.WriteNoteResponse{}, nil
}

func (broken) Push(context.Context, *refmanager.PushRequest) (*refmanager.PushResponse, error) {
	return &refmanager.PushResponse{}, nil
}

func main() { serve.RefManager(broken{}) }
