package learning

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/fsrs"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

// OptimizeArgs are the arguments of fsrs.optimize: none, the job fits its owner's
// parameters.
type OptimizeArgs struct{}

// Kind names the job.
func (OptimizeArgs) Kind() string { return "fsrs.optimize" }

// OptimizeResult is what fsrs.optimize records on its envelope.
type OptimizeResult struct {
	Reviews int       `json:"reviews"`
	Cards   int       `json:"cards"`
	Skipped bool      `json:"skipped"` // too few reviews to fit
	Default Metrics   `json:"default"`
	Fitted  Metrics   `json:"fitted"`
	Applied bool      `json:"applied"` // the fitted parameters now schedule this user's cards
	Params  []float64 `json:"parameters,omitempty"`
}

// Metrics are a parameter set's scores on the user's review history.
type Metrics struct {
	LogLoss  float64 `json:"log_loss"`
	RMSEBins float64 `json:"rmse_bins"`
}

// OptimizeWorker fits a user's FSRS parameters to their review history and applies
// them only when they predict the history better than the parameters in use.
type OptimizeWorker struct {
	river.WorkerDefaults[OptimizeArgs]
	Pool *pgxpool.Pool
}

// Work runs one fit for the job's owner.
func (w *OptimizeWorker) Work(ctx context.Context, job *river.Job[OptimizeArgs]) error {
	owner := jobs.OwnerOf(job.JobRow)
	if owner == uuid.Nil {
		return jobs.NewPublicError("no_owner", "fsrs.optimize fits one user's parameters; enqueue it as that user.", nil)
	}
	_ = jobs.ReportProgress(ctx, 0, 3, "reading your review history")
	store := New(w.Pool)
	reviews, err := store.ReviewHistory(ctx, owner)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_ = jobs.ReportProgress(ctx, 1, 3, fmt.Sprintf("fitting to %d reviews", len(reviews)))
	initial := fsrs.DefaultParams()
	raw, err := userconfig.PlainValue(ctx, w.Pool, owner, ParamsKey)
	if err == nil && raw != nil {
		var p fsrs.Params
		if json.Unmarshal(raw, &p) == nil && p.Validate() == nil {
			initial = p
		}
	}
	params, rep, err := fsrs.Fit(reviews, fsrs.FitOptions{Initial: initial})
	if err != nil {
		return jobs.NewPublicError("fit_failed", "Your review history could not be fitted: "+err.Error(), err)
	}
	res := OptimizeResult{Reviews: rep.Reviews, Cards: rep.Cards, Skipped: rep.Skipped,
		Default: Metrics{rep.Default.LogLoss, rep.Default.RMSEBins}, Fitted: Metrics{rep.Fitted.LogLoss, rep.Fitted.RMSEBins}}
	if rep.Better {
		_ = jobs.ReportProgress(ctx, 2, 3, "saving the better parameters")
		value, _ := json.Marshal(params)
		if err := userconfig.PutPlainValue(ctx, w.Pool, owner, ParamsKey, value); err != nil {
			return fmt.Errorf("learning: optimize: save parameters: %w", err)
		}
		res.Applied, res.Params = true, params[:]
	}
	_ = jobs.ReportProgress(ctx, 3, 3, "done")
	return jobs.SetResult(ctx, res)
}

// RegisterJobs adds the learning area's job kinds to reg: fsrs.optimize and
// cards.generate, which any user may enqueue for themselves.
func RegisterJobs(reg *jobs.Registry, pool *pgxpool.Pool, drafter Drafter) error {
	if err := registerGenerate(reg, pool, drafter); err != nil {
		return err
	}
	return jobs.Register(reg, jobs.KindSpec[OptimizeArgs]{
		Worker:      &OptimizeWorker{Pool: pool},
		MaxAttempts: 1,
		Timeout:     10 * time.Minute,
		Enqueuers:   jobs.EnqueueUser,
	})
}

// ReviewHistory returns every review of the user, oldest first: what the optimizer
// fits parameters to.
func (s *Store) ReviewHistory(ctx context.Context, userID uuid.UUID) ([]fsrs.Review, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT card_id::text, rating, reviewed_at, coalesce(duration_ms, 0)
		  FROM review_logs WHERE user_id = $1 ORDER BY reviewed_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("learning: optimize: %w", err)
	}
	reviews, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fsrs.Review, error) {
		var rv fsrs.Review
		var rating int16
		var ms int64
		err := r.Scan(&rv.CardID, &rating, &rv.Time, &ms)
		rv.Rating, rv.Duration = fsrs.Rating(rating), time.Duration(ms)*time.Millisecond
		return rv, err
	})
	if err != nil {
		return nil, fmt.Errorf("learning: optimize: %w", err)
	}
	return reviews, nil
}
