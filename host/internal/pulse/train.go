package pulse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
)

// Trainer fits a user's classifier to their thumbs on the papers Pulse showed
// them, and stores it signed.
type Trainer struct {
	Store  *Store
	Papers *papers.Store
	// Key resolves the signing key when it is needed.
	Key func() ([]byte, error)
	Now func() time.Time
}

// TrainResult is what a training did, for the job's envelope.
type TrainResult struct {
	Trained   bool     `json:"trained"`
	Skipped   string   `json:"skipped,omitempty"`
	Samples   int      `json:"samples"`
	Positives int      `json:"positives"`
	Negatives int      `json:"negatives"`
	AUC       *float64 `json:"auc,omitempty"`
}

// Train fits and stores userID's classifier. Too little feedback is not an error:
// the result says why nothing was trained.
func (t *Trainer) Train(ctx context.Context, userID uuid.UUID) (TrainResult, error) {
	fb, err := t.Papers.FeedbackOf(ctx, userID, classifier.MaxExamples*2)
	if err != nil {
		return TrainResult{}, err
	}
	// The newest thumb on a paper is the user's word on it.
	seen := map[uuid.UUID]bool{}
	var latest []papers.Feedback
	var ids []uuid.UUID
	for _, f := range fb {
		if !seen[f.PaperID] {
			seen[f.PaperID] = true
			latest = append(latest, f)
			ids = append(ids, f.PaperID)
		}
	}
	shown, err := t.Store.ShownSignals(ctx, userID, ids)
	if err != nil {
		return TrainResult{}, err
	}
	var examples []classifier.Example
	for _, f := range latest {
		if sig, ok := shown[f.PaperID]; ok {
			examples = append(examples, classifier.Example{Signals: sig, Positive: f.Positive, At: f.At})
		}
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	m, err := classifier.Train(examples, now)
	var skip *classifier.SkipError
	if errors.As(err, &skip) {
		return TrainResult{Skipped: skip.Reason, Samples: len(examples)}, nil
	}
	if err != nil {
		return TrainResult{}, err
	}
	key, err := t.Key()
	if err != nil {
		return TrainResult{}, fmt.Errorf("pulse: train: %w", err)
	}
	blob, tag, err := classifier.Seal(m, userID, key)
	if err != nil {
		return TrainResult{}, err
	}
	metrics := map[string]any{"samples": m.Samples, "positives": m.Positives, "negatives": m.Negatives}
	if m.AUC != nil {
		metrics["auc"] = *m.AUC
	}
	if err := t.Store.SaveModel(ctx, userID, StoredModel{Blob: blob, Tag: tag, Version: classifier.Version, SampleCount: m.Samples}, metrics); err != nil {
		return TrainResult{}, err
	}
	set, err := t.Store.Settings(ctx, userID)
	if err != nil {
		return TrainResult{}, err
	}
	if !set.ClassifierOptIn {
		set.ClassifierOptIn = true
		if err := t.Store.PutSettings(ctx, userID, set); err != nil {
			return TrainResult{}, err
		}
	}
	return TrainResult{Trained: true, Samples: m.Samples, Positives: m.Positives, Negatives: m.Negatives, AUC: m.AUC}, nil
}

// UsersWithFeedback lists the users who gave Pulse enough thumbs to train on:
// the nightly training's work list.
func (s *Store) UsersWithFeedback(ctx context.Context) ([]uuid.UUID, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT user_id FROM pulse_cards GROUP BY user_id HAVING count(DISTINCT paper_id) >= $1`, classifier.MinExamples)
	if err != nil {
		return nil, fmt.Errorf("pulse: users to train: %w", err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pulse: users to train: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
