// Package refsync brings each user's reference-manager library (Zotero) into
// Lectern: the refmanager.sync job, per user, reads the items changed since the
// last run through the reference-manager plugin and makes them papers in the
// user's library, with their notes and PDF annotations in paper_notes; a remote
// removal takes out exactly what the sync brought. It owns refmanager_links and
// refmanager_sync_state.
//
// Everything a sync writes is the user's own: a record matches a shared paper or
// one of the user's private papers, never another user's private upload
// (papers.UpsertForUserTx), and what it brings is private to the user.
package refsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// Account is what a user's sync runs with.
type Account struct {
	// Credentials go to the plugin with every call (the user's API key).
	Credentials map[string]string
	// LibraryID is the library to sync; empty for the user's own.
	LibraryID string
}

// ErrNotConfigured means the user has set no reference-manager key.
var ErrNotConfigured = errors.New("no Zotero API key is set: add yours in Settings, Integrations")

// ErrNoPlugin means the reference-manager plugin is not running on this host.
var ErrNoPlugin = errors.New("the Zotero plugin is not running on this host; an admin can enable it under Plugins")

// Syncer runs users' syncs.
type Syncer struct {
	Pool *pgxpool.Pool
	// Manager returns the reference-manager plugin.
	Manager func() (refmanager.Manager, error)
	// Account returns the user's account, or ErrNotConfigured.
	Account func(ctx context.Context, userID uuid.UUID) (Account, error)
	// Instance returns the group libraries an admin set up for the whole
	// instance, or ErrInstanceNotConfigured; nil: none.
	Instance func(ctx context.Context) (InstanceAccount, error)
	// MaxNew bounds the papers one run adds to the library (default 20); the next
	// run goes on where it stopped.
	MaxNew int
	Logger *slog.Logger
	Now    func() time.Time
}

// DefaultMaxNew is how many papers a run adds at most.
const DefaultMaxNew = 20

// Report is what one run did.
type Report struct {
	LibraryID string `json:"library_id"`
	// Added papers came into the library; Updated items were read again;
	// Removed items were deleted or trashed remotely; Notes rows were written or
	// removed.
	Added, Updated, Removed, Notes int
	// Capped is true when the run stopped at MaxNew new papers.
	Capped bool `json:"capped"`
	// Version is where the sync stands after the run.
	Version int64 `json:"version"`
}

// conn is a user's way to their library: the plugin, their credentials and the
// library's id.
type conn struct {
	m     refmanager.Manager
	creds map[string]string
	lib   string
}

// open finds the user's account, the plugin and the library to sync.
func (s *Syncer) open(ctx context.Context, userID uuid.UUID) (conn, error) {
	acct, err := s.Account(ctx, userID)
	if err != nil {
		return conn{}, err
	}
	m, err := s.Manager()
	if err != nil {
		return conn{}, fmt.Errorf("%w (%w)", ErrNoPlugin, err)
	}
	c := conn{m: m, creds: acct.Credentials, lib: acct.LibraryID}
	if c.lib == "" {
		if c.lib, err = ownLibrary(ctx, m, acct.Credentials); err != nil {
			return conn{}, err
		}
	}
	return c, nil
}

// Run syncs the user's library once and records the outcome.
func (s *Syncer) Run(ctx context.Context, userID uuid.UUID) (Report, error) {
	c, err := s.open(ctx, userID)
	if err != nil {
		return Report{}, err
	}
	return s.runOpen(ctx, userID, c)
}

// logFailure logs why a run of library failed, for whom (a user id or
// "instance"): the status shows a sentence, the log the error.
func (s *Syncer) logFailure(who, library string, err error) {
	if s.Logger != nil {
		s.Logger.Warn("zotero sync failed", "for", who, "library", library, "err", err)
	}
}

// runOpen is Run over an open connection.
func (s *Syncer) runOpen(ctx context.Context, userID uuid.UUID, c conn) (Report, error) {
	rep, err := s.run(ctx, c.m, userID, c.creds, c.lib)
	words := ""
	if err != nil {
		words = failureWords(err)
		s.logFailure(userID.String(), c.lib, err)
	}
	if rerr := recordRun(context.WithoutCancel(ctx), s.Pool, userID, c.lib, s.now(), rep, words); rerr != nil && err == nil {
		err = rerr
	}
	return rep, err
}

// ownLibrary is the id of the key's own library.
func ownLibrary(ctx context.Context, m refmanager.Manager, creds map[string]string) (string, error) {
	libs, err := m.Libraries(ctx, &refmanager.LibrariesRequest{Credentials: creds})
	if err != nil {
		return "", err
	}
	for _, l := range libs.Libraries {
		if l.Type == refmanager.LibraryUser {
			return l.ID, nil
		}
	}
	return "", errors.New("the Zotero key may not read your own library: give it read access at zotero.org/settings/keys, or choose a group library")
}

// run brings the user's library changes since their cursor into Lectern (pull).
func (s *Syncer) run(ctx context.Context, m refmanager.Manager, userID uuid.UUID, creds map[string]string, lib string) (Report, error) {
	return s.pull(ctx, m, creds, lib, &userLibrary{s: s, userID: userID, lib: lib})
}

// target is where a pull writes a remote library's records: one user's library
// (userLibrary) or the instance's corpus (groupLibrary, instance.go).
type target interface {
	// since is the library version the last pull went through.
	since(ctx context.Context) (int64, error)
	// read fetches what the page's records need from the plugin, before the
	// page's transaction opens (no plugin call holds a transaction).
	read(ctx context.Context, m refmanager.Manager, creds map[string]string, items []refmanager.Item) error
	// known reports whether the record key was brought in before.
	known(ctx context.Context, tx pgx.Tx, key string) (bool, error)
	// apply makes one record true in Lectern.
	apply(ctx context.Context, tx pgx.Tx, it refmanager.Item, rep *Report) error
	// advance moves the cursor to the version a page went through.
	advance(ctx context.Context, tx pgx.Tx, through int64) error
}

// pull brings a library's changes since its cursor into t, a page per
// transaction with the cursor advanced in it, and stops after MaxNew new
// records (Report.Capped: the next run goes on from there).
func (s *Syncer) pull(ctx context.Context, m refmanager.Manager, creds map[string]string, lib string, t target) (Report, error) {
	rep := Report{LibraryID: lib}
	since, err := t.since(ctx)
	if err != nil {
		return rep, err
	}
	rep.Version = since
	maxNew := s.MaxNew
	if maxNew <= 0 {
		maxNew = DefaultMaxNew
	}
	cursor := ""
	for {
		page, err := m.ItemsSince(ctx, &refmanager.ItemsSinceRequest{Credentials: creds, LibraryID: lib,
			SinceVersion: since, Cursor: cursor, PageSize: max(1, min(50, maxNew-rep.Added))})
		if err != nil {
			return rep, err
		}
		if err := t.read(ctx, m, creds, page.Items); err != nil {
			return rep, err
		}
		done := true
		err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
			for _, it := range page.Items {
				if !it.Deleted && rep.Added >= maxNew {
					if known, err := t.known(ctx, tx, it.Key); err != nil || !known {
						done = false
						return err
					}
				}
				if err := t.apply(ctx, tx, it, &rep); err != nil {
					return err
				}
			}
			if done {
				return t.advance(ctx, tx, page.Through)
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		if !done {
			rep.Capped = true
			return rep, nil
		}
		rep.Version = page.Through
		if page.NextCursor == "" {
			return rep, nil
		}
		cursor = page.NextCursor
	}
}

// userLibrary is a pull into one user's library, with each record's notes.
type userLibrary struct {
	s      *Syncer
	userID uuid.UUID
	lib    string
	notes  map[string][]papers.ExternalNote
}

func (u *userLibrary) since(ctx context.Context) (int64, error) {
	return versionOf(ctx, u.s.Pool, u.userID, u.lib)
}

func (u *userLibrary) read(ctx context.Context, m refmanager.Manager, creds map[string]string, items []refmanager.Item) error {
	var err error
	u.notes, err = u.s.notesOf(ctx, m, creds, u.lib, items)
	return err
}

func (u *userLibrary) known(ctx context.Context, tx pgx.Tx, key string) (bool, error) {
	_, known, err := linkTx(ctx, tx, u.userID, u.lib, key)
	return known, err
}

func (u *userLibrary) apply(ctx context.Context, tx pgx.Tx, it refmanager.Item, rep *Report) error {
	return u.s.apply(ctx, tx, u.userID, u.lib, it, u.notes[it.Key], rep)
}

func (u *userLibrary) advance(ctx context.Context, tx pgx.Tx, through int64) error {
	return advanceTx(ctx, tx, u.userID, u.lib, through)
}

// notesOf reads the notes of the page's records, before the page's transaction
// opens (no plugin call holds a transaction).
func (s *Syncer) notesOf(ctx context.Context, m refmanager.Manager, creds map[string]string, lib string, items []refmanager.Item) (map[string][]papers.ExternalNote, error) {
	out := map[string][]papers.ExternalNote{}
	for _, it := range items {
		if it.Deleted {
			continue
		}
		resp, err := m.Notes(ctx, &refmanager.NotesRequest{Credentials: creds, LibraryID: lib, ItemKey: it.Key})
		if err != nil {
			return nil, err
		}
		notes := make([]papers.ExternalNote, 0, len(resp.Notes))
		for _, n := range resp.Notes {
			en := papers.ExternalNote{Key: n.Key, Version: n.Version, Body: text(n.HTML)}
			if a := n.Annotation; a != nil {
				en.Highlight = a.Text
				if p, err := strconv.Atoi(a.PageLabel); err == nil && p >= 1 {
					en.Page = &p
				}
			}
			notes = append(notes, en)
		}
		out[it.Key] = notes
	}
	return out, nil
}

// apply makes one listed item true in the user's library.
func (s *Syncer) apply(ctx context.Context, tx pgx.Tx, userID uuid.UUID, lib string, it refmanager.Item, notes []papers.ExternalNote, rep *Report) error {
	prior, known, err := linkTx(ctx, tx, userID, lib, it.Key)
	if err != nil {
		return err
	}
	if it.Deleted {
		if !known {
			// A removed note or annotation, or an item never synced.
			n, err := papers.DeleteExternalNoteKeysTx(ctx, tx, userID, []string{it.Key})
			rep.Notes += n
			return err
		}
		other, err := dropLinkTx(ctx, tx, userID, lib, it.Key, prior.paperID)
		if err != nil || other {
			return err
		}
		n, err := papers.SyncExternalNotesTx(ctx, tx, userID, prior.paperID, nil)
		if err != nil {
			return err
		}
		rep.Notes += n
		if prior.brought {
			if err := papers.RemoveFromLibraryTx(ctx, tx, userID, prior.paperID); err != nil {
				return err
			}
		}
		rep.Removed++
		return nil
	}
	in := search.Input(it.Paper, "zotero")
	paperID, already, err := papers.UpsertForUserTx(ctx, tx, in, userID, "refmanager_pull")
	if err != nil {
		return fmt.Errorf("refsync: item %s (%q): %w", it.Key, it.Paper.Title, err)
	}
	l := link{paperID: paperID, version: it.Version, brought: !already}
	switch {
	case !known && !already:
		rep.Added++
	case known:
		l.brought = prior.brought
		if prior.version != it.Version || prior.paperID != paperID {
			rep.Updated++
		}
	}
	if err := putLinkTx(ctx, tx, userID, lib, it.Key, l); err != nil {
		return err
	}
	n, err := papers.SyncExternalNotesTx(ctx, tx, userID, paperID, notes)
	rep.Notes += n
	return err
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
