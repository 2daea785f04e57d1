package evals

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/users"
)

// FullTextOpts says where a full-text run reads its PDFs.
type FullTextOpts struct {
	// Fixtures is the shared fixtures folder (the one holding pdfs/); required
	// when the set names fixture PDFs.
	Fixtures string
	// Dataset is the file the set was loaded from, "" for the built-in set; the
	// set's own PDFs are read beside it.
	Dataset string
	// Name is the set's name in the report (default "fulltext").
	Name string
}

// RunFullText ingests the set's PDFs as one user's private papers into pool
// (which must be a throwaway database) through worker, as `lectern import` does
// (extraction, clean text, chunking, embedding), asks every question through svc
// with the user's library as scope, as POST /api/rag/ask does, and scores the
// answers against the gold evidence and pages.
func RunFullText(ctx context.Context, pool *pgxpool.Pool, svc *rag.Service, worker *ingest.Worker, set *FullTextSet, o FullTextOpts) (*FullTextScores, error) {
	src, err := o.source()
	if err != nil {
		return nil, err
	}
	account, err := users.Create(ctx, pool, "eval-fulltext@lectern.invalid", users.RoleUser)
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	user := account.ID
	ids, err := ingestPapers(ctx, pool, worker, user, set.Papers, src)
	if err != nil {
		return nil, err
	}
	names := make(map[uuid.UUID]string, len(ids))
	for name, id := range ids {
		names[id] = name
	}
	s := &FullTextScores{Set: o.Name, Papers: len(set.Papers), Questions: len(set.Questions), ByKind: map[string]KindScore{}}
	if s.Set == "" {
		s.Set = SetFullText
	}
	for _, q := range set.Questions {
		if q.Answerable() {
			s.Answerable++
		} else {
			s.Unanswerable++
		}
		ans, err := svc.Ask(ctx, user, rag.Question{Question: q.Question, Scope: rag.ScopeLibrary}, func(string) error { return nil })
		if err != nil {
			return nil, fmt.Errorf("evals: %q: %w", q.Question, err)
		}
		s.Model, s.Method = ans.Model, ans.Method
		passages, err := citedText(ctx, pool, ans.Citations)
		if err != nil {
			return nil, err
		}
		s.add(q, judge(q, ids[q.Paper], citedAnswer{answer: ans, passages: passages}), ans, names)
	}
	s.finish()
	return s, nil
}

// source is where the set's PDFs are read from.
func (o FullTextOpts) source() (fullTextSource, error) {
	src := fullTextSource{fixtures: o.Fixtures}
	if o.Dataset == "" {
		sub, err := fs.Sub(fullTextFS, "data")
		if err != nil {
			return src, fmt.Errorf("evals: %w", err)
		}
		src.own = sub
		return src, nil
	}
	src.own = os.DirFS(filepath.Dir(o.Dataset))
	return src, nil
}

// ingestPapers stores and ingests every paper for user, one after another, and
// returns their ids by the set's paper id.
func ingestPapers(ctx context.Context, pool *pgxpool.Pool, w *ingest.Worker, user uuid.UUID, papers []FullTextPaper, src fullTextSource) (map[string]uuid.UUID, error) {
	worker := *w
	if worker.Logger == nil {
		worker.Logger = slog.New(slog.DiscardHandler)
	}
	ids := make(map[string]uuid.UUID, len(papers))
	for _, p := range papers {
		pdf, err := src.readPaper(p)
		if err != nil {
			return nil, err
		}
		k, err := worker.Store.KeepFile(ctx, pool, user, bytes.NewReader(pdf), p.fileName())
		if err != nil {
			return nil, fmt.Errorf("evals: paper %s: %w", p.ID, err)
		}
		if !k.Existing {
			if _, err := worker.Ingest(ctx, ingest.Args{PaperID: k.PaperID, SHA256: k.SHA256}, user, func(int, string) {}); err != nil {
				return nil, fmt.Errorf("evals: paper %s: %w", p.ID, err)
			}
		}
		ids[p.ID] = k.PaperID
	}
	return ids, nil
}

// CheckPapers reads every PDF of set as RunFullText will, so a missing fixtures
// folder or a wrong file is said before any database starts.
func CheckPapers(set *FullTextSet, o FullTextOpts) error {
	src, err := o.source()
	if err != nil {
		return err
	}
	for _, p := range set.Papers {
		if _, err := src.readPaper(p); err != nil {
			return err
		}
	}
	return nil
}
