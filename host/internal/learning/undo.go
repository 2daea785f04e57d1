package learning

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/fsrs"
	"github.com/lectern-research/lectern/host/internal/users"
)

// ErrNotLastReview means a later review of the card exists: only a card's latest
// review can be undone, so that undoing never rewrites history under another.
var ErrNotLastReview = errors.New("learning: a later review of this card exists; undo that one first")

// loggedReview is what the review log holds of one review.
type loggedReview struct {
	id               uuid.UUID
	rating           int
	reviewedAt       time.Time
	durationMS       *int
	stateBefore      int16
	stabilityBefore  *float64
	difficultyBefore *float64
	scheduledDays    float64
}

// UndoReview takes back one of the user's reviews, the latest of its card, in one
// transaction: the log row goes, the day's count loses it, and the card returns
// to the state it was in before (see undoTx). ErrNotFound for a review that is
// not the user's, ErrNotLastReview when the card was reviewed again since.
func (s *Store) UndoReview(ctx context.Context, userID, reviewID uuid.UUID) (Card, error) {
	var c Card
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		c, err = undoTx(ctx, tx, userID, reviewID)
		return err
	})
	if err != nil {
		return Card{}, err
	}
	return c, nil
}

// undoTx restores the card as it was before the review. The log keeps the state,
// stability and difficulty before each review; the rest is read back from the
// card's earlier reviews: the last review time and the due time are the previous
// review's time and that time plus its scheduled interval (the card's creation for
// a first review), the learning step is replayed over the card's ratings
// (fsrs.Scheduler.StepAfter), reps lose one and lapses the one this review
// counted. A buried card stays unburied: burying is not a review.
func undoTx(ctx context.Context, tx pgx.Tx, userID, reviewID uuid.UUID) (Card, error) {
	var cardID uuid.UUID
	err := tx.QueryRow(ctx, `SELECT card_id FROM review_logs WHERE id = $1 AND user_id = $2`, reviewID, userID).Scan(&cardID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Card{}, ErrNotFound
	}
	if err != nil {
		return Card{}, fmt.Errorf("learning: undo: %w", err)
	}
	// The card is locked first, as ReviewTx locks it, so an undo and a review of
	// the same card take turns.
	c, err := scanCard(tx.QueryRow(ctx, `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2 FOR UPDATE`, cardID, userID))
	if err != nil {
		return Card{}, err
	}
	var timezone string
	var history []loggedReview
	b := &pgx.Batch{}
	b.Queue(`SELECT id, rating, reviewed_at, duration_ms, state_before, stability_before, difficulty_before, scheduled_days
		  FROM review_logs WHERE card_id = $1 AND user_id = $2 ORDER BY reviewed_at, created_at, id`, cardID, userID).
		Query(func(rows pgx.Rows) error {
			var err error
			history, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (loggedReview, error) {
				var l loggedReview
				err := row.Scan(&l.id, &l.rating, &l.reviewedAt, &l.durationMS, &l.stateBefore, &l.stabilityBefore,
					&l.difficultyBefore, &l.scheduledDays)
				return l, err
			})
			return err
		})
	users.QueueTimezone(b, userID, &timezone)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return Card{}, fmt.Errorf("learning: undo: %w", err)
	}
	last := history[len(history)-1]
	if last.id != reviewID {
		return Card{}, ErrNotLastReview
	}
	sch, err := fsrs.NewScheduler(fsrs.DefaultSchedulerConfig())
	if err != nil {
		return Card{}, err
	}
	step, lastReview, due := 0, (*time.Time)(nil), c.CreatedAt
	for _, l := range history[:len(history)-1] {
		step = sch.StepAfter(fsrs.State(l.stateBefore), step, fsrs.Rating(l.rating))
		at := l.reviewedAt
		lastReview = &at
		due = at.Add(time.Duration(math.Round(l.scheduledDays*24*3600*1e6)) * time.Microsecond)
	}
	lapse := 0
	if last.stateBefore == int16(fsrs.StateReview) && last.rating == int(fsrs.Again) {
		lapse = 1
	}
	if _, err := tx.Exec(ctx, `DELETE FROM review_logs WHERE id = $1 AND user_id = $2`, reviewID, userID); err != nil {
		return Card{}, fmt.Errorf("learning: undo: %w", err)
	}
	c, err = scanCard(tx.QueryRow(ctx, `
		UPDATE cards c SET fsrs_state = $3, step = $4, stability = $5, difficulty = $6, due_at = $7, last_review_at = $8,
		       reps = greatest(reps - 1, 0), lapses = greatest(lapses - $9, 0), updated_at = now()
		 WHERE c.id = $1 AND c.user_id = $2
		RETURNING `+cardColumns, cardID, userID, last.stateBefore, step, last.stabilityBefore, last.difficultyBefore,
		due, lastReview, lapse))
	if err != nil {
		return Card{}, fmt.Errorf("learning: undo: restore card: %w", err)
	}
	duration := 0
	if last.durationMS != nil {
		duration = *last.durationMS
	}
	if _, err := tx.Exec(ctx, `
		UPDATE daily_log SET cards_reviewed = greatest(cards_reviewed - 1, 0), review_ms = greatest(review_ms - $3, 0),
		       updated_at = now()
		 WHERE user_id = $1 AND log_date = ($2::timestamptz AT TIME ZONE $4::text)::date`,
		userID, last.reviewedAt, duration, timezone); err != nil {
		return Card{}, fmt.Errorf("learning: undo: daily log: %w", err)
	}
	return c, nil
}
