package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
)

// ReembedArgs are the arguments of embeddings.reembed: embed every passage that
// has no vector of the current embedding model, then drop the vectors of other
// models. Changing the embed role enqueues it; an admin may enqueue it too.
type ReembedArgs struct{}

// Kind names the job.
func (ReembedArgs) Kind() string { return "embeddings.reembed" }

// reembedBatch is how many passages one round reads and embeds.
const reembedBatch = 256

// ReembedWorker runs embeddings.reembed.
type ReembedWorker struct {
	river.WorkerDefaults[ReembedArgs]
	Pool     *pgxpool.Pool
	Embedder embedding.Embedder
	Vectors  vectorstore.Store
	Logger   *slog.Logger
}

// ReembedResult is what one run did.
type ReembedResult struct {
	Model    string `json:"model"`
	Embedded int64  `json:"embedded"`
	Dropped  int64  `json:"old_vectors_dropped"`
}

// Work re-embeds (see Reembed) and records what it did.
func (w *ReembedWorker) Work(ctx context.Context, job *river.Job[ReembedArgs]) error {
	res, err := w.Reembed(ctx)
	if err != nil {
		return err
	}
	return jobs.SetResult(ctx, res)
}

// probeText is what Reembed embeds to learn the current model's name.
const probeText = "which model embeds this"

// Reembed embeds, in rounds, every passage without a vector of the current model,
// then drops the vectors of other models. The current model is the one that embeds
// a probe text first; a round embedded by another model (the embed role changed
// during the run) is not stored and fails the run with ErrModelChanged, and the
// next attempt works for the new model. A cancelled or failed run leaves every
// finished round stored, and the next run carries on where it stopped.
func (w *ReembedWorker) Reembed(ctx context.Context) (*ReembedResult, error) {
	probe, err := w.Embedder.Embed(ctx, []string{probeText})
	if err != nil {
		return nil, fmt.Errorf("ingest: reembed: %w", err)
	}
	model := probe.Model
	total, err := embedded.CountUnembedded(ctx, w.Pool, model)
	if err != nil {
		return nil, fmt.Errorf("ingest: reembed: %w", err)
	}
	done := int64(0)
	_ = jobs.ReportProgress(ctx, 0, total, fmt.Sprintf("embedding %d passages with %s", total, model))
	for {
		next, err := embedded.NextUnembedded(ctx, w.Pool, model, reembedBatch)
		if err != nil {
			return nil, fmt.Errorf("ingest: reembed: %w", err)
		}
		batch := make([]passage, len(next))
		for i, u := range next {
			batch[i] = passage{id: u.ChunkID, paper: u.PaperID, text: u.Text}
		}
		if len(batch) == 0 {
			break
		}
		if _, err := storeVectors(ctx, w.Embedder, w.Vectors, model, batch); err != nil {
			return nil, err
		}
		done += int64(len(batch))
		_ = jobs.ReportProgress(ctx, min(done, total), total, fmt.Sprintf("%d of %d passages embedded", done, total))
	}
	dropped, err := embedded.DropOtherModels(ctx, w.Pool, model)
	if err != nil {
		return nil, fmt.Errorf("ingest: reembed: %w", err)
	}
	if w.Logger != nil {
		w.Logger.InfoContext(ctx, "re-embedded the corpus", "model", model, "embedded", done, "old_vectors_dropped", dropped)
	}
	return &ReembedResult{Model: model, Embedded: done, Dropped: dropped}, nil
}

// RegisterReembed adds embeddings.reembed, which an admin may enqueue.
func RegisterReembed(reg *jobs.Registry, w *ReembedWorker) error {
	return jobs.Register(reg, jobs.KindSpec[ReembedArgs]{
		Worker:      w,
		Queue:       "ingest",
		MaxAttempts: 3,
		Timeout:     6 * time.Hour,
		Enqueuers:   jobs.EnqueueAdmin,
	})
}
