package learning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/users"
)

// DayCount is one day's figure.
type DayCount struct {
	Date    string `json:"date"` // YYYY-MM-DD in the user's time zone
	Reviews int    `json:"reviews,omitempty"`
	Seconds int64  `json:"seconds,omitempty"`
	Due     int    `json:"due,omitempty"`
	// Mature counts the day's reviews of cards in review state, Recalled those of
	// them not answered Again: the day's true retention is Recalled/Mature.
	Mature   int `json:"mature,omitempty"`
	Recalled int `json:"recalled,omitempty"`
}

// Analytics is GET /api/analytics.
type Analytics struct {
	Days          int            `json:"days"`
	Timezone      string         `json:"timezone"`
	ReviewsPerDay []DayCount     `json:"reviews_per_day"`
	TrueRetention *float64       `json:"true_retention"` // share of mature reviews recalled; null without any
	MatureReviews int            `json:"mature_reviews"`
	DueForecast   []DayCount     `json:"due_forecast"` // the next 30 days; today includes what is overdue
	StreakDays    int            `json:"streak_days"`
	TotalReviews  int            `json:"total_reviews"`
	TotalSeconds  int64          `json:"total_seconds"`
	CardsByState  map[string]int `json:"cards_by_state"` // drafts left out: they are not cards until accepted
}

// Analytics computes the user's review analytics over the days up to now (see
// API.Analytics), in the user's time zone.
func (s *Store) Analytics(ctx context.Context, user uuid.UUID, days int, now time.Time) (Analytics, error) {
	out := Analytics{Days: days, ReviewsPerDay: []DayCount{}, DueForecast: []DayCount{}, CardsByState: map[string]int{}}
	account, err := users.ByID(ctx, s.pool, user)
	if errors.Is(err, users.ErrNotFound) {
		return Analytics{}, ErrNotFound
	}
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	out.Timezone = account.Timezone
	loc, err := time.LoadLocation(out.Timezone)
	if err != nil {
		loc, out.Timezone = time.UTC, "UTC"
	}
	today := now.In(loc)
	from := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -(days - 1))

	rows, err := s.pool.Query(ctx, `
		SELECT to_char((reviewed_at AT TIME ZONE $3)::date, 'YYYY-MM-DD'), count(*), coalesce(sum(duration_ms), 0) / 1000,
		       count(*) FILTER (WHERE state_before = 2), count(*) FILTER (WHERE state_before = 2 AND rating > 1)
		  FROM review_logs WHERE user_id = $1 AND reviewed_at >= $2
		 GROUP BY 1 ORDER BY 1`, user, from, out.Timezone)
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	out.ReviewsPerDay, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (DayCount, error) {
		var d DayCount
		err := row.Scan(&d.Date, &d.Reviews, &d.Seconds, &d.Mature, &d.Recalled)
		return d, err
	})
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	for _, d := range out.ReviewsPerDay {
		out.TotalReviews += d.Reviews
		out.TotalSeconds += d.Seconds
	}

	var recalled int
	for _, d := range out.ReviewsPerDay {
		out.MatureReviews += d.Mature
		recalled += d.Recalled
	}
	if out.MatureReviews > 0 {
		v := float64(recalled) / float64(out.MatureReviews)
		out.TrueRetention = &v
	}

	horizon := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 30)
	rows, err = s.pool.Query(ctx, `
		SELECT to_char(greatest((due_at AT TIME ZONE $3)::date, ($4::timestamptz AT TIME ZONE $3)::date), 'YYYY-MM-DD'), count(*)
		  FROM cards WHERE user_id = $1 AND status IN ('active', 'buried') AND due_at < $2
		 GROUP BY 1 ORDER BY 1`, user, horizon, out.Timezone, now)
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	out.DueForecast, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (DayCount, error) {
		var d DayCount
		err := row.Scan(&d.Date, &d.Due)
		return d, err
	})
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}

	// The streak counts back from today (or from yesterday, when today has no
	// review yet) over consecutive days with at least one review.
	rows, err = s.pool.Query(ctx, `
		SELECT DISTINCT (reviewed_at AT TIME ZONE $2)::date AS d FROM review_logs
		 WHERE user_id = $1 AND reviewed_at >= $3 ORDER BY d DESC`, user, out.Timezone, now.AddDate(-1, 0, -1))
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	reviewDays, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	for i, d := range reviewDays {
		if i == 0 && d.Before(day) {
			day = day.AddDate(0, 0, -1) // nothing yet today: the streak may still end yesterday
		}
		if !d.Equal(day) {
			break
		}
		out.StreakDays++
		day = day.AddDate(0, 0, -1)
	}

	// Drafts wait for the user to accept them: they are not new cards yet.
	rows, err = s.pool.Query(ctx, `SELECT fsrs_state, count(*) FROM cards WHERE user_id = $1 AND status <> 'draft' GROUP BY 1`, user)
	if err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	var state int16
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		if int(state) < len(stateNames) {
			out.CardsByState[stateNames[state]] = n
		}
		return nil
	}); err != nil {
		return Analytics{}, fmt.Errorf("learning: analytics: %w", err)
	}
	return out, nil
}
