// Package ingest turns an uploaded PDF into corpus text: the upload route stores
// the file and creates the paper in the uploader's library in one transaction with
// its ingest.pdf job; the job extracts the text (package pdftext), splits it into
// chunks with page numbers (package chunk), and stores text, chunks and citation
// edges in one transaction. A PDF that cannot be read fails the job with the reason
// and takes its paper with it, so nothing half-made stays behind.
package ingest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/chunk"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// Args are the arguments of an ingest.pdf job.
type Args struct {
	PaperID uuid.UUID `json:"paper_id"`
	SHA256  string    `json:"sha256"`
}

// Kind names the job.
func (Args) Kind() string { return "ingest.pdf" }

// Worker runs ingest.pdf.
type Worker struct {
	river.WorkerDefaults[Args]
	Pool   *pgxpool.Pool
	Store  *Store
	Logger *slog.Logger
	// Embedder and Vectors, when both are set, embed the stored passages into the
	// vector store as the job's last step.
	Embedder embedding.Embedder
	Vectors  vectorstore.Store
	// Extract is pdftext.ExtractFile; tests may replace it.
	Extract func(ctx context.Context, path string, opts *pdftext.Opts) (*pdftext.Document, error)
	// MaxPassages is the most passages one paper may make; a PDF that makes more
	// fails the job. Default chunk.DefaultMaxChunks (5,000).
	MaxPassages int
	// EmbedBatch is how many passages go to the embedder at once. Default 64.
	EmbedBatch int
	// EnrichTxFunc, when set, enqueues the follow-up that checks the paper's
	// record against the paper sources (paper.enrich, package enrich) for the
	// job's owner, in the transaction that stores the text, so it is never lost.
	EnrichTxFunc func(ctx context.Context, tx pgx.Tx, paperID, owner uuid.UUID) error
}

// reasons are what the owner reads when a PDF cannot be used.
var reasons = []struct {
	err  error
	code string
	text string
}{
	{pdftext.ErrMalformed, "pdf_malformed", "The PDF is damaged or cut short; upload it again or use another copy."},
	{pdftext.ErrEncrypted, "pdf_encrypted", "The PDF is protected by a password; upload an unprotected copy."},
	{pdftext.ErrEmpty, "pdf_empty", "The PDF has no pages."},
	{pdftext.ErrScanned, "pdf_scanned", "The PDF has no text layer (it is a scan); run OCR on it first, then upload the result."},
	{pdftext.ErrTooManyPages, "pdf_too_long", "The PDF has more than 500 pages."},
	{pdftext.ErrTooMuchText, "pdf_too_much_text", fmt.Sprintf("The PDF holds more text than Lectern reads from one paper (%d MB); split it or upload the article alone.", pdftext.DefaultMaxTextBytes>>20)},
}

// Outcome is what one ingest did.
type Outcome struct {
	Pages      int    `json:"pages"`
	Chunks     int    `json:"chunks"`
	Title      string `json:"title"`
	References int    `json:"references"`
}

// Work extracts, chunks and stores one paper's PDF (see Ingest).
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	out, err := w.Ingest(ctx, job.Args, jobs.OwnerOf(job.JobRow), func(step int, msg string) {
		_ = jobs.ReportProgress(ctx, int64(step), 4, msg)
	})
	if err != nil {
		return err
	}
	return jobs.SetResult(ctx, map[string]any{"paper_id": job.Args.PaperID, "pages": out.Pages, "chunks": out.Chunks,
		"title": out.Title, "references": out.References})
}

// Ingest reads the stored PDF of args, splits it and stores text, chunks and
// citation edges, reporting each step to progress. A PDF that cannot be read
// deletes the paper an upload by owner created (with its library row) and returns a
// jobs.PublicError with the reason; nothing of it stays.
func (w *Worker) Ingest(ctx context.Context, args Args, owner uuid.UUID, progress func(step int, msg string)) (Outcome, error) {
	extract := w.Extract
	if extract == nil {
		extract = pdftext.ExtractFile
	}
	progress(0, "reading the PDF")
	doc, err := extract(ctx, w.Store.Path(args.SHA256), nil)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		for _, r := range reasons {
			if errors.Is(err, r.err) {
				if derr := w.discard(ctx, args.PaperID, owner); derr != nil {
					return Outcome{}, derr
				}
				return Outcome{}, jobs.NewPublicError(r.code, r.text, err)
			}
		}
		return Outcome{}, fmt.Errorf("ingest: extract: %w", err)
	}
	progress(1, fmt.Sprintf("splitting %d pages into passages", len(doc.Pages)))
	chunks, err := chunk.Split(args.PaperID.String(), doc, &chunk.Config{MaxChunks: w.MaxPassages})
	if lim := (*chunk.ChunkLimitError)(nil); errors.As(err, &lim) {
		if derr := w.discard(ctx, args.PaperID, owner); derr != nil {
			return Outcome{}, derr
		}
		return Outcome{}, jobs.NewPublicError("pdf_too_many_passages", fmt.Sprintf(
			"The PDF makes more than %d passages, more than Lectern keeps for one paper; split it or upload the article alone.", lim.Limit), err)
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("ingest: chunk: %w", err)
	}
	progress(2, fmt.Sprintf("storing %d passages", len(chunks)))
	out := Outcome{Pages: len(doc.Pages), Chunks: len(chunks), Title: doc.Title, References: len(doc.References)}
	// The passages are embedded while PostgreSQL stores them; their vectors are
	// written once the text is committed.
	vectors := w.startEmbedding(ctx, args.PaperID, chunks)
	if err := w.save(ctx, args, owner, doc, chunks); errors.Is(err, errSameText) {
		vectors.abandon()
		progress(4, "done: the paper already has this PDF's text")
		return out, nil
	} else if err != nil {
		vectors.abandon()
		return Outcome{}, err
	}
	progress(3, fmt.Sprintf("embedding %d passages", len(chunks)))
	if err := vectors.store(ctx); err != nil {
		return Outcome{}, err
	}
	progress(4, "done")
	return out, nil
}

// discard removes the paper an upload created when its PDF is unusable: only a
// private upload of the job's owner, never a paper anyone else holds. Its PDF goes
// too, unless another paper refers to the same file.
func (w *Worker) discard(ctx context.Context, paperID, owner uuid.UUID) error {
	sum, err := papers.New(w.Pool).DiscardUpload(ctx, paperID, owner)
	if err != nil {
		return fmt.Errorf("ingest: discard unusable upload: %w", err)
	}
	if sum != "" {
		if err := w.Store.Release(ctx, w.Pool, sum); err != nil {
			w.Logger.WarnContext(ctx, "ingest: the unusable PDF stays on disk", "sha256", sum, "err", err)
		}
	}
	return nil
}

// errSameText is a job whose paper already holds the text of this very PDF: there
// is nothing to store.
var errSameText = errors.New("ingest: the paper already has this text")

// guardTx locks the paper and says whether the job may store this PDF's text on it
// (see docs/ownership.md, "Whose text a PDF becomes"). A paper anyone but the
// job's owner can read (public, instance-level, someone else's, or in someone
// else's library) is filled once, while it has no text; after that its text,
// chunks, vectors and identifiers stay. Only a private paper of the owner alone may
// be read again.
func guardTx(ctx context.Context, tx pgx.Tx, args Args, owner uuid.UUID) error {
	lock, err := papers.LockForTextTx(ctx, tx, args.PaperID, owner)
	switch {
	case errors.Is(err, papers.ErrNotFound):
		return jobs.NewPublicError("paper_gone", "The paper was deleted before its PDF was read.", nil)
	case err != nil:
		return fmt.Errorf("ingest: check paper: %w", err)
	case !lock.Shared || lock.SHA256 == nil:
		return nil
	case hex.EncodeToString(lock.SHA256) == args.SHA256:
		return errSameText
	}
	return jobs.NewPublicError("paper_has_text",
		"The paper already has its text, which other readers use, so it was left as it is; send your PDF's link to read your own private version.", nil)
}

func clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// keepLength makes s storable as text without moving a byte, so the offsets
// into it stay true: a NUL, which PostgreSQL text cannot hold, becomes a space.
func keepLength(s string) string { return strings.ReplaceAll(s, "\x00", " ") }

// save stores text, chunks and citation edges, and what the PDF says about itself
// (title, DOI, arXiv id where no other paper holds them), in one transaction.
func (w *Worker) save(ctx context.Context, args Args, owner uuid.UUID, doc *pdftext.Document, chunks []chunk.Chunk) error {
	offsets := make([]int32, len(doc.Pages))
	rawOffsets := make([]int32, len(doc.Pages))
	for i, p := range doc.Pages {
		offsets[i], rawOffsets[i] = int32(p.Offset), int32(p.RawOffset)
	}
	sum, _ := hex.DecodeString(args.SHA256)
	passages := make([]papers.ChunkParams, len(chunks))
	for i, c := range chunks {
		id, err := uuid.Parse(c.ID)
		if err != nil {
			return fmt.Errorf("ingest: store chunks: %w", err)
		}
		passages[i] = papers.ChunkParams{ID: id, Index: c.Index, Section: truncate(clean(c.Section), 500), Text: clean(c.Text),
			PageStart: c.PageStart, PageEnd: c.PageEnd, CharStart: c.Start, CharEnd: c.End,
			RawStart: c.RawStart, RawEnd: c.RawEnd, Tokens: c.Tokens}
	}
	return pgx.BeginFunc(ctx, w.Pool, func(tx pgx.Tx) error {
		if err := guardTx(ctx, tx, args, owner); err != nil {
			return err
		}
		text := papers.TextParams{Extractor: "pdftotext-bbox-layout", Content: clean(doc.Text), PageOffsets: offsets, SHA256: sum,
			RawContent: keepLength(doc.Raw), RawPageOffsets: rawOffsets, OffsetMap: doc.Map.Ints()}
		if err := papers.SaveTextTx(ctx, tx, args.PaperID, text, passages); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		for _, ref := range doc.References {
			doi := papers.NormalizeDOI(ref.DOI)
			arxiv, _, okArxiv := papers.NormalizeArxivID(ref.ArXivID)
			key := ""
			switch {
			case doi != "":
				key = "doi:" + doi
			case okArxiv:
				key = "arxiv:" + arxiv
			default:
				continue // only entries that name the work can become edges
			}
			if !okArxiv {
				arxiv = ""
			}
			c := papers.CitationParams{DOI: doi, ArxivID: arxiv, Context: truncate(clean(ref.Text), 4000), Key: key}
			if err := papers.AddCitationTx(ctx, tx, args.PaperID, c); err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
		}
		// What the PDF says about itself fills the placeholder fields of the owner's
		// own upload, when no other paper already holds the identifier.
		arxiv, version, _ := papers.NormalizeArxivID(doc.ArXivID)
		facts := papers.PDFFacts{Title: strings.Join(strings.Fields(clean(doc.Title)), " "),
			DOI: papers.NormalizeDOI(doc.DOI), ArxivID: arxiv, ArxivVersion: version,
			Abstract: clean(doc.Abstract), Year: doc.Year, Venue: clean(doc.Venue)}
		for _, a := range doc.Authors {
			facts.Authors = append(facts.Authors, papers.PDFAuthor{Name: clean(a.Name), Affiliation: clean(a.Affiliation), Email: clean(a.Email)})
		}
		if err := papers.ApplyPDFTx(ctx, tx, args.PaperID, facts); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		if w.EnrichTxFunc != nil {
			if err := w.EnrichTxFunc(ctx, tx, args.PaperID, owner); err != nil {
				return fmt.Errorf("ingest: enqueue the check against the sources: %w", err)
			}
		}
		return nil
	})
}

// defaultEmbedBatch is how many passages go to the embedder at once by default.
const defaultEmbedBatch = 64

// pendingVectors are a paper's passage vectors, computed in the background
// while its text is stored (startEmbedding), and written by store once the
// text is committed: a failure there leaves the paper searchable by words, and
// re-running the job embeds it again.
type pendingVectors struct {
	w       *Worker
	paperID uuid.UUID
	cancel  context.CancelFunc
	done    chan struct{}
	batches []vectorBatch
	err     error
}

// startEmbedding starts embedding the chunks as the job stores them (their text
// without NULs, under their ids). Every vector of the paper is made by one
// model: when the embed role changes between two batches, embedding starts over
// once under the new model (the corpus's embeddings.reembed, which that change
// enqueued, may have passed this paper already); a second change fails the job
// with ErrModelChanged. Without an embedder or a vector store it does nothing.
func (w *Worker) startEmbedding(ctx context.Context, paperID uuid.UUID, chunks []chunk.Chunk) *pendingVectors {
	p := &pendingVectors{w: w, paperID: paperID, done: make(chan struct{})}
	list := make([]passage, len(chunks))
	for i, c := range chunks {
		id, err := uuid.Parse(c.ID)
		if err != nil {
			close(p.done) // save refuses the chunks too
			return p
		}
		list[i] = passage{id: id, paper: paperID, text: clean(c.Text)}
	}
	if w.Embedder == nil || w.Vectors == nil {
		close(p.done)
		return p
	}
	ctx, p.cancel = context.WithCancel(ctx)
	go func() {
		defer close(p.done)
		p.batches, p.err = w.embedAll(ctx, paperID, list)
	}()
	return p
}

// abandon stops the embedding and waits for it: the text was not stored.
func (p *pendingVectors) abandon() {
	if p.cancel != nil {
		p.cancel()
	}
	<-p.done
}

// store waits for the vectors and replaces the paper's vectors with them.
func (p *pendingVectors) store(ctx context.Context) error {
	<-p.done
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	if p.err != nil {
		return p.err
	}
	if err := p.w.Vectors.DeletePaper(ctx, p.paperID); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	for _, b := range p.batches {
		if err := p.w.Vectors.Upsert(ctx, b.model, b.items); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	return nil
}

// embedAll embeds list in batches of EmbedBatch, all under one model, starting
// over once when the model changes between two batches.
func (w *Worker) embedAll(ctx context.Context, paperID uuid.UUID, list []passage) ([]vectorBatch, error) {
	for restarted := false; ; restarted = true {
		batches, err := w.embedBatches(ctx, list)
		if restarted || !errors.Is(err, ErrModelChanged) {
			return batches, err
		}
		if w.Logger != nil {
			w.Logger.InfoContext(ctx, "embedding model changed while embedding a paper; starting over", "paper", paperID, "error", err)
		}
	}
}

// embedBatches embeds list in batches of EmbedBatch, all under the model of the
// first batch.
func (w *Worker) embedBatches(ctx context.Context, list []passage) ([]vectorBatch, error) {
	size := w.EmbedBatch
	if size <= 0 {
		size = defaultEmbedBatch
	}
	model := ""
	var out []vectorBatch
	for start := 0; start < len(list); start += size {
		b, err := embedBatch(ctx, w.Embedder, model, list[start:min(start+size, len(list))])
		if err != nil {
			return nil, err
		}
		model = b.model
		out = append(out, b)
	}
	return out, nil
}

// passage is a stored chunk to embed.
type passage struct {
	id, paper uuid.UUID
	text      string
}

// ErrModelChanged is returned when one job's batches are embedded by different
// models: the embed role was reassigned while the job ran.
var ErrModelChanged = errors.New("ingest: the embedding model changed during the job")

// storeVectors embeds the passages with e and writes their vectors under the model
// that made them, which it returns. want, unless empty, is the model the job's
// earlier batches were stored under: vectors of another model are not stored, and
// the error wraps ErrModelChanged.
func storeVectors(ctx context.Context, e embedding.Embedder, vs vectorstore.Store, want string, batch []passage) (string, error) {
	b, err := embedBatch(ctx, e, want, batch)
	if err != nil {
		return "", err
	}
	if err := vs.Upsert(ctx, b.model, b.items); err != nil {
		return "", fmt.Errorf("ingest: %w", err)
	}
	return b.model, nil
}

// vectorBatch is one batch of passage vectors and the model that made them.
type vectorBatch struct {
	model string
	items []vectorstore.Item
}

// embedBatch embeds the passages with e. want, unless empty, is the model of the
// earlier batches: vectors of another model fail with ErrModelChanged.
func embedBatch(ctx context.Context, e embedding.Embedder, want string, batch []passage) (vectorBatch, error) {
	texts := make([]string, len(batch))
	for i, p := range batch {
		texts[i] = p.text
	}
	emb, err := e.Embed(ctx, texts)
	if err != nil {
		return vectorBatch{}, fmt.Errorf("ingest: embed: %w", err)
	}
	if want != "" && emb.Model != want {
		return vectorBatch{}, fmt.Errorf("%w: from %s to %s", ErrModelChanged, want, emb.Model)
	}
	if len(emb.Vectors) != len(batch) {
		return vectorBatch{}, fmt.Errorf("ingest: embed with %s: %d vectors for %d passages", emb.Model, len(emb.Vectors), len(batch))
	}
	items := make([]vectorstore.Item, len(batch))
	for i, p := range batch {
		items[i] = vectorstore.Item{ChunkID: p.id, PaperID: p.paper, Vector: emb.Vectors[i]}
	}
	return vectorBatch{model: emb.Model, items: items}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Queue is the job queue ingest.pdf runs on.
const Queue = "ingest"

// Workers is how many PDFs the host reads at once: one per core, at most 4.
// Extraction is CPU-bound (pdftotext), so more would only wait, and each reading
// holds up to about 64 MiB (docs/ingest.md, "Bounded extraction"): the ingest
// queue's share of the host's memory stays under Workers() × 64 MiB.
func Workers() int { return min(max(runtime.NumCPU(), 1), 4) }

// RegisterJobs adds ingest.pdf to reg; only the upload route enqueues it. One
// attempt: a PDF that cannot be read will not read better the second time, and the
// failed job tells the owner why (its paper is gone, so uploading again is clean).
func RegisterJobs(reg *jobs.Registry, w *Worker) error {
	return jobs.Register(reg, jobs.KindSpec[Args]{
		Worker:      w,
		Queue:       Queue,
		MaxAttempts: 1,
		Timeout:     10 * time.Minute,
	})
}
