// Package enrich checks a paper's bibliographic record against the public records
// of the paper sources (issue 16 items 2 and 4). The paper.enrich job, enqueued by
// ingest in the transaction that stores a PDF's text and by the paper page's
// "Update from sources" button, looks the paper up by DOI, then arXiv id, then
// exact title and first author (search.Lookup, which writes nothing to the
// corpus), and then, in one transaction:
//
//   - merges the rows that turn out to be one work, when one user may merge them:
//     two shared rows, or two private rows of the user alone. Every package that
//     keeps rows on a paper moves them itself (MoveFunc, papers.MergeTx);
//   - links the user's private upload to the shared row of the same work instead
//     (papers.LinkVersionTx): the private row keeps the user's PDF text, the
//     shared row keeps its identifiers, and no other user's reads change;
//   - writes the record (papers.ApplyRecordTx): on the user's own upload the
//     sources win over the PDF's heuristics, on a shared row they fill what it
//     lacks, and provenance says which source gave each field.
//
// Offline, or with every source failing, nothing is written but the outcome: the
// PDF's fields stand, marked unverified, and the job tries again a bounded number
// of times (worker.go).
package enrich

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/projects"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// ErrSourcesUnreachable means the sources that might know the paper could not be
// asked (they failed, timed out or are in backoff): asking again later may find
// it.
var ErrSourcesUnreachable = errors.New("enrich: the paper sources could not be reached")

// Outcomes of an enrichment.
const (
	// OutcomeFound: a source knew the paper and its record was written.
	OutcomeFound = "found"
	// OutcomeNotFound: every source answered and none knows the paper.
	OutcomeNotFound = "not_found"
	// OutcomeUnreachable: the sources could not be asked; the fields stay.
	OutcomeUnreachable = "unreachable"
	// OutcomeNoSources: no paper source is running on this host.
	OutcomeNoSources = "no_sources"
	// OutcomeGone: the paper was deleted, or is not the user's to enrich.
	OutcomeGone = "gone"
)

// MoveFunc moves the rows a package keeps on paper from onto paper to, in the
// caller's transaction, before papers.MergeTx deletes from. Each package that
// names a paper in its tables owns one (archtest.TestOneOwnerPerTable).
type MoveFunc func(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) error

// Moves are the MoveFuncs of every package that keeps rows on a paper, besides
// papers itself: cards, project links, extractions and entity links.
var Moves = []MoveFunc{learning.MovePaperTx, projects.MovePaperTx, rag.MovePaperTx}

// Service enriches papers.
type Service struct {
	Pool   *pgxpool.Pool
	Search *search.Service
	Logger *slog.Logger
	// PDFs releases the stored PDF of a merged-away paper when no other paper
	// names it; nil keeps the files.
	PDFs *ingest.Store
	// Vectors drops a merged-away paper's vectors from the vector store (the
	// embedded store loses them with the passages; an outside index does not);
	// nil for none.
	Vectors vectorstore.Store
	// MoveFuncs run before every merge. Default Moves.
	MoveFuncs []MoveFunc
}

// Outcome is what one enrichment did.
type Outcome struct {
	// PaperID is the paper that now holds the work: the one asked about, or the
	// row it was merged into.
	PaperID uuid.UUID `json:"paper_id"`
	// Outcome is one of the Outcome... constants.
	Outcome string `json:"outcome"`
	// By says how the record was found (doi, arxiv_id, title).
	By string `json:"by,omitempty"`
	// Sources are the sources that knew the paper.
	Sources []string `json:"sources,omitempty"`
	// Merged are the rows merged into PaperID.
	Merged []uuid.UUID `json:"merged,omitempty"`
	// LinkedTo is the shared paper the user's private upload now belongs to.
	LinkedTo *uuid.UUID `json:"linked_to,omitempty"`
}

// merged is one row merged away, for the clean-up after the commit.
type merged struct {
	id uuid.UUID
	papers.Merged
}

// Enrich looks paper paperID up for userID and writes what the sources say (see
// the package doc). ErrSourcesUnreachable comes with OutcomeUnreachable, and the
// paper then records that outcome and keeps its fields.
func (s *Service) Enrich(ctx context.Context, userID, paperID uuid.UUID) (Outcome, error) {
	out := Outcome{PaperID: paperID}
	if userID == uuid.Nil {
		out.Outcome = OutcomeGone // a system job has nobody to enrich for
		return out, nil
	}
	t, err := papers.EnrichTargetTx(ctx, s.Pool, userID, paperID, false)
	if errors.Is(err, papers.ErrNotFound) {
		out.Outcome = OutcomeGone
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("enrich: %w", err)
	}
	found, err := s.Search.Lookup(ctx, userID, search.LookupParams{DOI: t.DOI, ArxivID: t.ArxivID, Title: t.Title, FirstAuthor: t.FirstAuthor})
	switch {
	case errors.Is(err, search.ErrNoSources):
		out.Outcome = OutcomeNoSources
		return out, s.note(ctx, paperID, out.Outcome)
	case errors.Is(err, search.ErrSourcesUnreachable):
		out.Outcome = OutcomeUnreachable
		if nerr := s.note(ctx, paperID, out.Outcome); nerr != nil {
			return out, nerr
		}
		return out, fmt.Errorf("%w: %w", ErrSourcesUnreachable, err)
	case errors.Is(err, search.ErrUnresolved):
		out.Outcome = OutcomeNotFound
		return out, s.note(ctx, paperID, out.Outcome)
	case err != nil:
		return out, fmt.Errorf("enrich: look the paper up: %w", err)
	}
	rec := recordOf(found)
	var gone []merged
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		out, gone, err = s.apply(ctx, tx, userID, paperID, rec)
		return err
	})
	if err != nil {
		return Outcome{PaperID: paperID}, err
	}
	s.cleanUp(ctx, gone)
	return out, nil
}

// note records outcome on the paper, changing nothing else.
func (s *Service) note(ctx context.Context, paperID uuid.UUID, outcome string) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		return papers.RecordLookupTx(ctx, tx, paperID, outcome)
	})
}

// recordOf is the public record search found, as papers writes it.
func recordOf(f search.Found) papers.Record {
	return papers.Record{Input: search.Input(f.Paper, f.Sources[0]), From: f.From, By: f.By, Sources: f.Sources}
}

// apply writes rec for the paper in tx: merges, a link to the shared row, the
// record itself (see the package doc).
func (s *Service) apply(ctx context.Context, tx pgx.Tx, userID, paperID uuid.UUID, rec papers.Record) (Outcome, []merged, error) {
	out := Outcome{PaperID: paperID, Outcome: OutcomeFound, By: rec.By, Sources: rec.Sources}
	// Lock the paper and every row of the same work, in id order, then read them
	// again: what was true before the lock may have changed.
	holders, err := papers.SameWorkTx(ctx, tx, rec.DOI, rec.ArxivID, paperID)
	if err != nil {
		return out, nil, err
	}
	ids := []uuid.UUID{paperID}
	for _, h := range holders {
		ids = append(ids, h.ID)
	}
	if _, err := papers.LockTx(ctx, tx, ids); err != nil {
		return out, nil, err
	}
	t, err := papers.EnrichTargetTx(ctx, tx, userID, paperID, false)
	if errors.Is(err, papers.ErrNotFound) {
		out.Outcome = OutcomeGone
		return out, nil, nil
	}
	if err != nil {
		return out, nil, err
	}
	if holders, err = papers.SameWorkTx(ctx, tx, rec.DOI, rec.ArxivID, paperID); err != nil {
		return out, nil, err
	}
	group, link := classify(t, userID, holders)

	survivor := chooseSurvivor(t, group)
	var gone []merged
	for _, m := range append([]papers.Holder{asHolder(t)}, group...) {
		if m.ID == survivor {
			continue
		}
		res, err := s.merge(ctx, tx, m.ID, survivor)
		if err != nil {
			return out, nil, err
		}
		gone = append(gone, merged{id: m.ID, Merged: res})
		out.Merged = append(out.Merged, m.ID)
	}
	out.PaperID = survivor

	mode := papers.ApplyCorrect
	switch {
	case t.Shared:
		mode = papers.ApplyFill
	case t.VersionOf != uuid.Nil:
		mode = papers.ApplyCorrectNoIDs
	case link != nil:
		if err := papers.LinkVersionTx(ctx, tx, survivor, link.ID); err != nil {
			return out, nil, err
		}
		mode, out.LinkedTo = papers.ApplyCorrectNoIDs, &link.ID
	}
	if err := papers.ApplyRecordTx(ctx, tx, survivor, rec, mode); err != nil {
		return out, nil, fmt.Errorf("enrich: %w", err)
	}
	return out, gone, nil
}

// classify sorts the other rows of the work: the ones userID may merge with t
// (two shared rows; or t and another private row of userID alone), and, for the
// user's own upload, the shared row it should belong to. Another user's private
// row is never either: it stays as it is, unread.
func classify(t papers.EnrichTarget, userID uuid.UUID, holders []papers.Holder) ([]papers.Holder, *papers.Holder) {
	var group []papers.Holder
	var link *papers.Holder
	for _, h := range holders {
		switch {
		case t.Shared && h.Shared:
			group = append(group, h)
		case !t.Own || t.VersionOf != uuid.Nil:
			// A version already belongs to its shared paper; it merges with nothing.
		case !h.Shared && h.OwnerAlone && h.Owner == userID:
			group = append(group, h)
		case h.Shared && link == nil:
			link = &h
		}
	}
	return group, link
}

// asHolder is the paper being enriched as a member of its group.
func asHolder(t papers.EnrichTarget) papers.Holder {
	return papers.Holder{ID: t.ID, Shared: t.Shared, HasText: t.HasText, DiscoveredAt: t.DiscoveredAt}
}

// chooseSurvivor picks the row a group of one work merges into: one with text
// (the text is what passages, vectors and quotes point into), then the oldest,
// the row others have pointed at longest.
func chooseSurvivor(t papers.EnrichTarget, group []papers.Holder) uuid.UUID {
	all := append([]papers.Holder{asHolder(t)}, group...)
	best := slices.MinFunc(all, func(a, b papers.Holder) int {
		if a.HasText != b.HasText {
			if a.HasText {
				return -1
			}
			return 1
		}
		if c := a.DiscoveredAt.Compare(b.DiscoveredAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID.String(), b.ID.String())
	})
	return best.ID
}

// merge moves everything on from to to and deletes from, in tx.
func (s *Service) merge(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) (papers.Merged, error) {
	moves := s.MoveFuncs
	if moves == nil {
		moves = Moves
	}
	for _, move := range moves {
		if err := move(ctx, tx, from, to); err != nil {
			return papers.Merged{}, fmt.Errorf("enrich: merge %s into %s: %w", from, to, err)
		}
	}
	res, err := papers.MergeTx(ctx, tx, from, to)
	if err != nil {
		return papers.Merged{}, fmt.Errorf("enrich: merge %s into %s: %w", from, to, err)
	}
	return res, nil
}

// cleanUp drops what merged-away rows left outside the database: vectors in an
// outside index and PDF files no paper names any more. A failure only leaves
// them behind, so it is logged, not returned.
func (s *Service) cleanUp(ctx context.Context, gone []merged) {
	for _, g := range gone {
		if g.HadText && s.Vectors != nil {
			if err := s.Vectors.DeletePaper(ctx, g.id); err != nil {
				s.log().WarnContext(ctx, "enrich: the merged paper's vectors stay in the index", "paper", g.id, "error", err)
			}
		}
		if s.PDFs == nil {
			continue
		}
		for _, sum := range g.Digests {
			if err := s.PDFs.Release(ctx, s.Pool, sum); err != nil {
				s.log().WarnContext(ctx, "enrich: the merged paper's PDF stays on disk", "sha256", sum, "error", err)
			}
		}
	}
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
