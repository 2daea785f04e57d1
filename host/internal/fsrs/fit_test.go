package fsrs_test

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

// syntheticLog simulates n reviews of cards whose memory follows truth: each
// card is reviewed when the scheduler (retention around 0.85, no steps) says,
// a little early or late, and is recalled with the probability truth predicts.
func syntheticLog(tb testing.TB, n int, truth fsrs.Params, seed uint64) []fsrs.Review {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	cfg := fsrs.DefaultSchedulerConfig()
	cfg.EnableFuzz = false
	cfg.LearningSteps, cfg.RelearningSteps = nil, nil
	cfg.DesiredRetention = 0.85
	s, err := fsrs.NewScheduler(cfg)
	require.NoError(tb, err)
	start := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	var out []fsrs.Review
	for c := 0; len(out) < n; c++ {
		id := "c" + strconv.Itoa(c)
		now := start.Add(time.Duration(rng.IntN(365*24)) * time.Hour)
		card := fsrs.NewCard(now)
		var m fsrs.Memory
		for k := 0; k < 12 && len(out) < n; k++ {
			var r fsrs.Rating
			if k == 0 {
				r = fsrs.Rating(1 + rng.IntN(4))
				m = truth.InitialMemory(r)
			} else {
				days := float64(int(now.Sub(card.LastReview) / (24 * time.Hour)))
				r = fsrs.Again
				if rng.Float64() < truth.Retrievability(days, m.Stability) {
					r = []fsrs.Rating{fsrs.Hard, fsrs.Good, fsrs.Good, fsrs.Good, fsrs.Easy}[rng.IntN(5)]
				}
				m = truth.NextMemory(m, r, days)
			}
			out = append(out, fsrs.Review{CardID: id, Rating: r, Time: now})
			card, _, err = s.Review(card, r, now)
			require.NoError(tb, err)
			jitter := time.Duration((0.6 + 0.8*rng.Float64()) * float64(card.Due.Sub(now)))
			now = now.Add(jitter).Add(time.Duration(rng.IntN(12)) * time.Hour)
		}
	}
	return out
}

// truthParams differ from the defaults enough for fitting to matter.
func truthParams() fsrs.Params {
	p := fsrs.DefaultParams()
	p[0], p[2] = 0.5, 4
	p[8] = 1.4
	p[11] = 2.2
	p[20] = 0.35
	return p
}

func TestFit(t *testing.T) {
	t.Parallel()
	log := syntheticLog(t, 3000, truthParams(), 1)
	tests := []struct {
		name        string
		reviews     []fsrs.Review
		opts        fsrs.FitOptions
		wantSkipped bool
		wantBetter  bool
	}{
		{"no reviews", nil, fsrs.FitOptions{}, true, false},
		{"fewer than 512 reviews", log[:511], fsrs.FitOptions{}, true, false},
		{"synthetic log", log, fsrs.FitOptions{}, false, true},
		{"synthetic log, no penalty, 2 workers", log, fsrs.FitOptions{Regularization: -1, Workers: 2, Epochs: 10}, false, true},
		{"lower minimum", log[:400], fsrs.FitOptions{MinReviews: 100}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, rep, err := fsrs.Fit(tt.reviews, tt.opts)
			require.NoError(t, err)
			require.Equal(t, tt.wantSkipped, rep.Skipped)
			require.Equal(t, tt.wantBetter, rep.Better)
			require.Equal(t, len(tt.reviews), rep.Reviews)
			require.NoError(t, p.Validate())
			if tt.wantSkipped {
				require.Equal(t, fsrs.DefaultParams(), p)
				return
			}
			require.Less(t, rep.Fitted.LogLoss, rep.Default.LogLoss)
			require.Positive(t, rep.Steps)
			m, err := fsrs.Evaluate(tt.reviews, p)
			require.NoError(t, err)
			require.Equal(t, rep.Fitted, m)
		})
	}
}

// TestFitRecoversDecay checks fitting moves toward the parameters that
// generated a log: the fitted decay lands nearer the truth than the default.
func TestFitRecoversDecay(t *testing.T) {
	t.Parallel()
	truth := truthParams()
	p, rep, err := fsrs.Fit(syntheticLog(t, 10000, truth, 2), fsrs.FitOptions{})
	require.NoError(t, err)
	require.True(t, rep.Better)
	def := fsrs.DefaultParams()
	require.Less(t, abs(p[20]-truth[20]), abs(def[20]-truth[20]))
	truthMetrics, err := fsrs.Evaluate(syntheticLog(t, 10000, truth, 2), truth)
	require.NoError(t, err)
	require.Less(t, rep.Fitted.LogLoss-truthMetrics.LogLoss, rep.Default.LogLoss-truthMetrics.LogLoss)
}

func abs(x float64) float64 { return max(x, -x) }

func TestFitDeterministic(t *testing.T) {
	t.Parallel()
	log := syntheticLog(t, 2000, truthParams(), 3)
	tests := []struct {
		name     string
		a, b     fsrs.FitOptions
		wantSame bool
	}{
		{"same seed, different workers", fsrs.FitOptions{Seed: 5, Workers: 1}, fsrs.FitOptions{Seed: 5, Workers: 3}, true},
		{"different seeds", fsrs.FitOptions{Seed: 5}, fsrs.FitOptions{Seed: 6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pa, _, err := fsrs.Fit(log, tt.a)
			require.NoError(t, err)
			pb, _, err := fsrs.Fit(log, tt.b)
			require.NoError(t, err)
			if tt.wantSame {
				require.InDeltaSlice(t, pa[:], pb[:], 1e-9)
				return
			}
			require.NotEqual(t, pa, pb)
		})
	}
}

func TestFitRejects(t *testing.T) {
	t.Parallel()
	bad := fsrs.DefaultParams()
	bad[20] = 2
	tests := []struct {
		name    string
		reviews []fsrs.Review
		opts    fsrs.FitOptions
	}{
		{"invalid rating", []fsrs.Review{{CardID: "a", Rating: 7}}, fsrs.FitOptions{}},
		{"initial outside bounds", nil, fsrs.FitOptions{Initial: bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := fsrs.Fit(tt.reviews, tt.opts)
			require.Error(t, err)
		})
	}
}

// TestFitFixture fits the shared py-fsrs review log: the fitted parameters
// must not lose to the defaults, and py-fsrs's own optimum for this log must
// beat the defaults in our evaluator too (a check of the loss function, not a
// demand that our fit equal theirs).
func TestFitFixture(t *testing.T) {
	t.Parallel()
	reviews := loadReviewLog(t)
	_, vectors := loadVectors(t)
	var v struct {
		ExpectedParameters []float64 `json:"expected_parameters"`
	}
	require.NoError(t, json.Unmarshal(vectors["py-fsrs.optimizer.expected_parameters_for_shared_revlog"], &v))
	require.Len(t, v.ExpectedParameters, fsrs.NumParams)
	var pyParams fsrs.Params
	copy(pyParams[:], v.ExpectedParameters)

	p, rep, err := fsrs.Fit(reviews, fsrs.FitOptions{})
	require.NoError(t, err)
	require.False(t, rep.Skipped)
	require.Equal(t, 12580, rep.Reviews)
	require.Equal(t, 1205, rep.Cards)
	require.LessOrEqual(t, rep.Fitted.LogLoss, rep.Default.LogLoss)
	require.True(t, rep.Better)
	require.Less(t, rep.Fitted.RMSEBins, rep.Default.RMSEBins)
	require.NoError(t, p.Validate())

	py, err := fsrs.Evaluate(reviews, pyParams)
	require.NoError(t, err)
	require.LessOrEqual(t, py.LogLoss, rep.Default.LogLoss)
	t.Logf("default %+v\nfitted  %+v\npy-fsrs %+v\nparams %v", rep.Default, rep.Fitted, py, p)

	// py-fsrs's optimizer returns the defaults for short logs.
	short, shortRep, err := fsrs.Fit(reviews[:511], fsrs.FitOptions{})
	require.NoError(t, err)
	require.True(t, shortRep.Skipped)
	require.Equal(t, fsrs.DefaultParams(), short)
}

func BenchmarkFitFixture(b *testing.B) {
	reviews := loadReviewLog(b)
	b.ResetTimer()
	for b.Loop() {
		_, _, err := fsrs.Fit(reviews, fsrs.FitOptions{})
		require.NoError(b, err)
	}
}

func BenchmarkFitSynthetic10k(b *testing.B) {
	reviews := syntheticLog(b, 10000, truthParams(), 9)
	b.ResetTimer()
	for b.Loop() {
		_, _, err := fsrs.Fit(reviews, fsrs.FitOptions{})
		require.NoError(b, err)
	}
}
