// Package learning is the spaced-repetition side of Lectern: a user's decks and
// cards, reviews scheduled by FSRS-6 (package fsrs), and offline reviews reconciled
// in time order. Everything here is per user.
package learning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

var (
	// ErrNotFound means no such deck or card for this user.
	ErrNotFound = errors.New("learning: not found")
	// ErrNotReviewable means the card is a draft or suspended.
	ErrNotReviewable = errors.New("learning: this card is not active")
	// ErrOutOfOrder means a review predates the card's last review.
	ErrOutOfOrder = errors.New("learning: the review is older than the card's last review")
)

// ParamsKey is the user_config key holding a user's fitted FSRS parameters (a JSON
// array of 21 numbers); without it the defaults schedule.
const ParamsKey = "fsrs.parameters"

// Deck is a user's deck with its scheduling settings.
type Deck struct {
	ID               uuid.UUID `json:"id"`
	Name             string    `json:"name"`
	Description      string    `json:"description,omitempty"`
	DesiredRetention float64   `json:"desired_retention"`
	MaximumInterval  int       `json:"maximum_interval_days"`
	Cards            int       `json:"cards"`
	Due              int       `json:"due"`
	CreatedAt        time.Time `json:"created_at"`
}

// Card is a user's card with its FSRS memory state.
type Card struct {
	ID          uuid.UUID  `json:"id"`
	DeckID      uuid.UUID  `json:"deck_id"`
	PaperID     *uuid.UUID `json:"paper_id,omitempty"`
	ChunkID     *uuid.UUID `json:"chunk_id,omitempty"`
	PageNumber  *int       `json:"page_number,omitempty"`
	CardType    string     `json:"card_type"`
	Front       string     `json:"front"`
	Back        string     `json:"back"`
	Tags        []string   `json:"tags"`
	Status      string     `json:"status"`
	BuriedUntil *time.Time `json:"buried_until,omitempty"`
	State       string     `json:"state"`
	Step        int        `json:"step"`
	Stability   *float64   `json:"stability,omitempty"`
	Difficulty  *float64   `json:"difficulty,omitempty"`
	DueAt       time.Time  `json:"due_at"`
	LastReview  *time.Time `json:"last_review_at,omitempty"`
	Reps        int        `json:"reps"`
	Lapses      int        `json:"lapses"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	// Next is what each rating would do now; filled on single-card reads.
	Next []NextInterval `json:"next,omitempty"`
}

// NextInterval is what one rating would do to a card.
type NextInterval struct {
	Rating   int       `json:"rating"`
	Label    string    `json:"label"`
	DueAt    time.Time `json:"due_at"`
	Interval string    `json:"interval"` // "10m", "3d"
	Seconds  int64     `json:"interval_seconds"`
}

var stateNames = []string{"new", "learning", "review", "relearning"}

const cardColumns = `c.id, c.deck_id, c.paper_id, c.chunk_id, c.page_number, c.card_type, c.front, c.back, c.tags, c.status,
	c.buried_until, c.fsrs_state, c.step, c.stability, c.difficulty, c.due_at, c.last_review_at, c.reps, c.lapses,
	c.created_at, c.updated_at`

func scanCard(row pgx.Row) (Card, error) {
	var c Card
	var state int16
	err := row.Scan(&c.ID, &c.DeckID, &c.PaperID, &c.ChunkID, &c.PageNumber, &c.CardType, &c.Front, &c.Back, &c.Tags,
		&c.Status, &c.BuriedUntil, &state, &c.Step, &c.Stability, &c.Difficulty, &c.DueAt, &c.LastReview, &c.Reps,
		&c.Lapses, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, ErrNotFound
	}
	if err == nil && int(state) < len(stateNames) {
		c.State = stateNames[state]
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	return c, err
}

// fsrsCard is the scheduler's view of a stored card.
func (c Card) fsrsCard() fsrs.Card {
	fc := fsrs.Card{Step: c.Step, Due: c.DueAt}
	for i, n := range stateNames {
		if n == c.State {
			fc.State = fsrs.State(i)
		}
	}
	if c.Stability != nil {
		fc.Stability = *c.Stability
	}
	if c.Difficulty != nil {
		fc.Difficulty = *c.Difficulty
	}
	if c.LastReview != nil {
		fc.LastReview = *c.LastReview
	}
	return fc
}

// Store reads and writes decks, cards and reviews.
type Store struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// New returns a Store.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool, now: time.Now} }

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// scheduler builds the FSRS scheduler for one of the user's decks: the deck's
// retention and maximum interval, the user's fitted parameters when they have any.
func scheduler(ctx context.Context, q querier, userID, deckID uuid.UUID) (*fsrs.Scheduler, error) {
	var retention float64
	var maxInterval int
	var raw []byte
	err := q.QueryRow(ctx, `
		SELECT d.desired_retention, d.maximum_interval,
		       (SELECT value::text FROM user_config WHERE user_id = $1 AND key = $3)
		  FROM decks d WHERE d.id = $2 AND d.user_id = $1`, userID, deckID, ParamsKey).Scan(&retention, &maxInterval, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("learning: deck settings: %w", err)
	}
	cfg := fsrs.DefaultSchedulerConfig()
	cfg.DesiredRetention, cfg.MaximumInterval = retention, maxInterval
	if raw != nil {
		var p fsrs.Params
		if json.Unmarshal(raw, &p) == nil && p.Validate() == nil {
			cfg.Params = p
		}
	}
	return fsrs.NewScheduler(cfg)
}

// preview fills c.Next with the four ratings' outcomes at now.
func preview(s *fsrs.Scheduler, c *Card, now time.Time) error {
	out, err := s.Preview(c.fsrsCard(), now)
	if err != nil {
		return err
	}
	c.Next = make([]NextInterval, 0, 4)
	for _, o := range out {
		c.Next = append(c.Next, NextInterval{Rating: int(o.Rating), Label: o.Rating.String(), DueAt: o.Card.Due,
			Interval: humanInterval(o.Interval), Seconds: int64(o.Interval.Seconds())})
	}
	return nil
}

func humanInterval(d time.Duration) string {
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d.Round(time.Hour).Hours()))
	case d < 365*24*time.Hour:
		return fmt.Sprintf("%dd", int(d.Round(24*time.Hour).Hours()/24))
	}
	return fmt.Sprintf("%.1fy", d.Hours()/24/365)
}

// ReviewInput is one answer.
type ReviewInput struct {
	CardID     uuid.UUID
	Rating     int
	DurationMS *int
	ReviewedAt time.Time // zero: now
	ClientID   string    // idempotency key; empty: none
}

// ReviewResult is the card after a review, and whether the review was new.
type ReviewResult struct {
	Card      Card   `json:"card"`
	Duplicate bool   `json:"duplicate"`
	ClientID  string `json:"client_id,omitempty"`
}

// ReviewTx applies one review inside tx: it locks the card, schedules it with
// FSRS, logs the review (state before and after, elapsed and scheduled days) and
// counts it in the day's log. A review with a client id already applied is a
// duplicate and changes nothing.
func ReviewTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, in ReviewInput, now time.Time) (ReviewResult, error) {
	if in.ClientID != "" {
		var cardID uuid.UUID
		err := tx.QueryRow(ctx, `SELECT card_id FROM review_logs WHERE user_id = $1 AND client_id = $2`, userID, in.ClientID).Scan(&cardID)
		if err == nil {
			c, err := scanCard(tx.QueryRow(ctx, `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2`, cardID, userID))
			return ReviewResult{Card: c, Duplicate: true, ClientID: in.ClientID}, err
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return ReviewResult{}, fmt.Errorf("learning: review: %w", err)
		}
	}
	c, err := scanCard(tx.QueryRow(ctx, `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2 FOR UPDATE`, in.CardID, userID))
	if err != nil {
		return ReviewResult{}, err
	}
	if c.Status == "draft" || c.Status == "suspended" {
		return ReviewResult{}, ErrNotReviewable
	}
	at := in.ReviewedAt
	if at.IsZero() {
		at = now
	}
	if c.LastReview != nil && at.Before(*c.LastReview) {
		return ReviewResult{}, ErrOutOfOrder
	}
	s, err := scheduler(ctx, tx, userID, c.DeckID)
	if err != nil {
		return ReviewResult{}, err
	}
	before := c.fsrsCard()
	after, log, err := s.Review(before, fsrs.Rating(in.Rating), at)
	if err != nil {
		return ReviewResult{}, err
	}
	var stabBefore, diffBefore any
	if before.Stability > 0 {
		stabBefore, diffBefore = before.Stability, before.Difficulty
	}
	lapse := 0
	if before.State == fsrs.StateReview && in.Rating == int(fsrs.Again) {
		lapse = 1
	}
	var clientID any
	if in.ClientID != "" {
		clientID = in.ClientID
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO review_logs (user_id, card_id, rating, reviewed_at, duration_ms, state_before, state_after,
		                         stability_before, stability_after, difficulty_before, difficulty_after,
		                         elapsed_days, scheduled_days, client_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		userID, c.ID, in.Rating, at, in.DurationMS, int(before.State), int(after.State), stabBefore, after.Stability,
		diffBefore, after.Difficulty, float64(log.ElapsedDays), log.Interval.Hours()/24, clientID); err != nil {
		return ReviewResult{}, fmt.Errorf("learning: log review: %w", err)
	}
	status, buried := c.Status, c.BuriedUntil
	if status == "buried" {
		status, buried = "active", nil // answering a buried card unburies it
	}
	c, err = scanCard(tx.QueryRow(ctx, `
		UPDATE cards c SET fsrs_state = $3, step = $4, stability = $5, difficulty = $6, due_at = $7, last_review_at = $8,
		       reps = reps + 1, lapses = lapses + $9, status = $10, buried_until = $11, updated_at = now()
		 WHERE c.id = $1 AND c.user_id = $2
		RETURNING `+cardColumns, c.ID, userID, int(after.State), after.Step, after.Stability, after.Difficulty, after.Due,
		at, lapse, status, buried))
	if err != nil {
		return ReviewResult{}, fmt.Errorf("learning: schedule card: %w", err)
	}
	duration := 0
	if in.DurationMS != nil {
		duration = *in.DurationMS
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO daily_log (user_id, log_date, cards_reviewed, review_ms)
		VALUES ($1, ($2::timestamptz AT TIME ZONE (SELECT timezone FROM users WHERE id = $1))::date, 1, $3)
		ON CONFLICT (user_id, log_date) DO UPDATE SET cards_reviewed = daily_log.cards_reviewed + 1,
		       review_ms = daily_log.review_ms + $3, updated_at = now()`, userID, at, duration); err != nil {
		return ReviewResult{}, fmt.Errorf("learning: daily log: %w", err)
	}
	return ReviewResult{Card: c, ClientID: in.ClientID}, nil
}
