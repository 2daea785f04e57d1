package refsync

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// ProjectPapers is one of a user's projects and the papers linked to it.
type ProjectPapers struct {
	Name   string
	Papers []uuid.UUID
}

// Marker is what a pushed item carries so that it is never created twice and
// never synced back as new: "lectern-paper: <paper id>".
func Marker(paperID uuid.UUID) string { return refmanager.MarkerPrefix + " " + paperID.String() }

// PushReport is what one push did.
type PushReport struct {
	Created, Linked, Unchanged, Failed int
	// Notes is how many of the user's own notes went to the manager as child
	// notes of their papers' items.
	Notes int
	// Errors say, per failed paper, why (in words).
	Errors []string `json:"errors,omitempty"`
}

// maxPushBatch bounds one Push call.
const maxPushBatch = 100

// Push files the papers of each of the user's projects into a collection named
// after the project in their library: an item pushed or synced before is filed
// again (never duplicated), one holding the paper's DOI is linked, any other is
// created once. The keys are remembered (refmanager_links, origin push).
func (s *Syncer) Push(ctx context.Context, userID uuid.UUID, projects []ProjectPapers) (PushReport, error) {
	c, err := s.open(ctx, userID)
	if err != nil {
		return PushReport{}, err
	}
	return s.pushOpen(ctx, userID, c, projects)
}

// pushOpen is Push over an open connection.
func (s *Syncer) pushOpen(ctx context.Context, userID uuid.UUID, c conn, projects []ProjectPapers) (PushReport, error) {
	var rep PushReport
	m, lib := c.m, c.lib
	since, err := versionOf(ctx, s.Pool, userID, lib)
	if err != nil {
		return rep, err
	}
	store := papers.New(s.Pool)
	for _, p := range projects {
		for batch := range slices.Chunk(p.Papers, maxPushBatch) {
			items, err := s.pushItems(ctx, store, userID, lib, batch)
			if err != nil {
				return rep, err
			}
			if len(items) == 0 {
				continue
			}
			resp, err := m.Push(ctx, &refmanager.PushRequest{Credentials: c.creds, LibraryID: lib,
				Collection: p.Name, Items: items, SinceVersion: since})
			if err != nil {
				return rep, err
			}
			if err := s.rememberPushed(ctx, userID, lib, items, resp.Results, &rep); err != nil {
				return rep, err
			}
			if err := s.pushNotes(ctx, m, c.creds, store, userID, lib, batch, &rep); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// pushNotes writes the user's own notes on the papers, not pushed before, as
// child notes of the papers' items, and remembers each one's key so that it is
// pushed once and never synced back as a copy. A refused note is reported and
// the others go on.
func (s *Syncer) pushNotes(ctx context.Context, m refmanager.Manager, creds map[string]string, store *papers.Store,
	userID uuid.UUID, lib string, ids []uuid.UUID, rep *PushReport) error {
	notes, err := store.UnpushedNotes(ctx, userID, ids)
	if err != nil || len(notes) == 0 {
		return err
	}
	keys, err := keysOf(ctx, s.Pool, userID, lib, ids)
	if err != nil {
		return err
	}
	for _, n := range notes {
		item := keys[n.PaperID]
		if item == "" {
			continue
		}
		resp, err := m.WriteNote(ctx, &refmanager.WriteNoteRequest{Credentials: creds, LibraryID: lib,
			Note: refmanager.Note{ParentItemKey: item, HTML: noteHTML(n.Body)}})
		if err != nil {
			rep.Errors = append(rep.Errors, "a note could not be written: "+err.Error())
			continue
		}
		if err := store.MarkNotePushed(ctx, userID, n.ID, resp.Note.Key, resp.Note.Version); err != nil {
			return err
		}
		rep.Notes++
	}
	return nil
}

// noteHTML is a plain-text note as Zotero's note HTML: one paragraph per line,
// escaped.
func noteHTML(body string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimSpace(body), "\n") {
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(strings.TrimSpace(line)))
		b.WriteString("</p>")
	}
	return b.String()
}

// pushItems are the papers of ids the user may see, as push items with the keys
// already known for them.
func (s *Syncer) pushItems(ctx context.Context, store *papers.Store, userID uuid.UUID, lib string, ids []uuid.UUID) ([]refmanager.PushItem, error) {
	got, err := store.GetMany(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	keys, err := keysOf(ctx, s.Pool, userID, lib, ids)
	if err != nil {
		return nil, err
	}
	var out []refmanager.PushItem
	for _, id := range ids {
		it, ok := got[id]
		if !ok {
			continue
		}
		out = append(out, refmanager.PushItem{Marker: Marker(id), Key: keys[id], Paper: recordOf(it.Paper)})
	}
	return out, nil
}

// recordOf is a corpus paper as a bibliographic record to push.
func recordOf(p papers.Paper) paper.Paper {
	out := paper.Paper{IDs: paper.IDs{DOI: p.DOI, ArXivID: p.ArxivID, ArXivVersion: p.ArxivVersion}, Title: p.Title,
		Abstract: p.Abstract, Venue: paper.Venue{Name: p.Venue}, LandingURL: p.URL}
	for _, a := range p.Authors {
		out.Authors = append(out.Authors, paper.Author{Name: a.Name})
	}
	if t := p.PublicationDate; t != nil {
		switch p.DatePrecision {
		case "day":
			out.Published = paper.DayDate(*t)
		case "month":
			out.Published = paper.Date{Year: t.Year(), Month: int(t.Month()), Precision: paper.PrecisionMonth}
		default:
			out.Published = paper.Date{Year: t.Year(), Precision: paper.PrecisionYear}
		}
	}
	if p.ArxivID != "" {
		out.WorkType = "preprint"
	}
	return out
}

// rememberPushed records the keys of what the push created or linked.
func (s *Syncer) rememberPushed(ctx context.Context, userID uuid.UUID, lib string, items []refmanager.PushItem,
	results []refmanager.PushResult, rep *PushReport) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		for i, r := range results {
			if i >= len(items) {
				break
			}
			paperID := uuid.MustParse(items[i].Marker[len(refmanager.MarkerPrefix)+1:])
			switch r.Outcome {
			case refmanager.PushCreated:
				rep.Created++
			case refmanager.PushLinked:
				rep.Linked++
			case refmanager.PushUnchanged:
				rep.Unchanged++
			default:
				rep.Failed++
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %s", items[i].Paper.Title, r.Error))
				continue
			}
			if r.Key == "" {
				continue
			}
			if err := putPushedTx(ctx, tx, userID, lib, r.Key, paperID); err != nil {
				return err
			}
		}
		return nil
	})
}

// pushTimeout bounds one push job.
const pushTimeout = 30 * time.Minute
