package plugintest

import (
	"context"
	"errors"
	"fmt"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

func (r *runner) refManagerChecks() []check {
	checks := []check{
		{"typed_errors", r.refManagerTypedErrors},
		{"credentials_required", r.credentialsRequired},
	}
	if len(r.opts.Credentials) > 0 {
		checks = append(checks, check{"sync_pages_end", r.syncPagesEnd})
	}
	return checks
}

func (r *runner) manager() refmanager.Manager { return r.conn.Plugin.(refmanager.Manager) }

// refManagerTypedErrors sends requests no reference manager can carry out; each
// must fail with a BadRequest, with or without credentials.
func (r *runner) refManagerTypedErrors(ctx context.Context) error {
	m, creds := r.manager(), r.opts.Credentials
	_, err := m.ItemsSince(ctx, &refmanager.ItemsSinceRequest{Credentials: creds})
	if err := wantCode("items since with no library id", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = m.Notes(ctx, &refmanager.NotesRequest{Credentials: creds})
	if err := wantCode("notes with no library and no item", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = m.Push(ctx, &refmanager.PushRequest{Credentials: creds, Items: []refmanager.PushItem{{Marker: "no prefix"}}})
	return wantCode("push with a marker not starting with "+refmanager.MarkerPrefix, err, protocol.ErrBadRequest)
}

// credentialsRequired lists libraries without credentials: the answer must be
// Unauthorized, never someone's libraries.
func (r *runner) credentialsRequired(ctx context.Context) error {
	resp, err := r.manager().Libraries(ctx, &refmanager.LibrariesRequest{})
	if err == nil {
		return fmt.Errorf("libraries without credentials listed %d libraries, want an Unauthorized error", len(resp.Libraries))
	}
	return wantCode("libraries without credentials", err, protocol.ErrUnauthorized)
}

// syncPagesEnd lists the libraries with the credentials and pages through the
// first one from version 0: the pages must end within MaxPages, Through must
// never go back nor pass the library version, and every item must have a key and
// every record a title.
func (r *runner) syncPagesEnd(ctx context.Context) error {
	m, creds := r.manager(), r.opts.Credentials
	libs, err := m.Libraries(ctx, &refmanager.LibrariesRequest{Credentials: creds})
	if err != nil {
		return fmt.Errorf("libraries failed: %w", err)
	}
	if len(libs.Libraries) == 0 {
		return errors.New("libraries listed none; the credentials read no library")
	}
	for _, l := range libs.Libraries {
		if l.ID == "" || (l.Type != refmanager.LibraryUser && l.Type != refmanager.LibraryGroup) {
			return fmt.Errorf("library %+v has no id or no type", l)
		}
	}
	lib := libs.Libraries[0].ID
	cursor, through := "", int64(0)
	for page := 0; page < r.opts.MaxPages; page++ {
		resp, err := m.ItemsSince(ctx, &refmanager.ItemsSinceRequest{Credentials: creds, LibraryID: lib,
			Cursor: cursor, PageSize: r.opts.PageSize})
		if err != nil {
			return fmt.Errorf("items since, page %d: %w", page+1, err)
		}
		if resp.Through < through || resp.Through > resp.LibraryVersion {
			return fmt.Errorf("page %d: through %d after %d, library version %d", page+1, resp.Through, through, resp.LibraryVersion)
		}
		through = resp.Through
		for _, it := range resp.Items {
			if it.Key == "" || (!it.Deleted && it.Paper.Title == "") {
				return fmt.Errorf("page %d: item %+v has no key or no title", page+1, it)
			}
		}
		if resp.NextCursor == "" {
			if through != resp.LibraryVersion {
				return fmt.Errorf("the last page is through %d, not the library version %d", through, resp.LibraryVersion)
			}
			return nil
		}
		if resp.NextCursor == cursor {
			return fmt.Errorf("page %d repeats its cursor %q", page+1, cursor)
		}
		cursor = resp.NextCursor
	}
	return fmt.Errorf("items since did not end within %d pages of %d", r.opts.MaxPages, r.opts.PageSize)
}
