package learning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// GenerateArgs are the arguments of cards.generate: draft cards from one paper into
// one of the owner's decks.
type GenerateArgs struct {
	PaperID  uuid.UUID `json:"paper_id"`
	DeckID   uuid.UUID `json:"deck_id"`
	MaxCards int       `json:"max_cards,omitempty"` // 1-20, default 5
}

// Kind names the job.
func (GenerateArgs) Kind() string { return "cards.generate" }

// ValidateArgs checks the arguments before the job is queued.
func (a GenerateArgs) ValidateArgs() error {
	var errs []error
	if a.PaperID == uuid.Nil {
		errs = append(errs, &jobs.FieldError{Field: "paper_id", Message: "is required"})
	}
	if a.DeckID == uuid.Nil {
		errs = append(errs, &jobs.FieldError{Field: "deck_id", Message: "is required"})
	}
	if a.MaxCards < 0 || a.MaxCards > 20 {
		errs = append(errs, &jobs.FieldError{Field: "max_cards", Message: "must be from 1 to 20"})
	}
	return errors.Join(errs...)
}

// Passage is a piece of a paper that cards are drafted from.
type Passage struct {
	// ChunkID and Page say where it is; zero for an abstract.
	ChunkID uuid.UUID
	Page    int
	Text    string
}

// Draft is one card draft and the passage it was made from.
type Draft struct {
	ChunkID uuid.UUID
	Page    int
	// Front is the question (for a cloze, Source with its term blanked); Back is
	// the answer alone.
	Front, Back string
	// Source is the sentence of the passage the card was made from, in display
	// form (one space between words). For a cloze it is Front with each blank
	// filled with Back, so the card needs no column of its own for it.
	Source string
}

// Drafter drafts up to n cards from a paper's passages: the cards role's model
// behind the LLM gateway (rag.Service.DraftCards), by default the builtin
// plugin's cloze drafts from key sentences.
type Drafter interface {
	DraftCards(ctx context.Context, title string, passages []Passage, n int) ([]Draft, error)
}

// GenerateWorker drafts cards from a paper's passages with the Drafter; the
// drafts wait in the deck (status draft) for the user to accept, edit or drop.
type GenerateWorker struct {
	river.WorkerDefaults[GenerateArgs]
	Pool    *pgxpool.Pool
	Drafter Drafter
}

// Work drafts the cards.
func (w *GenerateWorker) Work(ctx context.Context, job *river.Job[GenerateArgs]) error {
	owner, args := jobs.OwnerOf(job.JobRow), job.Args
	if args.MaxCards == 0 {
		args.MaxCards = 5
	}
	var ok bool
	if err := w.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM decks WHERE id = $2 AND user_id = $1)`,
		owner, args.DeckID).Scan(&ok); err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	paperStore := papers.New(w.Pool)
	title, abstract, err := paperStore.VisibleTitle(ctx, owner, args.PaperID)
	if errors.Is(err, papers.ErrNotFound) {
		ok = false
	} else if err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	if !ok {
		return jobs.NewPublicError("not_found", "The paper or the deck was not found.", nil)
	}
	body, err := paperStore.BodyPassages(ctx, args.PaperID, 0)
	if err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	var chunks []Passage
	for _, p := range body {
		chunks = append(chunks, Passage{ChunkID: p.ChunkID, Page: p.PageStart, Text: p.Text})
	}
	if len(chunks) == 0 {
		if abstract == "" {
			return jobs.NewPublicError("no_text", "The paper has no text yet: upload its PDF first.", nil)
		}
		chunks = []Passage{{Text: abstract}}
	}
	_ = jobs.ReportProgress(ctx, 0, 1, fmt.Sprintf("reading %d passages", len(chunks)))
	drafts, err := w.Drafter.DraftCards(ctx, title, chunks, args.MaxCards)
	if err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	batch := &pgx.Batch{}
	for _, d := range drafts {
		var chunkID, page any
		if d.ChunkID != uuid.Nil {
			chunkID, page = d.ChunkID, d.Page
		}
		batch.Queue(`INSERT INTO cards (user_id, deck_id, paper_id, chunk_id, page_number, card_type, front, back, tags, status)
			VALUES ($1, $2, $3, $4, $5, 'cloze', $6, $7, $8, 'draft')`,
			owner, args.DeckID, args.PaperID, chunkID, page, d.Front, d.Back, []string{"generated"})
	}
	if err := w.Pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("learning: generate: store drafts: %w", err)
	}
	_ = jobs.ReportProgress(ctx, 1, 1, fmt.Sprintf("%d drafts wait in the deck", len(drafts)))
	return jobs.SetResult(ctx, map[string]any{"drafts": len(drafts), "deck_id": args.DeckID})
}

// registerGenerate adds cards.generate, which any user may enqueue for themselves.
func registerGenerate(reg *jobs.Registry, pool *pgxpool.Pool, drafter Drafter) error {
	return jobs.Register(reg, jobs.KindSpec[GenerateArgs]{
		Worker:      &GenerateWorker{Pool: pool, Drafter: drafter},
		MaxAttempts: 2,
		Timeout:     5 * time.Minute,
		Enqueuers:   jobs.EnqueueUser,
	})
}
