package fsrs

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// randomSequences is a small review log with same-day steps, lapses and all
// four ratings.
func randomSequences(t *testing.T, seed uint64) []sequence {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var reviews []Review
	for c := range 40 {
		at := start.Add(time.Duration(rng.IntN(1000)) * time.Minute)
		for range 2 + rng.IntN(8) {
			reviews = append(reviews, Review{CardID: string(rune('A' + c)), Rating: Rating(1 + rng.IntN(4)), Time: at})
			if rng.IntN(4) == 0 {
				at = at.Add(10 * time.Minute)
			} else {
				at = at.Add(time.Duration(1+rng.IntN(60)) * 24 * time.Hour)
			}
		}
	}
	seqs, err := buildSequences(reviews)
	require.NoError(t, err)
	return seqs
}

func lossSum(p Params, seqs []sequence) float64 {
	m := evaluate(p, seqs)
	return m.LogLoss * float64(m.Predictions)
}

// TestDualModel checks that the dual-number model computes the same loss as
// the float model and that its gradient matches central finite differences.
func TestDualModel(t *testing.T) {
	t.Parallel()
	shifted := DefaultParams()
	shifted[20] = 0.4
	shifted[15] = 0.3
	shifted[16] = 2.5
	tests := []struct {
		name string
		p    Params
		seed uint64
	}{
		{"defaults", DefaultParams(), 1},
		{"shifted", shifted, 2},
		{"defaults other log", DefaultParams(), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seqs := randomSequences(t, tt.seed)
			var g [NumParams]float64
			loss := gradient(tt.p, seqs, &g)
			require.InDelta(t, lossSum(tt.p, seqs), loss, 1e-9)
			for j := range NumParams {
				h := 1e-6 * max(1, math.Abs(tt.p[j]))
				up, down := tt.p, tt.p
				up[j] += h
				down[j] -= h
				fd := (lossSum(up, seqs) - lossSum(down, seqs)) / (2 * h)
				require.InDelta(t, fd, g[j], 1e-4*max(1, math.Abs(fd)), "w%d", j)
			}
		})
	}
}
