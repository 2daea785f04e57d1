// Package learning is the spaced-repetition side of Lectern: a user's decks and
// cards, reviews scheduled by FSRS-6 (package fsrs), and offline reviews reconciled
// in time order. Everything here is per user.
package learning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/fsrs"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/users"
)

var (
	// ErrNotFound means no such deck or card for this user.
	ErrNotFound = errors.New("learning: not found")
	// ErrNotReviewable means the card is a draft or suspended.
	ErrNotReviewable = errors.New("learning: this card is not active")
	// ErrOutOfOrder means a review predates the card's last review.
	ErrOutOfOrder = errors.New("learning: the review is older than the card's last review")
	// ErrDeckExists means the user has a deck of that name already.
	ErrDeckExists = errors.New("learning: a deck with this name exists already")
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
	// Source is the sentence the card was made from and where it is in its
	// paper; filled on single-card reads of a card made from a paper.
	Source *Source `json:"source,omitempty"`
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

// New returns a Store on the wall clock.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool, now: time.Now} }

// WithClock returns the store reading the time from now instead of the wall
// clock: the time reviews are recorded at and cards are due by. Tests move it
// past a learning step instead of waiting minutes.
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// batcher is a pool or a transaction: what runs the batches of this package.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// scheduler builds the FSRS scheduler for one of the user's decks: the deck's
// retention and maximum interval, the user's fitted parameters when they have any.
// Both are read in one round trip.
func scheduler(ctx context.Context, q batcher, userID, deckID uuid.UUID) (*fsrs.Scheduler, error) {
	b := &pgx.Batch{}
	build := queueScheduler(b, userID, deckID, false)
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return build()
}

// queueScheduler queues on b the reads a deck's scheduler needs, the deck named by
// id, or with byCard the deck of the card id; once the batch has run, build returns
// the scheduler. A deck (or card) that is not the user's fails the batch with
// ErrNotFound.
func queueScheduler(b *pgx.Batch, userID, id uuid.UUID, byCard bool) (build func() (*fsrs.Scheduler, error)) {
	var retention float64
	var maxInterval int
	var raw json.RawMessage
	deck := `SELECT d.desired_retention, d.maximum_interval FROM decks d WHERE d.id = $2 AND d.user_id = $1`
	if byCard {
		deck = `SELECT d.desired_retention, d.maximum_interval FROM cards c JOIN decks d ON d.id = c.deck_id
		         WHERE c.id = $2 AND c.user_id = $1 AND d.user_id = $1`
	}
	b.Queue(deck, userID, id).
		QueryRow(func(row pgx.Row) error {
			err := row.Scan(&retention, &maxInterval)
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			if err != nil {
				return fmt.Errorf("learning: deck settings: %w", err)
			}
			return nil
		})
	userconfig.QueuePlainValue(b, userID, ParamsKey, &raw)
	return func() (*fsrs.Scheduler, error) { return newScheduler(retention, maxInterval, raw) }
}

// newScheduler is a deck's scheduler: its retention and maximum interval, and the
// user's fitted parameters (raw, their stored JSON) when they are valid.
func newScheduler(retention float64, maxInterval int, raw json.RawMessage) (*fsrs.Scheduler, error) {
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
	Card Card `json:"card"`
	// ReviewID names the logged review, which POST /api/reviews/{id}/undo takes
	// back; for a duplicate, the review applied first.
	ReviewID  uuid.UUID `json:"review_id"`
	Duplicate bool      `json:"duplicate"`
	ClientID  string    `json:"client_id,omitempty"`
}

// ReviewTx applies one review inside tx: it locks the card, schedules it with
// FSRS, logs the review (state before and after, elapsed and scheduled days) and
// counts it in the day's log. A review with a client id already applied is a
// duplicate and changes nothing, also when both copies arrive at once.
func ReviewTx(ctx context.Context, tx pgx.Tx, userID uuid.UUID, in ReviewInput, now time.Time) (ReviewResult, error) {
	// One round trip: the card, locked; then, under its lock, whether this review
	// was applied already (the same review sent twice at once, by a client that
	// retries, waits here for the first copy and then finds it); the user's time
	// zone (for the day's log); and the card's deck's scheduler settings. The
	// statements of a batch run in order, each seeing what committed before it.
	var c Card
	var timezone string
	dup, dupReview := uuid.Nil, uuid.Nil
	b := &pgx.Batch{}
	b.Queue(`SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2 FOR UPDATE`, in.CardID, userID).
		QueryRow(func(row pgx.Row) error {
			var err error
			c, err = scanCard(row)
			return err
		})
	if in.ClientID != "" {
		b.Queue(`SELECT card_id, id FROM review_logs WHERE user_id = $1 AND client_id = $2`, userID, in.ClientID).
			QueryRow(func(row pgx.Row) error {
				if err := row.Scan(&dup, &dupReview); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("learning: review: %w", err)
				}
				return nil
			})
	}
	users.QueueTimezone(b, userID, &timezone)
	build := queueScheduler(b, userID, in.CardID, true)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return ReviewResult{}, err
	}
	if dup != uuid.Nil {
		if dup == c.ID {
			return ReviewResult{Card: c, ReviewID: dupReview, Duplicate: true, ClientID: in.ClientID}, nil
		}
		c, err := scanCard(tx.QueryRow(ctx, `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2`, dup, userID))
		return ReviewResult{Card: c, ReviewID: dupReview, Duplicate: true, ClientID: in.ClientID}, err
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
	s, err := build()
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
	var reviewID uuid.UUID
	if err := tx.QueryRow(ctx, `
		INSERT INTO review_logs (user_id, card_id, rating, reviewed_at, duration_ms, state_before, state_after,
		                         stability_before, stability_after, difficulty_before, difficulty_after,
		                         elapsed_days, scheduled_days, client_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
		userID, c.ID, in.Rating, at, in.DurationMS, int(before.State), int(after.State), stabBefore, after.Stability,
		diffBefore, after.Difficulty, float64(log.ElapsedDays), log.Interval.Hours()/24, clientID).Scan(&reviewID); err != nil {
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
		VALUES ($1, ($2::timestamptz AT TIME ZONE $4::text)::date, 1, $3)
		ON CONFLICT (user_id, log_date) DO UPDATE SET cards_reviewed = daily_log.cards_reviewed + 1,
		       review_ms = daily_log.review_ms + $3, updated_at = now()`, userID, at, duration, timezone); err != nil {
		return ReviewResult{}, fmt.Errorf("learning: daily log: %w", err)
	}
	return ReviewResult{Card: c, ReviewID: reviewID, ClientID: in.ClientID}, nil
}

// Review applies one review in its own transaction (ReviewTx).
func (s *Store) Review(ctx context.Context, userID uuid.UUID, in ReviewInput, now time.Time) (ReviewResult, error) {
	var res ReviewResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		res, err = ReviewTx(ctx, tx, userID, in, now)
		return err
	})
	return res, err
}

// BatchItem is the outcome of one offline review.
type BatchItem struct {
	ClientID string `json:"client_id"`
	Status   string `json:"status"` // applied, duplicate, rejected
	Card     *Card  `json:"card,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ReviewBatch applies reviews captured offline in time order, in one transaction,
// and answers one item per review in the order given. A client id seen before is a
// duplicate and changes nothing. A review that cannot apply (unknown or inactive
// card, older than the card's last review) is rejected on its own, under its own
// savepoint, and the rest go on; any other error undoes the whole batch.
func (s *Store) ReviewBatch(ctx context.Context, userID uuid.UUID, ins []ReviewInput, now time.Time) ([]BatchItem, error) {
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return ins[order[x]].ReviewedAt.Before(ins[order[y]].ReviewedAt) })
	results := make([]BatchItem, len(ins))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, i := range order {
			var res ReviewResult
			err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
				var err error
				res, err = ReviewTx(ctx, sp, userID, ins[i], now)
				return err
			})
			item := BatchItem{ClientID: ins[i].ClientID}
			switch {
			case err == nil && res.Duplicate:
				item.Status, item.Card = "duplicate", &res.Card
			case err == nil:
				item.Status, item.Card = "applied", &res.Card
			case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotReviewable), errors.Is(err, ErrOutOfOrder):
				item.Status, item.Error = "rejected", err.Error()
			default:
				return err
			}
			results[i] = item
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// ---- decks ----

// Decks returns the user's decks by name, with card and due counts.
func (s *Store) Decks(ctx context.Context, userID uuid.UUID) ([]Deck, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT d.id, d.name, coalesce(d.description, ''), d.desired_retention, d.maximum_interval,
		       (SELECT count(*) FROM cards c WHERE c.deck_id = d.id),
		       (SELECT count(*) FROM cards c WHERE c.deck_id = d.id AND c.status = 'active' AND c.due_at <= now()),
		       d.created_at
		  FROM decks d WHERE d.user_id = $1 ORDER BY d.name`, userID)
	if err != nil {
		return nil, fmt.Errorf("learning: decks: %w", err)
	}
	decks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Deck, error) {
		var d Deck
		var ret float32
		err := row.Scan(&d.ID, &d.Name, &d.Description, &ret, &d.MaximumInterval, &d.Cards, &d.Due, &d.CreatedAt)
		d.DesiredRetention = float64(int(float64(ret)*1000+0.5)) / 1000
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("learning: decks: %w", err)
	}
	if decks == nil {
		decks = []Deck{}
	}
	return decks, nil
}

// DeckParams are a new deck's settings, already checked.
type DeckParams struct {
	Name             string
	Description      string
	DesiredRetention float64
	MaximumInterval  int
}

// CreateDeck adds a deck for the user; a name the user has already is ErrDeckExists.
// The deck comes back with the settings as given.
func (s *Store) CreateDeck(ctx context.Context, userID uuid.UUID, p DeckParams) (Deck, error) {
	d := Deck{Name: p.Name, Description: p.Description, DesiredRetention: p.DesiredRetention, MaximumInterval: p.MaximumInterval}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO decks (user_id, name, description, desired_retention, maximum_interval)
		VALUES ($1, $2, nullif($3, ''), $4, $5) RETURNING id, created_at`,
		userID, p.Name, p.Description, storableRetention(p.DesiredRetention), p.MaximumInterval).Scan(&d.ID, &d.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return Deck{}, ErrDeckExists
	}
	if err != nil {
		return Deck{}, fmt.Errorf("learning: create deck: %w", err)
	}
	return d, nil
}

// storableRetention is ret as the decks.desired_retention column (a real) can hold
// it. The nearest reals to 0.70 and 0.99 lie just outside the column's check of
// 0.7 to 0.99, so the two ends of the range are stored as the nearest reals inside.
func storableRetention(ret float64) float64 {
	lo, hi := math.Nextafter32(0.7, 1), math.Nextafter32(0.99, 0)
	return float64(min(max(float32(ret), lo), hi))
}

// HasDeck reports whether deckID is one of the user's decks.
func (s *Store) HasDeck(ctx context.Context, userID, deckID uuid.UUID) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM decks WHERE id = $1 AND user_id = $2)`, deckID, userID).Scan(&ok); err != nil {
		return false, fmt.Errorf("learning: has deck: %w", err)
	}
	return ok, nil
}

// DeckName returns the name of one of the user's decks; ErrNotFound for any other.
func (s *Store) DeckName(ctx context.Context, userID, deckID uuid.UUID) (string, error) {
	var name string
	err := s.pool.QueryRow(ctx, `SELECT name FROM decks WHERE id = $1 AND user_id = $2`, deckID, userID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("learning: deck: %w", err)
	}
	return name, nil
}

// CardText is the exchanged part of a card: what an export writes and an import reads.
type CardText struct {
	Front string
	Back  string
	Tags  []string
}

// ExportCards returns the deck's cards that are not drafts, oldest first.
func (s *Store) ExportCards(ctx context.Context, userID, deckID uuid.UUID) ([]CardText, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT front, back, tags FROM cards WHERE deck_id = $1 AND user_id = $2 AND status <> 'draft' ORDER BY created_at, id`,
		deckID, userID)
	if err != nil {
		return nil, fmt.Errorf("learning: export: %w", err)
	}
	cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CardText, error) {
		var c CardText
		err := row.Scan(&c.Front, &c.Back, &c.Tags)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("learning: export: %w", err)
	}
	return cards, nil
}

// ImportCards adds cards as active new cards of the deck, all or none.
func (s *Store) ImportCards(ctx context.Context, userID, deckID uuid.UUID, cards []CardText) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"cards"}, []string{"user_id", "deck_id", "front", "back", "tags"},
			pgx.CopyFromSlice(len(cards), func(i int) ([]any, error) {
				return []any{userID, deckID, cards[i].Front, cards[i].Back, cards[i].Tags}, nil
			}))
		return err
	})
	if err != nil {
		return fmt.Errorf("learning: import: %w", err)
	}
	return nil
}

// ---- cards ----

// CardListParams filter a card listing; nil and empty filter nothing.
type CardListParams struct {
	DeckID  *uuid.UUID
	Status  string
	PaperID *uuid.UUID
	// State is an FSRS state name: new, learning, review or relearning.
	State string
	// Query keeps cards whose front, back or a tag holds it, case-folded.
	Query  string
	Limit  int
	Offset int
}

// CardPage is one page of a card listing; NextOffset is nil on the last page.
type CardPage struct {
	Items      []Card `json:"items"`
	NextOffset *int   `json:"next_offset"`
}

// Cards returns a page of the user's cards, newest first.
func (s *Store) Cards(ctx context.Context, userID uuid.UUID, p CardListParams) (CardPage, error) {
	state := -1
	if p.State != "" {
		state = slices.Index(stateNames, p.State)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+cardColumns+` FROM cards c
		WHERE c.user_id = $1 AND ($2::uuid IS NULL OR c.deck_id = $2) AND ($3 = '' OR c.status = $3)
		  AND ($5::uuid IS NULL OR c.paper_id = $5) AND ($6 < 0 OR c.fsrs_state = $6)
		  AND ($7 = '' OR strpos(lower(c.front), $7) > 0 OR strpos(lower(c.back), $7) > 0
		       OR EXISTS (SELECT 1 FROM unnest(c.tags) t WHERE strpos(lower(t), $7) > 0))
		ORDER BY c.created_at DESC, c.id LIMIT $4 OFFSET $8`,
		userID, p.DeckID, p.Status, p.Limit+1, p.PaperID, state, strings.ToLower(strings.TrimSpace(p.Query)), p.Offset)
	if err != nil {
		return CardPage{}, fmt.Errorf("learning: cards: %w", err)
	}
	cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Card, error) { return scanCard(row) })
	if err != nil {
		return CardPage{}, fmt.Errorf("learning: cards: %w", err)
	}
	page := CardPage{Items: cards}
	if len(cards) > p.Limit {
		page.Items = cards[:p.Limit]
		next := p.Offset + p.Limit
		page.NextOffset = &next
	}
	if page.Items == nil {
		page.Items = []Card{}
	}
	return page, nil
}

// NewCard is a card to add, already checked: the deck is the user's, and a paper or
// passage it cites is one the user may see.
type NewCard struct {
	DeckID      uuid.UUID
	PaperID     *uuid.UUID
	ChunkID     *uuid.UUID
	PageNumber  *int
	CardType    string
	Front       string
	Back        string
	Tags        []string
	Status      string
	BuriedUntil *time.Time
}

// CreateCard adds a card for the user.
func (s *Store) CreateCard(ctx context.Context, userID uuid.UUID, n NewCard) (Card, error) {
	c, err := scanCard(s.pool.QueryRow(ctx, `
		INSERT INTO cards AS c (user_id, deck_id, paper_id, chunk_id, page_number, card_type, front, back, tags, status, buried_until)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+cardColumns,
		userID, n.DeckID, n.PaperID, n.ChunkID, n.PageNumber, n.CardType, n.Front, n.Back, n.Tags, n.Status, n.BuriedUntil))
	if err != nil {
		return Card{}, fmt.Errorf("learning: create card: %w", err)
	}
	return c, nil
}

// Card returns one of the user's cards with the interval each rating would give at
// now (Card.Next); ErrNotFound for any other card.
func (s *Store) Card(ctx context.Context, userID, cardID uuid.UUID, now time.Time) (Card, error) {
	c, err := scanCard(s.pool.QueryRow(ctx, `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2`, cardID, userID))
	if err != nil {
		return Card{}, err
	}
	sch, err := scheduler(ctx, s.pool, userID, c.DeckID)
	if err != nil {
		return Card{}, err
	}
	if err := preview(sch, &c, now); err != nil {
		return Card{}, err
	}
	if err := s.source(ctx, userID, &c); err != nil {
		return Card{}, err
	}
	return c, nil
}

// CardPatch changes a card; nil leaves a field. Status "buried" goes with
// BuriedUntil; any other status clears it. DeckID must be one of the user's decks.
type CardPatch struct {
	Front       *string
	Back        *string
	CardType    *string
	Tags        *[]string
	DeckID      *uuid.UUID
	Status      *string
	BuriedUntil *time.Time
}

// UpdateCard changes one of the user's cards; ErrNotFound for any other card.
func (s *Store) UpdateCard(ctx context.Context, userID, cardID uuid.UUID, p CardPatch) (Card, error) {
	var buried any
	if p.Status != nil && *p.Status == "buried" {
		buried = *p.BuriedUntil
	}
	c, err := scanCard(s.pool.QueryRow(ctx, `
		UPDATE cards c SET front = coalesce($3, front), back = coalesce($4, back), card_type = coalesce($5, card_type),
		       tags = coalesce($6, tags), deck_id = coalesce($7, deck_id), status = coalesce($8, status),
		       buried_until = CASE WHEN $8::text IS NULL THEN buried_until ELSE $9::timestamptz END, updated_at = now()
		 WHERE c.id = $1 AND c.user_id = $2 RETURNING `+cardColumns,
		cardID, userID, p.Front, p.Back, p.CardType, p.Tags, p.DeckID, p.Status, buried))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Card{}, fmt.Errorf("learning: update card: %w", err)
	}
	return c, err
}

// DeleteCard removes one of the user's cards and its review history; ErrNotFound for
// any other card.
func (s *Store) DeleteCard(ctx context.Context, userID, cardID uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM cards WHERE id = $1 AND user_id = $2`, cardID, userID)
	if err != nil {
		return fmt.Errorf("learning: delete card: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// learnWindow is a review session's reach: how far back a learning or
// relearning card's due time may lie for it to jump the queue, and how far ahead
// the queue looks for the next one to wait for. A card on a short-term step
// (minutes) comes back in the session it was rated in, before older reviews, as
// in Anki; one overdue by more than the window takes its place among the rest by
// due time. The window bounds the index range the first half of dueSQL reads
// (every card due within it is looked at), so it stays short: docs/benchmarks.md.
const learnWindow = time.Hour

// The review queue is two reads of the cards_due_queue index, sent in one round
// trip ($1 the user, $2 now, $3 a deck or null, $4 the limit, $5 = $2 -
// learnWindow): learnSQL, the learning and relearning cards whose short-term
// step has come within learnWindow, by due time; and dueSQL, every other due
// card, most overdue first. Two plain queries plan in a fraction of what one
// UNION of them takes (docs/benchmarks.md).
const (
	learnSQL = `SELECT ` + cardColumns + ` FROM cards c
		WHERE c.user_id = $1 AND c.status IN ('active', 'buried') AND c.due_at <= $2 AND c.due_at > $5
		  AND c.fsrs_state IN (1, 3) AND ($3::uuid IS NULL OR c.deck_id = $3) AND (c.status = 'active' OR c.buried_until <= $2)
		ORDER BY c.due_at, c.id LIMIT $4`
	dueSQL = `SELECT ` + cardColumns + ` FROM cards c
		WHERE c.user_id = $1 AND c.status IN ('active', 'buried') AND c.due_at <= $2
		  AND NOT (c.fsrs_state IN (1, 3) AND c.due_at > $5)
		  AND ($3::uuid IS NULL OR c.deck_id = $3) AND (c.status = 'active' OR c.buried_until <= $2)
		ORDER BY c.due_at, c.id LIMIT $4`
)

// dueCards runs the queue's two reads (learnSQL, dueSQL) in one round trip and
// returns up to limit cards, the learning lane first.
func dueCards(ctx context.Context, q batcher, userID uuid.UUID, deckID *uuid.UUID, limit int, now time.Time) ([]Card, error) {
	b := &pgx.Batch{}
	cards := queueDueCards(b, userID, deckID, limit, now)
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("learning: due: %w", err)
	}
	return cards(), nil
}

// queueDueCards queues the queue's two reads on b; once the batch has run, cards
// returns up to limit cards, the learning lane first.
func queueDueCards(b *pgx.Batch, userID uuid.UUID, deckID *uuid.UUID, limit int, now time.Time) (cards func() []Card) {
	// A generic plan for the queue's reads, for the rest of the batch (its
	// implicit transaction). Left to choose, PostgreSQL planned them anew at every
	// call, since one user's plan looked cheaper than the generic one of the same
	// shape: 0.9 ms of planning a queue against 0.4 ms of running it.
	b.Queue(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`)
	var lanes [2][]Card
	for i, sql := range []string{learnSQL, dueSQL} {
		b.Queue(sql, userID, now, deckID, limit, now.Add(-learnWindow)).Query(func(rows pgx.Rows) error {
			var err error
			lanes[i], err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Card, error) { return scanCard(row) })
			return err
		})
	}
	return func() []Card {
		cards := append(lanes[0], lanes[1]...)
		return cards[:min(len(cards), limit)]
	}
}

// DueQueue is what a review session reads at once: the due cards and when the
// next card on a short-term step comes back.
type DueQueue struct {
	// Cards are Due's cards, each with its Next.
	Cards []Card
	// NextLearningDue is NextLearningDue's time; nil when no such card comes back
	// within learnWindow.
	NextLearningDue *time.Time
}

// Due returns the user's cards due at now, each with the interval each rating
// would give (Card.Next): learning and relearning cards whose short-term step
// has come first, then the rest, most overdue first (learnSQL, dueSQL). deckID,
// when not nil, keeps one deck. Buried cards whose time has come count as due.
func (s *Store) Due(ctx context.Context, userID uuid.UUID, deckID *uuid.UUID, limit int, now time.Time) ([]Card, error) {
	q, err := s.Queue(ctx, userID, deckID, limit, now)
	return q.Cards, err
}

// Queue returns Due's cards and NextLearningDue's time in one round trip, with
// what every card's preview needs (the settings of the user's decks and their
// fitted parameters): GET /api/reviews/due is the review session's most frequent
// read, and one round trip per deck of the page queued behind the pool under load
// (docs/benchmarks.md, "Issue 18 item 7").
func (s *Store) Queue(ctx context.Context, userID uuid.UUID, deckID *uuid.UUID, limit int, now time.Time) (DueQueue, error) {
	b := &pgx.Batch{}
	cards := queueDueCards(b, userID, deckID, limit, now)
	var next *time.Time
	b.Queue(nextLearningSQL, userID, now, deckID, now.Add(learnWindow)).QueryRow(func(row pgx.Row) error { return row.Scan(&next) })
	schedulers := queueSchedulers(b, userID, deckID)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return DueQueue{}, fmt.Errorf("learning: due: %w", err)
	}
	out := DueQueue{Cards: cards(), NextLearningDue: next}
	for i := range out.Cards {
		sch, err := schedulers(out.Cards[i].DeckID)
		if err != nil {
			return DueQueue{}, err
		}
		if err := preview(sch, &out.Cards[i], now); err != nil {
			return DueQueue{}, err
		}
	}
	if out.Cards == nil {
		out.Cards = []Card{}
	}
	return out, nil
}

// queueSchedulers queues on b the reads every scheduler of the user's decks (or
// of deckID alone, when not nil) needs, as queueScheduler does for one deck; once
// the batch has run, scheduler returns a deck's, built once.
func queueSchedulers(b *pgx.Batch, userID uuid.UUID, deckID *uuid.UUID) (scheduler func(deck uuid.UUID) (*fsrs.Scheduler, error)) {
	type settings struct {
		retention   float64
		maxInterval int
	}
	decks := map[uuid.UUID]settings{}
	b.Queue(`SELECT d.id, d.desired_retention, d.maximum_interval FROM decks d
		WHERE d.user_id = $1 AND ($2::uuid IS NULL OR d.id = $2)`, userID, deckID).Query(func(rows pgx.Rows) error {
		var id uuid.UUID
		var st settings
		_, err := pgx.ForEachRow(rows, []any{&id, &st.retention, &st.maxInterval}, func() error {
			decks[id] = st
			return nil
		})
		if err != nil {
			return fmt.Errorf("learning: deck settings: %w", err)
		}
		return nil
	})
	var raw json.RawMessage
	userconfig.QueuePlainValue(b, userID, ParamsKey, &raw)
	built := map[uuid.UUID]*fsrs.Scheduler{}
	return func(deck uuid.UUID) (*fsrs.Scheduler, error) {
		if sch, ok := built[deck]; ok {
			return sch, nil
		}
		st, ok := decks[deck]
		if !ok {
			return nil, ErrNotFound
		}
		sch, err := newScheduler(st.retention, st.maxInterval, raw)
		if err != nil {
			return nil, err
		}
		built[deck] = sch
		return sch, nil
	}
}

// nextLearningSQL is NextLearningDue's read ($1 the user, $2 now, $3 a deck or
// null, $4 = $2 + learnWindow).
const nextLearningSQL = `SELECT min(c.due_at) FROM cards c
		WHERE c.user_id = $1 AND c.status = 'active' AND c.due_at > $2 AND c.due_at <= $4
		  AND c.fsrs_state IN (1, 3) AND ($3::uuid IS NULL OR c.deck_id = $3)`

// NextLearningDue returns when the user's next learning or relearning card
// (of deckID, when not nil) comes back after now, within learnWindow: what the
// review page waits for when nothing else is due. ok is false when none does.
func (s *Store) NextLearningDue(ctx context.Context, userID uuid.UUID, deckID *uuid.UUID, now time.Time) (at time.Time, ok bool, err error) {
	var next *time.Time
	if err := s.pool.QueryRow(ctx, nextLearningSQL, userID, now, deckID, now.Add(learnWindow)).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("learning: next learning card: %w", err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return *next, true, nil
}
