// Package pulse makes each user's morning deck: it discovers recent papers for
// what they follow, scores them against what they read (pulse/score), asks the
// relevance role for a judgement, weighs in their classifier (pulse/classifier),
// and keeps the deck, its diagnostics and the run history. Every row here is the
// user's own; the papers a deck suggests are instance-level discoveries until the
// user acts on one.
package pulse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

// ErrNotFound means no such row, or one of another user.
var ErrNotFound = errors.New("pulse: not found")

// Store keeps Pulse's rows.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a Store on pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Topic is a subject the user follows.
type Topic struct {
	ID         uuid.UUID `json:"id"`
	Name       string    `json:"name"`
	Query      string    `json:"query"`
	Categories []string  `json:"categories"`
	Enabled    bool      `json:"enabled"`
}

// Topics returns the user's topics, by name.
func (s *Store) Topics(ctx context.Context, userID uuid.UUID) ([]Topic, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, query, categories, enabled FROM pulse_topics
		WHERE user_id = $1 ORDER BY lower(name), id`, userID)
	if err != nil {
		return nil, fmt.Errorf("pulse: topics: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Topic, error) {
		var t Topic
		err := r.Scan(&t.ID, &t.Name, &t.Query, &t.Categories, &t.Enabled)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("pulse: topics: %w", err)
	}
	return out, nil
}

// AddTopic adds (or, by name, replaces) a topic of the user's.
func (s *Store) AddTopic(ctx context.Context, userID uuid.UUID, t Topic) (Topic, error) {
	if t.Categories == nil {
		t.Categories = []string{}
	}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO pulse_topics (user_id, name, query, categories) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, name) DO UPDATE SET query = EXCLUDED.query, categories = EXCLUDED.categories, enabled = true
		RETURNING id, enabled`, userID, t.Name, t.Query, t.Categories).Scan(&t.ID, &t.Enabled)
	if err != nil {
		return Topic{}, fmt.Errorf("pulse: add topic: %w", err)
	}
	return t, nil
}

// Author is an author the user follows.
type Author struct {
	ID     uuid.UUID `json:"id"`
	Name   string    `json:"name"`
	S2ID   string    `json:"s2_author_id,omitempty"`
	Source string    `json:"source"`
}

// Authors returns the authors the user follows.
func (s *Store) Authors(ctx context.Context, userID uuid.UUID) ([]Author, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, coalesce(s2_author_id, ''), source FROM pulse_authors
		WHERE user_id = $1 AND enabled ORDER BY lower(name), id`, userID)
	if err != nil {
		return nil, fmt.Errorf("pulse: authors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Author, error) {
		var a Author
		err := r.Scan(&a.ID, &a.Name, &a.S2ID, &a.Source)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("pulse: authors: %w", err)
	}
	return out, nil
}

// FollowAuthor adds an author the user follows (again enabled when they were).
func (s *Store) FollowAuthor(ctx context.Context, userID uuid.UUID, a Author) (Author, error) {
	if a.Source == "" {
		a.Source = "manual"
	}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO pulse_authors (user_id, name, s2_author_id, source) VALUES ($1, $2, nullif($3, ''), $4)
		ON CONFLICT (user_id, name, s2_author_id) DO UPDATE SET enabled = true
		RETURNING id`, userID, a.Name, a.S2ID, a.Source).Scan(&a.ID)
	if err != nil {
		return Author{}, fmt.Errorf("pulse: follow author: %w", err)
	}
	return a, nil
}

// Settings are a user's Pulse settings (user_config pulse.settings).
type Settings struct {
	// LookbackDays is how far back discovery looks, 1-90 (default 7).
	LookbackDays int `json:"lookback_days"`
	// Lambda weighs the negative centroid in the embedding signal, 0-2 (0.5).
	Lambda float64 `json:"l2_lambda"`
	// DeckSize is how many cards a deck holds, 1-50 (10).
	DeckSize int `json:"deck_size"`
	// Weights of the signals.
	Weights score.Weights `json:"weights"`
	// ClassifierOptIn is set once the user's classifier first trained.
	ClassifierOptIn bool `json:"classifier_opt_in"`
	// Hour is the local hour (0-23, in the user's time zone) the nightly run
	// makes their deck; default 6.
	Hour int `json:"hour"`
}

const settingsKey = "pulse.settings"

// DefaultHour is the local hour a deck is made at when the user chose none.
const DefaultHour = 6

// DefaultSettings are the settings of a user who changed none.
func DefaultSettings() Settings {
	return Settings{LookbackDays: 7, Lambda: 0.5, DeckSize: 10, Weights: score.Defaults(), Hour: DefaultHour}
}

// Settings returns the user's settings, the defaults filled in.
func (s *Store) Settings(ctx context.Context, userID uuid.UUID) (Settings, error) {
	out := DefaultSettings()
	raw, err := userconfig.PlainValue(ctx, s.pool, userID, settingsKey)
	switch {
	case errors.Is(err, userconfig.ErrNotFound):
		return out, nil
	case err != nil:
		return out, fmt.Errorf("pulse: settings: %w", err)
	}
	var got struct {
		LookbackDays    *int          `json:"lookback_days"`
		Lambda          *float64      `json:"l2_lambda"`
		DeckSize        *int          `json:"deck_size"`
		Weights         score.Weights `json:"weights"`
		ClassifierOptIn bool          `json:"classifier_opt_in"`
		Hour            *int          `json:"hour"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		// A value this code cannot read is treated as unset, not as an outage.
		return out, nil
	}
	if v := got.LookbackDays; v != nil && *v >= 1 && *v <= 90 {
		out.LookbackDays = *v
	}
	if v := got.Lambda; v != nil && *v >= 0 && *v <= 2 {
		out.Lambda = *v
	}
	if v := got.DeckSize; v != nil && *v >= 1 && *v <= 50 {
		out.DeckSize = *v
	}
	for k, v := range got.Weights.Clamped() {
		out.Weights[k] = v
	}
	out.ClassifierOptIn = got.ClassifierOptIn
	if v := got.Hour; v != nil && *v >= 0 && *v <= 23 {
		out.Hour = *v
	}
	return out, nil
}

// Hours returns the users who chose their own hour for the nightly run.
func (s *Store) Hours(ctx context.Context) (map[uuid.UUID]jobs.TimeOfDay, error) {
	all, err := userconfig.PlainValuesOf(ctx, s.pool, settingsKey)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]jobs.TimeOfDay{}
	for id, raw := range all {
		var v struct {
			Hour *int `json:"hour"`
		}
		if json.Unmarshal(raw, &v) == nil && v.Hour != nil && *v.Hour >= 0 && *v.Hour <= 23 {
			out[id] = jobs.TimeOfDay{Hour: *v.Hour}
		}
	}
	return out, nil
}

// PutSettings stores the user's settings.
func (s *Store) PutSettings(ctx context.Context, userID uuid.UUID, st Settings) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("pulse: settings: %w", err)
	}
	return userconfig.PutPlainValue(ctx, s.pool, userID, settingsKey, raw)
}

// Card is one suggestion of a deck.
type Card struct {
	PaperID uuid.UUID          `json:"paper_id"`
	Rank    int                `json:"rank"`
	Score   float64            `json:"score"`
	Signals map[string]float64 `json:"signals"`
	Why     string             `json:"why"`
	// Reason is the relevance role's own sentence, when it gave one.
	Reason string `json:"reason,omitempty"`
}

// Deck is a user's deck of one day.
type Deck struct {
	ID             uuid.UUID `json:"id,omitzero"`
	Date           string    `json:"deck_date"`
	GeneratedAt    time.Time `json:"generated_at,omitzero"`
	Cards          []Card    `json:"cards"`
	Stats          Stats     `json:"stats"`
	DegradedReason string    `json:"degraded_reason,omitempty"`
	// Stale is set when today has no deck and this is the last non-empty one of
	// the past 7 days.
	Stale        bool `json:"is_stale"`
	StaleAgeDays int  `json:"stale_age_days,omitempty"`
	// StaleDiagnostics are the stats of today's run when it found nothing.
	StaleDiagnostics *Stats `json:"stale_diagnostics,omitempty"`
}

// Stats say how a run went (REFERENCE §4, deck statistics).
type Stats struct {
	CandidateCount  int                     `json:"candidate_count"`
	Stage1Survivors int                     `json:"stage1_survivors"`
	Stage2Scored    int                     `json:"stage2_scored"`
	LLMCalls        int                     `json:"llm_calls"`
	DurationS       float64                 `json:"duration_s"`
	DegradedReason  string                  `json:"degraded_reason,omitempty"`
	SourceCounts    map[string]int          `json:"source_counts,omitempty"`
	Sources         map[string]SourceStatus `json:"source_diagnostics,omitempty"`
	Classifier      ClassifierStatus        `json:"classifier"`
	Quiet           string                  `json:"quiet,omitempty"`
	CardCount       int                     `json:"card_count"`
}

// SourceStatus is how one source did in a run, in words.
type SourceStatus struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// ClassifierStatus says whether the user's classifier weighed in, and why not.
type ClassifierStatus struct {
	Available   bool   `json:"available"`
	Degradation string `json:"degradation_reason,omitempty"`
	SampleCount int    `json:"sample_count"`
}

// SaveDeck stores the user's deck of date, replacing the cards of an earlier run
// the same day, in one transaction.
func (s *Store) SaveDeck(ctx context.Context, userID uuid.UUID, date string, cards []Card, stats Stats) (uuid.UUID, error) {
	statsJSON, err := json.Marshal(stats)
	if err != nil {
		return uuid.Nil, fmt.Errorf("pulse: save deck: %w", err)
	}
	var id uuid.UUID
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `
			INSERT INTO pulse_decks (user_id, deck_date, card_count, stats, degraded_reason)
			VALUES ($1, $2::date, $3, $4, nullif($5, ''))
			ON CONFLICT (user_id, deck_date) DO UPDATE SET card_count = EXCLUDED.card_count, stats = EXCLUDED.stats,
			    degraded_reason = EXCLUDED.degraded_reason, generated_at = now()
			RETURNING id`, userID, date, len(cards), statsJSON, stats.DegradedReason).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pulse_cards WHERE deck_id = $1`, id); err != nil {
			return err
		}
		rows := make([][]any, len(cards))
		for i, c := range cards {
			sig, err := json.Marshal(c.Signals)
			if err != nil {
				return err
			}
			rows[i] = []any{id, userID, c.PaperID, c.Rank, c.Score, sig, c.Why, nullable(c.Reason)}
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"pulse_cards"},
			[]string{"deck_id", "user_id", "paper_id", "rank", "score", "signals", "why", "reason"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("pulse: save deck: %w", err)
	}
	return id, nil
}

// staleWindow is how far back Today looks for a deck when today has none.
const staleWindow = 7

// Today returns the user's deck of date, or, when that day has no cards, the last
// non-empty deck of the 7 days before, marked stale; ErrNotFound when there is
// neither.
func (s *Store) Today(ctx context.Context, userID uuid.UUID, date string) (Deck, error) {
	var d Deck
	var stats []byte
	var degraded *string
	var age int
	err := s.pool.QueryRow(ctx, `
		SELECT id, deck_date::text, generated_at, stats, degraded_reason, $2::date - deck_date
		  FROM pulse_decks
		 WHERE user_id = $1 AND deck_date <= $2::date AND deck_date > $2::date - $3::int
		   AND (deck_date = $2::date OR card_count > 0)
		 ORDER BY card_count > 0 DESC, deck_date DESC
		 LIMIT 1`, userID, date, staleWindow).Scan(&d.ID, &d.Date, &d.GeneratedAt, &stats, &degraded, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return Deck{}, ErrNotFound
	}
	if err != nil {
		return Deck{}, fmt.Errorf("pulse: today: %w", err)
	}
	if err := json.Unmarshal(stats, &d.Stats); err != nil {
		return Deck{}, fmt.Errorf("pulse: today: stats: %w", err)
	}
	if degraded != nil {
		d.DegradedReason = *degraded
	}
	rows, err := s.pool.Query(ctx, `SELECT paper_id, rank, score, signals, why, coalesce(reason, '') FROM pulse_cards
		WHERE deck_id = $1 AND user_id = $2 ORDER BY rank`, d.ID, userID)
	if err != nil {
		return Deck{}, fmt.Errorf("pulse: today: cards: %w", err)
	}
	d.Cards, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Card, error) {
		var c Card
		var sig []byte
		if err := r.Scan(&c.PaperID, &c.Rank, &c.Score, &sig, &c.Why, &c.Reason); err != nil {
			return c, err
		}
		return c, json.Unmarshal(sig, &c.Signals)
	})
	if err != nil {
		return Deck{}, fmt.Errorf("pulse: today: cards: %w", err)
	}
	if len(d.Cards) > 0 && age > 0 {
		d.Stale, d.StaleAgeDays = true, age
		// What tonight's run found (or why it found nothing) goes with it.
		var tonight []byte
		err := s.pool.QueryRow(ctx, `SELECT stats FROM pulse_decks WHERE user_id = $1 AND deck_date = $2::date`,
			userID, date).Scan(&tonight)
		switch {
		case err == nil:
			var st Stats
			if json.Unmarshal(tonight, &st) == nil {
				d.StaleDiagnostics = &st
			}
		case !errors.Is(err, pgx.ErrNoRows):
			return Deck{}, fmt.Errorf("pulse: today: %w", err)
		}
	}
	if d.Cards == nil {
		d.Cards = []Card{}
	}
	return d, nil
}

// InDeck reports whether paperID is in one of the user's decks of the last 30 days:
// the papers Pulse may be rated on.
func (s *Store) InDeck(ctx context.Context, userID, paperID uuid.UUID) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM pulse_cards c JOIN pulse_decks d ON d.id = c.deck_id
		                WHERE c.user_id = $1 AND c.paper_id = $2 AND d.deck_date > current_date - 30)`,
		userID, paperID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("pulse: in deck: %w", err)
	}
	return ok, nil
}

// ShownSignals returns, for each of papers, the signals it had when it was last
// shown to the user in a deck: what the classifier trains on.
func (s *Store) ShownSignals(ctx context.Context, userID uuid.UUID, papers []uuid.UUID) (map[uuid.UUID]map[string]float64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT DISTINCT ON (c.paper_id) c.paper_id, c.signals FROM pulse_cards c JOIN pulse_decks d ON d.id = c.deck_id
		 WHERE c.user_id = $1 AND c.paper_id = ANY($2) AND c.signals <> '{}'::jsonb
		 ORDER BY c.paper_id, d.deck_date DESC`, userID, papers)
	if err != nil {
		return nil, fmt.Errorf("pulse: shown signals: %w", err)
	}
	defer rows.Close()
	out := map[uuid.UUID]map[string]float64{}
	for rows.Next() {
		var id uuid.UUID
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("pulse: shown signals: %w", err)
		}
		var sig map[string]float64
		if json.Unmarshal(raw, &sig) == nil {
			out[id] = sig
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pulse: shown signals: %w", err)
	}
	return out, nil
}

// StoredModel is the user's active classifier row, not yet verified.
type StoredModel struct {
	Blob, Tag   []byte
	Version     string
	SampleCount int
}

// ActiveModel returns the user's active classifier row; ErrNotFound when none.
func (s *Store) ActiveModel(ctx context.Context, userID uuid.UUID) (StoredModel, error) {
	var m StoredModel
	err := s.pool.QueryRow(ctx, `SELECT blob, hmac, version, sample_count FROM pulse_models WHERE user_id = $1 AND active`,
		userID).Scan(&m.Blob, &m.Tag, &m.Version, &m.SampleCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, ErrNotFound
	}
	if err != nil {
		return m, fmt.Errorf("pulse: model: %w", err)
	}
	return m, nil
}

// SaveModel makes a newly trained classifier the user's active one, in one
// transaction (the previous row is dropped).
func (s *Store) SaveModel(ctx context.Context, userID uuid.UUID, m StoredModel, metrics map[string]any) error {
	raw, err := json.Marshal(metrics)
	if err != nil {
		return fmt.Errorf("pulse: save model: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM pulse_models WHERE user_id = $1`, userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO pulse_models (user_id, version, blob, hmac, sample_count, metrics)
			VALUES ($1, $2, $3, $4, $5, $6)`, userID, m.Version, m.Blob, m.Tag, m.SampleCount, raw)
		return err
	})
	if err != nil {
		return fmt.Errorf("pulse: save model: %w", err)
	}
	return nil
}

// StartRun records the start of a run and returns its id.
func (s *Store) StartRun(ctx context.Context, userID uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	if err := s.pool.QueryRow(ctx, `INSERT INTO pulse_runs (user_id) VALUES ($1) RETURNING id`, userID).Scan(&id); err != nil {
		return uuid.Nil, fmt.Errorf("pulse: start run: %w", err)
	}
	return id, nil
}

// FinishRun records how a run ended.
func (s *Store) FinishRun(ctx context.Context, userID, runID uuid.UUID, status string, candidates int, took time.Duration, detail map[string]any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("pulse: finish run: %w", err)
	}
	_, err = s.pool.Exec(ctx, `UPDATE pulse_runs SET finished_at = now(), status = $3, candidate_count = $4, duration_ms = $5, detail = $6
		WHERE id = $2 AND user_id = $1`, userID, runID, status, candidates, took.Milliseconds(), raw)
	if err != nil {
		return fmt.Errorf("pulse: finish run: %w", err)
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DeleteTopic removes one of the user's topics; ErrNotFound for another's.
func (s *Store) DeleteTopic(ctx context.Context, userID, id uuid.UUID) error {
	return s.deleteOwn(ctx, `DELETE FROM pulse_topics WHERE id = $2 AND user_id = $1`, userID, id, "delete topic")
}

// UnfollowAuthor stops following one of the user's authors; ErrNotFound for
// another's.
func (s *Store) UnfollowAuthor(ctx context.Context, userID, id uuid.UUID) error {
	return s.deleteOwn(ctx, `DELETE FROM pulse_authors WHERE id = $2 AND user_id = $1`, userID, id, "unfollow author")
}

// deleteOwn runs a delete of the user's row id; ErrNotFound when it deleted none.
func (s *Store) deleteOwn(ctx context.Context, sql string, userID, id uuid.UUID, what string) error {
	tag, err := s.pool.Exec(ctx, sql, userID, id)
	if err != nil {
		return fmt.Errorf("pulse: %s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// LatestCard returns the card of paperID in the user's newest deck that holds it,
// with that deck's date; ErrNotFound when none of their decks does.
func (s *Store) LatestCard(ctx context.Context, userID, paperID uuid.UUID) (Card, string, error) {
	var c Card
	var sig []byte
	var date string
	err := s.pool.QueryRow(ctx, `
		SELECT c.paper_id, c.rank, c.score, c.signals, c.why, coalesce(c.reason, ''), d.deck_date::text
		  FROM pulse_cards c JOIN pulse_decks d ON d.id = c.deck_id
		 WHERE c.user_id = $1 AND c.paper_id = $2
		 ORDER BY d.deck_date DESC LIMIT 1`, userID, paperID).Scan(&c.PaperID, &c.Rank, &c.Score, &sig, &c.Why, &c.Reason, &date)
	if errors.Is(err, pgx.ErrNoRows) {
		return Card{}, "", ErrNotFound
	}
	if err != nil {
		return Card{}, "", fmt.Errorf("pulse: card: %w", err)
	}
	if err := json.Unmarshal(sig, &c.Signals); err != nil {
		return Card{}, "", fmt.Errorf("pulse: card: %w", err)
	}
	return c, date, nil
}
