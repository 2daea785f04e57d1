package learning

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pdftext"
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

// GenerateWorker drafts cloze cards from a paper's own sentences: the builtin
// drafter, which needs no model. It picks sentences that carry the paper's most
// characteristic terms and blanks the strongest term; the drafts wait in the deck
// (status draft) for the user to accept, edit or drop.
type GenerateWorker struct {
	river.WorkerDefaults[GenerateArgs]
	Pool *pgxpool.Pool
}

type passage struct {
	chunkID uuid.UUID
	page    int
	text    string
}

// Work drafts the cards.
func (w *GenerateWorker) Work(ctx context.Context, job *river.Job[GenerateArgs]) error {
	owner, args := jobs.OwnerOf(job.JobRow), job.Args
	if args.MaxCards == 0 {
		args.MaxCards = 5
	}
	var ok bool
	if err := w.Pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM decks WHERE id = $2 AND user_id = $1)
		   AND EXISTS (SELECT 1 FROM papers p WHERE p.id = $3 AND `+papers.VisibleSQL+`)`, owner, args.DeckID, args.PaperID).Scan(&ok); err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	if !ok {
		return jobs.NewPublicError("not_found", "The paper or the deck was not found.", nil)
	}
	rows, err := w.Pool.Query(ctx, `
		SELECT id, page_start, content FROM paper_chunks
		 WHERE paper_id = $1 AND coalesce(lower(section), '') NOT IN ('references', 'bibliography', 'acknowledgements', 'acknowledgments')
		 ORDER BY chunk_index`, args.PaperID)
	if err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	chunks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (passage, error) {
		var p passage
		err := r.Scan(&p.chunkID, &p.page, &p.text)
		return p, err
	})
	if err != nil {
		return fmt.Errorf("learning: generate: %w", err)
	}
	if len(chunks) == 0 {
		var abstract string
		_ = w.Pool.QueryRow(ctx, `SELECT coalesce(abstract, '') FROM papers WHERE id = $1`, args.PaperID).Scan(&abstract)
		if abstract == "" {
			return jobs.NewPublicError("no_text", "The paper has no text yet: upload its PDF first.", nil)
		}
		chunks = []passage{{text: abstract}}
	}
	_ = jobs.ReportProgress(ctx, 0, 1, fmt.Sprintf("reading %d passages", len(chunks)))
	drafts := draftCloze(chunks, args.MaxCards)
	batch := &pgx.Batch{}
	for _, d := range drafts {
		var chunkID, page any
		if d.chunkID != uuid.Nil {
			chunkID, page = d.chunkID, d.page
		}
		batch.Queue(`INSERT INTO cards (user_id, deck_id, paper_id, chunk_id, page_number, card_type, front, back, tags, status)
			VALUES ($1, $2, $3, $4, $5, 'cloze', $6, $7, $8, 'draft')`,
			owner, args.DeckID, args.PaperID, chunkID, page, d.front, d.back, []string{"generated"})
	}
	if err := w.Pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("learning: generate: store drafts: %w", err)
	}
	_ = jobs.ReportProgress(ctx, 1, 1, fmt.Sprintf("%d drafts wait in the deck", len(drafts)))
	return jobs.SetResult(ctx, map[string]any{"drafts": len(drafts), "deck_id": args.DeckID, "drafter": "builtin-cloze"})
}

type draft struct {
	chunkID     uuid.UUID
	page        int
	front, back string
	score       float64
}

var (
	sentenceEnd = regexp.MustCompile(`[.!?]["”’)]?\s+`)
	wordRE      = regexp.MustCompile(`[\p{L}][\p{L}\p{N}-]*`)
)

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against all also among an and another any are as at be because been
		before being below between both but by can could did do does doing down during each either et al few for from further had
		has have having here how however if in into is it its itself more most much must no nor not now of off on once only or
		other our out over own paper per same section should show shown shows since so some such than that the their them then
		there these they this those through thus to too under until up upon use used using very via was we were what when where
		which while who whom why will with within without would yet you your figure table fig results result method methods
		approach based new given one two three first second however therefore although`) {
		stopwords[w] = true
	}
}

// draftCloze picks up to n sentences from the passages and turns each into a cloze
// card: the sentence with its most characteristic term blanked on the front, the
// term and the whole sentence on the back. A term is characteristic when it is
// frequent in this paper but not a common word (a within-paper tf weighting, with
// longer terms preferred); a sentence scores by its best term, and sentences of 10 to
// 45 words that read as prose are kept. Deterministic for the same text.
func draftCloze(passages []passage, n int) []draft {
	freq := map[string]int{}
	for _, p := range passages {
		for _, w := range wordRE.FindAllString(p.text, -1) {
			if lw := strings.ToLower(w); len(lw) >= 5 && !stopwords[lw] {
				freq[lw]++
			}
		}
	}
	weight := func(term string) float64 {
		f := freq[strings.ToLower(term)]
		if f < 2 {
			return 0
		}
		return math.Log1p(float64(f)) * math.Log(float64(len(term)))
	}
	var cands []draft
	seenTerm := map[string]bool{}
	for _, p := range passages {
		// Undo line-end hyphenation, ligatures and curly quotes, as quote checks do.
		text := pdftext.Normalize(strings.ReplaceAll(p.text, "\f", "\n"))
		for _, s := range splitSentences(text) {
			words := strings.Fields(s)
			if len(words) < 10 || len(words) > 45 || !prose(s) {
				continue
			}
			best, bestW := "", 0.0
			for _, w := range wordRE.FindAllString(s, -1) {
				if lw := strings.ToLower(w); len(lw) >= 5 && !stopwords[lw] {
					if wt := weight(w); wt > bestW {
						best, bestW = w, wt
					}
				}
			}
			if best == "" {
				continue
			}
			front := strings.Replace(s, best, "[...]", 1)
			cands = append(cands, draft{chunkID: p.chunkID, page: p.page, front: front,
				back: best + "\n\n" + s, score: bestW * (1 + 0.1*float64(min(len(words), 30))/30)})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var out []draft
	for _, c := range cands {
		term := strings.ToLower(strings.SplitN(c.back, "\n", 2)[0])
		if seenTerm[term] {
			continue // one card per term
		}
		seenTerm[term] = true
		out = append(out, c)
		if len(out) == n {
			break
		}
	}
	return out
}

func splitSentences(text string) []string {
	var out []string
	idx := sentenceEnd.FindAllStringIndex(text, -1)
	start := 0
	for _, m := range idx {
		out = append(out, strings.TrimSpace(text[start:m[1]]))
		start = m[1]
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// prose reports whether s reads as a sentence: mostly letters, few digits or
// symbols (equations, tables and reference lists fail).
func prose(s string) bool {
	letters, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsSpace(r), strings.ContainsRune(".,;:'\"()-", r):
		default:
			other++
		}
	}
	return letters > 0 && float64(other)/float64(letters) < 0.08
}

// registerGenerate adds cards.generate, which any user may enqueue for themselves.
func registerGenerate(reg *jobs.Registry, pool *pgxpool.Pool) error {
	return jobs.Register(reg, jobs.KindSpec[GenerateArgs]{
		Worker:      &GenerateWorker{Pool: pool},
		MaxAttempts: 2,
		Timeout:     5 * time.Minute,
		Enqueuers:   jobs.EnqueueUser,
	})
}
