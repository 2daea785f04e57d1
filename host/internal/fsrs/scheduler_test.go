package fsrs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

var t0 = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

func newScheduler(t *testing.T, edit func(*fsrs.SchedulerConfig)) *fsrs.Scheduler {
	t.Helper()
	cfg := fsrs.DefaultSchedulerConfig()
	cfg.EnableFuzz = false
	if edit != nil {
		edit(&cfg)
	}
	s, err := fsrs.NewScheduler(cfg)
	require.NoError(t, err)
	return s
}

// reviewCard is a card in Review with the given stability, last reviewed at t0.
func reviewCard(stability float64) fsrs.Card {
	return fsrs.Card{State: fsrs.StateReview, Stability: stability, Difficulty: 5, LastReview: t0, Due: t0.Add(time.Duration(stability) * 24 * time.Hour)}
}

func TestNewSchedulerRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*fsrs.SchedulerConfig)
	}{
		{"zero params", func(c *fsrs.SchedulerConfig) { c.Params = fsrs.Params{} }},
		{"decay above bound", func(c *fsrs.SchedulerConfig) { c.Params[20] = 0.9 }},
		{"retention zero", func(c *fsrs.SchedulerConfig) { c.DesiredRetention = 0 }},
		{"retention above one", func(c *fsrs.SchedulerConfig) { c.DesiredRetention = 1.01 }},
		{"maximum interval zero", func(c *fsrs.SchedulerConfig) { c.MaximumInterval = 0 }},
		{"negative step", func(c *fsrs.SchedulerConfig) { c.LearningSteps = []time.Duration{-time.Minute} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := fsrs.DefaultSchedulerConfig()
			tt.edit(&cfg)
			_, err := fsrs.NewScheduler(cfg)
			require.Error(t, err)
		})
	}
}

func TestReviewRejects(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, nil)
	tests := []struct {
		name   string
		card   fsrs.Card
		rating fsrs.Rating
	}{
		{"rating 0", fsrs.NewCard(t0), 0},
		{"rating 5", fsrs.NewCard(t0), 5},
		{"review card without memory", fsrs.Card{State: fsrs.StateReview}, fsrs.Good},
		{"unknown state", fsrs.Card{State: 9}, fsrs.Good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := s.Review(tt.card, tt.rating, t0)
			require.Error(t, err)
		})
	}
}

// TestSteps walks the py-fsrs v6 state machine through its step rules.
func TestSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		learning   []time.Duration
		relearning []time.Duration
		card       fsrs.Card
		rating     fsrs.Rating
		wantState  fsrs.State
		wantStep   int
		wantIvl    time.Duration // 0: a whole number of days, at least one
	}{
		{"new Again", nil, nil, fsrs.NewCard(t0), fsrs.Again, fsrs.StateLearning, 0, time.Minute},
		{"new Hard waits mean of first two steps", nil, nil, fsrs.NewCard(t0), fsrs.Hard, fsrs.StateLearning, 0, 330 * time.Second},
		{"new Good advances", nil, nil, fsrs.NewCard(t0), fsrs.Good, fsrs.StateLearning, 1, 10 * time.Minute},
		{"new Easy graduates", nil, nil, fsrs.NewCard(t0), fsrs.Easy, fsrs.StateReview, 0, 0},
		{"single step Hard waits 1.5 steps", []time.Duration{4 * time.Minute}, nil, fsrs.NewCard(t0), fsrs.Hard, fsrs.StateLearning, 0, 6 * time.Minute},
		{"no learning steps graduates", []time.Duration{}, nil, fsrs.NewCard(t0), fsrs.Again, fsrs.StateReview, 0, 0},
		{"learning Hard on second step repeats it", nil, nil,
			fsrs.Card{State: fsrs.StateLearning, Step: 1, Stability: 2, Difficulty: 5, LastReview: t0}, fsrs.Hard, fsrs.StateLearning, 1, 10 * time.Minute},
		{"learning Good on last step graduates", nil, nil,
			fsrs.Card{State: fsrs.StateLearning, Step: 1, Stability: 2, Difficulty: 5, LastReview: t0}, fsrs.Good, fsrs.StateReview, 0, 0},
		{"step beyond shortened steps graduates", []time.Duration{time.Minute}, nil,
			fsrs.Card{State: fsrs.StateLearning, Step: 3, Stability: 2, Difficulty: 5, LastReview: t0}, fsrs.Hard, fsrs.StateReview, 0, 0},
		{"review Again relearns", nil, nil, reviewCard(10), fsrs.Again, fsrs.StateRelearning, 0, 10 * time.Minute},
		{"review Again without relearning steps stays", nil, []time.Duration{}, reviewCard(10), fsrs.Again, fsrs.StateReview, 0, 0},
		{"relearning Good graduates", nil, nil,
			fsrs.Card{State: fsrs.StateRelearning, Stability: 2, Difficulty: 5, LastReview: t0}, fsrs.Good, fsrs.StateReview, 0, 0},
		{"relearning Again restarts", nil, []time.Duration{time.Minute, 5 * time.Minute},
			fsrs.Card{State: fsrs.StateRelearning, Step: 1, Stability: 2, Difficulty: 5, LastReview: t0}, fsrs.Again, fsrs.StateRelearning, 0, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newScheduler(t, func(c *fsrs.SchedulerConfig) {
				if tt.learning != nil {
					c.LearningSteps = tt.learning
				}
				if tt.relearning != nil {
					c.RelearningSteps = tt.relearning
				}
			})
			now := t0.Add(time.Hour)
			card, log, err := s.Review(tt.card, tt.rating, now)
			require.NoError(t, err)
			require.Equal(t, tt.wantState, card.State)
			require.Equal(t, tt.wantStep, card.Step)
			require.Equal(t, now, card.LastReview)
			require.Equal(t, tt.card, log.Before)
			require.Equal(t, card, log.After)
			if tt.wantIvl != 0 {
				require.Equal(t, tt.wantIvl, card.Due.Sub(now))
				return
			}
			require.GreaterOrEqual(t, log.ScheduledDays, 1)
			require.Equal(t, time.Duration(log.ScheduledDays)*24*time.Hour, card.Due.Sub(now))
		})
	}
}

func TestMaximumIntervalAndRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		retention float64
		maximum   int
		stability float64
		wantDays  int
	}{
		{"capped at maximum", 0.9, 30, 200, 30},
		{"retention 0.9 gives the stability", 0.9, 36500, 200, 200},
		{"lower retention lengthens", 0.8, 36500, 10, 33},
		{"higher retention shortens", 0.97, 36500, 10, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := fsrs.DefaultParams()
			require.Equal(t, tt.wantDays, p.NextInterval(tt.stability, tt.retention, tt.maximum))
			s := newScheduler(t, func(c *fsrs.SchedulerConfig) {
				c.DesiredRetention = tt.retention
				c.MaximumInterval = tt.maximum
			})
			card, log, err := s.Review(reviewCard(tt.stability), fsrs.Good, t0.Add(time.Duration(tt.stability)*24*time.Hour))
			require.NoError(t, err)
			require.LessOrEqual(t, log.ScheduledDays, tt.maximum)
			require.Equal(t, p.NextInterval(card.Stability, tt.retention, tt.maximum), log.ScheduledDays)
		})
	}
}

// TestFuzz checks the fuzz stays in py-fsrs's ranges, is deterministic, varies
// with the seed, and that Preview shows what Review does.
func TestFuzz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		stability float64
		lo, hi    int
	}{
		// delta = 1 + 0.15·(days−2.5) under 7 days, and so on; the range
		// is [round(days−delta), round(days+delta)].
		{"2 days not fuzzed", 2, 2, 2},
		{"5 days", 5, 4, 6},
		{"10 days", 10, 8, 12},
		{"100 days", 100, 93, 107},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seen := map[int]bool{}
			for seed := range uint64(200) {
				s := newScheduler(t, func(c *fsrs.SchedulerConfig) {
					c.EnableFuzz = true
					c.FuzzSeed = seed
				})
				// Good on the last learning step a minute later: the
				// same-day formula keeps the stability, which graduates.
				card := fsrs.Card{State: fsrs.StateLearning, Step: 1, Stability: tt.stability, Difficulty: 5, LastReview: t0}
				now := t0.Add(time.Minute)
				out, err := s.Preview(card, now)
				require.NoError(t, err)
				got, log, err := s.Review(card, fsrs.Good, now)
				require.NoError(t, err)
				require.Equal(t, out[fsrs.Good-1].Card, got)
				again, _, err := s.Review(card, fsrs.Good, now)
				require.NoError(t, err)
				require.Equal(t, got, again)

				base := fsrs.DefaultParams().NextInterval(got.Stability, 0.9, 36500)
				require.Equal(t, int(tt.stability), base)
				require.GreaterOrEqual(t, log.ScheduledDays, tt.lo)
				require.LessOrEqual(t, log.ScheduledDays, tt.hi)
				seen[log.ScheduledDays] = true
			}
			require.Len(t, seen, tt.hi-tt.lo+1, "every day of the range is drawn")
		})
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		longTerm bool
		card     fsrs.Card
		now      time.Time
	}{
		{"new card", false, fsrs.NewCard(t0), t0},
		{"review card", false, reviewCard(20), t0.Add(20 * 24 * time.Hour)},
		{"long-term new card", true, fsrs.NewCard(t0), t0},
		{"long-term review card", true, reviewCard(20), t0.Add(20 * 24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newScheduler(t, func(c *fsrs.SchedulerConfig) { c.LongTermOnly = tt.longTerm })
			out, err := s.Preview(tt.card, tt.now)
			require.NoError(t, err)
			for i, r := range fsrs.Ratings {
				require.Equal(t, r, out[i].Rating)
				card, log, err := s.Review(tt.card, r, tt.now)
				require.NoError(t, err)
				require.Equal(t, card, out[i].Card)
				require.Equal(t, log.Interval, out[i].Interval)
				if i > 0 {
					require.GreaterOrEqual(t, out[i].Interval, out[i-1].Interval, "%v after %v", r, fsrs.Ratings[i-1])
				}
			}
		})
	}
}

func TestRetrievability(t *testing.T) {
	t.Parallel()
	s := newScheduler(t, nil)
	tests := []struct {
		name string
		card fsrs.Card
		now  time.Time
		want float64
	}{
		{"new card", fsrs.NewCard(t0), t0, 0},
		{"at the stability", reviewCard(7), t0.Add(7 * 24 * time.Hour), 0.9},
		{"same day", reviewCard(7), t0.Add(23 * time.Hour), 1},
		{"whole days only", reviewCard(7), t0.Add(7*24*time.Hour + 23*time.Hour), 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, tt.want, s.Retrievability(tt.card, tt.now), 1e-12)
		})
	}
}

func TestParseParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"defaults round trip", fsrs.DefaultParams().String(), false},
		{"spaces allowed", " 0.212, 1.2931,2.3065,8.2956,6.4133,0.8334,3.0194,0.001,1.8722,0.1666,0.796,1.4835,0.0614,0.2629,1.6483,0.6014,1.8729,0.5425,0.0912,0.0658,0.1542 ", false},
		{"too few", "1,2,3", true},
		{"not a number", "x" + fsrs.DefaultParams().String()[5:], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := fsrs.ParseParams(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, fsrs.DefaultParams(), p)
		})
	}
}

// StepAfter agrees with Review on the step of every state, step and rating.
func TestStepAfterAgreesWithReview(t *testing.T) {
	t.Parallel()
	s, err := fsrs.NewScheduler(fsrs.DefaultSchedulerConfig())
	require.NoError(t, err)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	cards := []fsrs.Card{fsrs.NewCard(now)}
	for _, r := range fsrs.Ratings {
		c, _, err := s.Review(fsrs.NewCard(now), r, now)
		require.NoError(t, err)
		cards = append(cards, c)
		later := now.Add(20 * time.Minute)
		for _, r2 := range fsrs.Ratings {
			c2, _, err := s.Review(c, r2, later)
			require.NoError(t, err)
			cards = append(cards, c2)
			c3, _, err := s.Review(c2, fsrs.Again, later.Add(72*time.Hour))
			require.NoError(t, err)
			cards = append(cards, c3)
		}
	}
	for _, c := range cards {
		for _, r := range fsrs.Ratings {
			after, _, err := s.Review(c, r, now.Add(200*time.Hour))
			require.NoError(t, err)
			require.Equal(t, after.Step, s.StepAfter(c.State, c.Step, r), "%v step %d rated %v", c.State, c.Step, r)
		}
	}
}
