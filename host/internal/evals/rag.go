// Package evals measures answer quality on labelled datasets kept in the
// repository: RAG citation precision and answer support on short written texts
// (RunRAG), evidence, page, abstention and citation figures on whole PDFs
// (RunFullText), the quote verifier's precision and recall (package quote), and
// Pulse's deck precision, coverage and diversity for a simulated reader against
// two baselines (RunPulse). `lectern eval` runs them; docs/benchmarks.md and
// docs/evals.md record the figures.
package evals

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/quote"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/users"
)

//go:embed data/rag.json
var ragSet []byte

// RAGSet is a RAG dataset: paper texts and questions about them.
type RAGSet struct {
	About     string        `json:"about"`
	Documents []RAGDocument `json:"documents"`
	Questions []RAGQuestion `json:"questions"`
}

// RAGDocument is one paper's text; a line that is a heading starts a section.
type RAGDocument struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// RAGQuestion is a question; Paper and Evidence name the sentence that answers it,
// Answerable false says no document does.
type RAGQuestion struct {
	Question   string `json:"question"`
	Paper      string `json:"paper"`
	Evidence   string `json:"evidence"`
	Answerable *bool  `json:"answerable"`
}

func (q RAGQuestion) answerable() bool { return q.Answerable == nil || *q.Answerable }

// LoadRAG reads a dataset from path, or the built-in one when path is "".
func LoadRAG(path string) (*RAGSet, error) {
	raw := ragSet
	if path != "" {
		var err error
		if raw, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	var set RAGSet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("evals: %s: %w", filepath.Base(path), err)
	}
	if len(set.Documents) == 0 || len(set.Questions) == 0 {
		return nil, fmt.Errorf("evals: the dataset has no documents or no questions")
	}
	return &set, nil
}

// RAGScores are the figures of one RAG run.
type RAGScores struct {
	Questions  int `json:"questions"`
	Answerable int `json:"answerable"`
	// Answered counts answerable questions that got an answer with citations.
	Answered int `json:"answered"`
	// Abstained counts unanswerable questions answered with no citation.
	Abstained int `json:"abstained"`
	Citations int `json:"citations"`
	// CorrectCitations cite a passage of the right paper that holds the evidence.
	CorrectCitations int `json:"correct_citations"`
	// Supported counts answers whose every cited statement is found in the passage
	// it cites (verbatim by the quote verifier).
	Supported int `json:"supported"`
	// CitationPrecision = CorrectCitations / Citations over answerable questions.
	CitationPrecision float64 `json:"citation_precision"`
	// SupportRate = Supported / answers with citations (all questions).
	SupportRate float64 `json:"support_rate"`
	// AnswerRate = Answered / Answerable; AbstentionRate = Abstained /
	// unanswerable questions.
	AnswerRate     float64  `json:"answer_rate"`
	AbstentionRate float64  `json:"abstention_rate"`
	Model          string   `json:"model"`
	Misses         []string `json:"misses,omitempty"`
}

// RunRAG loads the dataset's documents as one user's private papers into pool
// (which must be a throwaway database), asks every question through svc with the
// user's library as scope, and scores the answers.
func RunRAG(ctx context.Context, pool *pgxpool.Pool, svc *rag.Service, worker *ingest.Worker, set *RAGSet) (*RAGScores, error) {
	account, err := users.Create(ctx, pool, "eval@lectern.invalid", users.RoleUser)
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	user := account.ID
	papers := map[string]uuid.UUID{}
	texts := map[uuid.UUID]string{}
	for _, d := range set.Documents {
		id, err := loadDocument(ctx, pool, worker, user, d)
		if err != nil {
			return nil, fmt.Errorf("evals: document %s: %w", d.ID, err)
		}
		papers[d.ID], texts[id] = id, d.Text
	}
	s := &RAGScores{Questions: len(set.Questions)}
	answers := 0
	for _, q := range set.Questions {
		ans, err := svc.Ask(ctx, user, rag.Question{Question: q.Question, Scope: rag.ScopeLibrary}, func(string) error { return nil })
		if err != nil {
			return nil, fmt.Errorf("evals: %q: %w", q.Question, err)
		}
		s.Model = ans.Model
		chunks, err := citedText(ctx, pool, ans.Citations)
		if err != nil {
			return nil, err
		}
		if len(ans.Citations) > 0 {
			answers++
			if supported(ans.Text, chunks) {
				s.Supported++
			} else {
				s.Misses = append(s.Misses, "unsupported: "+q.Question)
			}
		}
		if !q.answerable() {
			if len(ans.Citations) == 0 {
				s.Abstained++
			} else {
				s.Misses = append(s.Misses, "answered the unanswerable: "+q.Question)
			}
			continue
		}
		s.Answerable++
		if len(ans.Citations) == 0 {
			s.Misses = append(s.Misses, "no answer: "+q.Question)
			continue
		}
		s.Answered++
		want := papers[q.Paper]
		for _, c := range ans.Citations {
			s.Citations++
			if c.PaperID == want && quote.NewIndex(chunks[c.Marker]).Verify(q.Evidence).Verified {
				s.CorrectCitations++
			} else {
				s.Misses = append(s.Misses, fmt.Sprintf("citation %s of %q holds no evidence", c.Marker, q.Question))
			}
		}
	}
	s.CitationPrecision = ratio(s.CorrectCitations, s.Citations)
	s.SupportRate = ratio(s.Supported, answers)
	s.AnswerRate = ratio(s.Answered, s.Answerable)
	s.AbstentionRate = ratio(s.Abstained, s.Questions-s.Answerable)
	return s, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

var heading = regexp.MustCompile(`^(?:\d+(?:\.\d+)*\.?\s+)?[A-Z][A-Za-z ]{2,40}$`)

// loadDocument stores a text as owner's private paper through the ingest worker
// (chunking and embedding as for a PDF), with sections at its heading lines.
func loadDocument(ctx context.Context, pool *pgxpool.Pool, w *ingest.Worker, owner uuid.UUID, d RAGDocument) (uuid.UUID, error) {
	doc := &pdftext.Document{Text: d.Text, Title: d.Title, Pages: []pdftext.Page{{Number: 1, Offset: 0, Text: d.Text}}}
	start := 0
	for off := 0; off < len(d.Text); {
		end := strings.IndexByte(d.Text[off:], '\n')
		if end < 0 {
			end = len(d.Text) - off
		}
		line := d.Text[off : off+end]
		if heading.MatchString(line) && !strings.HasSuffix(line, ".") && off > 0 {
			doc.Sections = append(doc.Sections, pdftext.Section{Kind: pdftext.KindBody, Start: start, End: off, Page: 1})
			start = off
		}
		off += end + 1
	}
	doc.Sections = append(doc.Sections, pdftext.Section{Kind: pdftext.KindBody, Start: start, End: len(d.Text), Page: 1})
	var id uuid.UUID
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		id, err = ingest.CreateUploadTx(ctx, tx, owner, d.Title, d.ID+".txt", strings.Repeat("0", 64), int64(len(d.Text)))
		return err
	})
	if err != nil {
		return uuid.Nil, err
	}
	worker := *w
	worker.Extract = func(context.Context, string, *pdftext.Opts) (*pdftext.Document, error) { return doc, nil }
	if worker.Logger == nil {
		worker.Logger = slog.New(slog.DiscardHandler)
	}
	_, err = worker.Ingest(ctx, ingest.Args{PaperID: id, SHA256: strings.Repeat("0", 64)}, owner, func(int, string) {})
	return id, err
}

// citedText returns the text of each cited passage by marker.
func citedText(ctx context.Context, pool *pgxpool.Pool, cites []rag.Citation) (map[string]string, error) {
	out := map[string]string{}
	store := papers.New(pool)
	for _, c := range cites {
		text, err := store.PassageText(ctx, c.ChunkID)
		if err != nil {
			return nil, fmt.Errorf("evals: %w", err)
		}
		out[c.Marker] = text
	}
	return out, nil
}

// supported reports whether every statement of answer that carries citations is
// found in a passage it cites: the words it rests on (rag.QuotedWords), checked
// by the quote verifier.
func supported(answer string, chunks map[string]string) bool {
	for _, c := range rag.Claims(answer) {
		claim, ok := rag.QuotedWords(c.Text), false
		for _, id := range c.IDs {
			if text, found := chunks[id]; found && quote.NewIndex(text).Verify(claim).Verified {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// String formats the scores as a short plain-text report.
func (s *RAGScores) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RAG eval (model %s): %d questions, %d answerable\n", s.Model, s.Questions, s.Answerable)
	fmt.Fprintf(&b, "  citation precision  %.3f  (%d of %d citations hold the evidence)\n", s.CitationPrecision, s.CorrectCitations, s.Citations)
	fmt.Fprintf(&b, "  answer support      %.3f  (cited statements found in their passages)\n", s.SupportRate)
	fmt.Fprintf(&b, "  answer rate         %.3f  (%d of %d answerable questions answered)\n", s.AnswerRate, s.Answered, s.Answerable)
	fmt.Fprintf(&b, "  abstention rate     %.3f  (%d of %d unanswerable questions declined)\n", s.AbstentionRate, s.Abstained, s.Questions-s.Answerable)
	for _, m := range s.Misses {
		fmt.Fprintf(&b, "  miss: %s\n", m)
	}
	return strings.TrimRight(b.String(), "\n")
}

// BuiltinStack is the host of a deployment with no model configured, over pool,
// built as lectern serve builds it (app.Build) with no plugins: the builtin
// extractive provider in process, the embedded vector store, and an ingest worker
// storing PDFs under dataDir/pdfs. `lectern eval rag` runs on its RAG service and
// ingest worker. Close it when done.
func BuiltinStack(ctx context.Context, pool *pgxpool.Pool, dataDir string, log *slog.Logger) (*app.App, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	vars := map[string]string{"LECTERN_DATA_DIR": dataDir}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		return nil, err
	}
	return app.Build(ctx, app.Options{Config: cfg, Pool: pool, Logger: log})
}
