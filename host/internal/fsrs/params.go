package fsrs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NumParams is the number of FSRS-6 parameters, w[0] to w[20].
const NumParams = 21

// Stability and difficulty limits shared by py-fsrs v6 and fsrs-rs.
const (
	// MinStability is the smallest stability, in days, a memory can have.
	MinStability = 0.001
	// MaxStability is the largest stability, in days (fsrs-rs clamps to it).
	MaxStability = 36500.0
	// MinDifficulty is the easiest a card can be.
	MinDifficulty = 1.0
	// MaxDifficulty is the hardest a card can be.
	MaxDifficulty = 10.0
)

// Params holds the 21 FSRS-6 parameters. Their roles:
//
//	w0..w3   initial stability for a first rating of Again, Hard, Good, Easy
//	w4, w5   initial difficulty: D0(G) = w4 − e^(w5·(G−1)) + 1
//	w6       difficulty change per rating step
//	w7       weight of the mean reversion toward D0(Easy)
//	w8..w10  growth of stability after a successful recall
//	w11..w14 stability after a lapse
//	w15, w16 Hard penalty and Easy bonus
//	w17..w19 same-day (short-term) stability change
//	w20      decay of the forgetting curve (FSRS-6 makes it trainable)
type Params [NumParams]float64

// DefaultParams returns the FSRS-6 default parameters, identical in py-fsrs v6,
// fsrs-rs, go-fsrs and fsrs-optimizer.
func DefaultParams() Params {
	return Params{
		0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
		1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
	}
}

// LowerBounds returns the smallest value fitting may give each parameter, as
// fsrs-rs's parameter clipper and py-fsrs v6 define them.
func LowerBounds() Params {
	return Params{
		MinStability, MinStability, MinStability, MinStability, 1.0, 0.001, 0.001, 0.001, 0.0, 0.0, 0.001,
		0.001, 0.001, 0.001, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.1,
	}
}

// UpperBounds returns the largest value fitting may give each parameter, as
// fsrs-rs's parameter clipper and py-fsrs v6 define them.
func UpperBounds() Params {
	return Params{
		100, 100, 100, 100, 10.0, 4.0, 4.0, 0.75, 4.5, 0.8, 3.5,
		5.0, 0.25, 0.9, 4.0, 1.0, 6.0, 2.0, 2.0, 0.8, 0.8,
	}
}

// ParseParams reads 21 comma-separated numbers, the format String writes.
func ParseParams(s string) (Params, error) {
	var p Params
	fields := strings.Split(s, ",")
	if len(fields) != NumParams {
		return p, fmt.Errorf("fsrs: parameters: want %d comma-separated numbers, got %d", NumParams, len(fields))
	}
	for i, f := range fields {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return p, fmt.Errorf("fsrs: parameter w%d: %w", i, err)
		}
		p[i] = v
	}
	return p, nil
}

// String writes the parameters comma-separated, the format ParseParams reads.
func (p Params) String() string {
	var b strings.Builder
	for i, v := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	}
	return b.String()
}

// Validate reports the first parameter outside [LowerBounds, UpperBounds] or not
// a finite number.
func (p Params) Validate() error {
	lo, hi := LowerBounds(), UpperBounds()
	for i, v := range p {
		if math.IsNaN(v) || v < lo[i] || v > hi[i] {
			return fmt.Errorf("fsrs: parameter w%d = %v outside [%v, %v]", i, v, lo[i], hi[i])
		}
	}
	return nil
}

// Clamp returns p with every parameter moved into [LowerBounds, UpperBounds].
func (p Params) Clamp() Params {
	lo, hi := LowerBounds(), UpperBounds()
	for i := range p {
		p[i] = min(max(p[i], lo[i]), hi[i])
	}
	return p
}

// Decay is the exponent of the forgetting curve, w20 (FSRS-6; FSRS-5 fixed it
// at 0.5).
func (p Params) Decay() float64 { return p[20] }

// factor is chosen so that R(S, S) = 0.9: factor = 0.9^(−1/w20) − 1.
func (p Params) factor() float64 { return math.Pow(0.9, -1/p[20]) - 1 }

// Retrievability is the probability of recall elapsedDays after the last
// review of a memory with stability s. FSRS-6 power forgetting curve (algorithm
// wiki; py-fsrs get_card_retrievability; fsrs-optimizer
// power_forgetting_curve): R(t, S) = (1 + factor·t/S)^(−w20), with factor
// making R(S, S) exactly 0.9.
func (p Params) Retrievability(elapsedDays, s float64) float64 {
	return math.Pow(1+p.factor()*elapsedDays/s, -p[20])
}

// IntervalDays inverts the forgetting curve: the time, in days and unrounded,
// after which a memory of stability s falls to the desired retention
// (py-fsrs _next_interval before rounding): I = S/factor · (r^(−1/w20) − 1).
func (p Params) IntervalDays(s, desiredRetention float64) float64 {
	return s / p.factor() * (math.Pow(desiredRetention, -1/p[20]) - 1)
}

// NextInterval is IntervalDays rounded to whole days and kept within
// [1, maximumDays], as py-fsrs, fsrs-rs and go-fsrs schedule reviews.
func (p Params) NextInterval(s, desiredRetention float64, maximumDays int) int {
	days := math.Round(p.IntervalDays(s, desiredRetention))
	days = max(days, 1)
	return int(min(days, float64(max(maximumDays, 1))))
}

// InitialStability is S0(G) = w[G−1], the stability after a first review.
func (p Params) InitialStability(r Rating) float64 {
	return clampStability(p[int(r)-1])
}

// InitialDifficulty is D0(G) = w4 − e^(w5·(G−1)) + 1 kept within [1, 10], the
// difficulty after a first review (algorithm wiki, FSRS-5 onward).
func (p Params) InitialDifficulty(r Rating) float64 {
	return clampDifficulty(p.rawInitialDifficulty(r))
}

// rawInitialDifficulty is D0 without the clamp; FSRS-6 mean reversion aims at
// the unclamped D0(Easy) (py-fsrs _initial_difficulty(clamp=False), fsrs-rs
// mean_reversion).
func (p Params) rawInitialDifficulty(r Rating) float64 {
	return p[4] - math.Exp(p[5]*float64(r-1)) + 1
}

// NextDifficulty is the difficulty after a review rated r. FSRS-6 (algorithm
// wiki; py-fsrs _next_difficulty): the change ΔD = −w6·(G−3) is damped
// linearly by (10 − D)/9 so that difficulty approaches 10 ever more slowly,
// then the result is pulled toward D0(Easy) with weight w7, and clamped to
// [1, 10].
func (p Params) NextDifficulty(d float64, r Rating) float64 {
	delta := -p[6] * float64(r-3)
	damped := d + (10-d)*delta/9
	return clampDifficulty(p[7]*p.rawInitialDifficulty(Easy) + (1-p[7])*damped)
}

// RecallStability is the stability after a successful review (Hard, Good or
// Easy) at retrievability rr. FSRS-6 (algorithm wiki; py-fsrs
// _next_recall_stability):
//
//	S' = S · (1 + e^w8 · (11 − D) · S^(−w9) · (e^(w10·(1−R)) − 1) · h · b)
//
// with h = w15 for Hard (a penalty below 1) and b = w16 for Easy (a bonus).
func (p Params) RecallStability(d, s, rr float64, r Rating) float64 {
	h, b := 1.0, 1.0
	switch r {
	case Hard:
		h = p[15]
	case Easy:
		b = p[16]
	}
	inc := math.Exp(p[8]) * (11 - d) * math.Pow(s, -p[9]) * (math.Exp(p[10]*(1-rr)) - 1) * h * b
	return clampStability(s * (1 + inc))
}

// ForgetStability is the stability after a lapse (Again) at retrievability rr.
// FSRS-6 (algorithm wiki; py-fsrs _next_forget_stability):
//
//	S'f = w11 · D^(−w12) · ((S+1)^w13 − 1) · e^(w14·(1−R))
//
// capped at S / e^(w17·w18), so a lapse never leaves the memory more stable than
// a same-day Again would.
func (p Params) ForgetStability(d, s, rr float64) float64 {
	long := p[11] * math.Pow(d, -p[12]) * (math.Pow(s+1, p[13]) - 1) * math.Exp(p[14]*(1-rr))
	short := s / math.Exp(p[17]*p[18])
	return clampStability(min(long, short))
}

// ShortTermStability is the stability after a review on the same day as the
// previous one. FSRS-6 (algorithm wiki; fsrs-rs stability_short_term; py-fsrs
// _short_term_stability):
//
//	S' = S · e^(w17·(G−3+w18)) · S^(−w19)
//
// where, for any successful rating (Hard, Good, Easy), the factor is at least 1
// so a same-day success never lowers stability. fsrs-rs and fsrs-optimizer
// apply that floor from Hard upward (the reference vectors check Hard); some
// py-fsrs releases apply it from Good upward only.
func (p Params) ShortTermStability(s float64, r Rating) float64 {
	inc := math.Exp(p[17]*(float64(r)-3+p[18])) * math.Pow(s, -p[19])
	if r >= Hard {
		inc = max(inc, 1)
	}
	return clampStability(s * inc)
}

// Memory is a memory state: stability in days and difficulty in [1, 10].
type Memory struct {
	// Stability is the interval, in days, at which recall probability is 90%.
	Stability float64
	// Difficulty lies in [1, 10].
	Difficulty float64
}

// InitialMemory is the memory after a card's first review.
func (p Params) InitialMemory(r Rating) Memory {
	return Memory{Stability: p.InitialStability(r), Difficulty: p.InitialDifficulty(r)}
}

// NextMemory is the memory after a review rated r, elapsedDays after the
// previous one. Under one day the short-term formula applies; otherwise the
// recall or lapse formula at the retrievability the curve predicts. Stability
// is computed from the difficulty before the review. This is the step of
// fsrs-rs's model and of py-fsrs's Scheduler.
func (p Params) NextMemory(m Memory, r Rating, elapsedDays float64) Memory {
	var s float64
	switch {
	case elapsedDays < 1:
		s = p.ShortTermStability(m.Stability, r)
	case r == Again:
		s = p.ForgetStability(m.Difficulty, m.Stability, p.Retrievability(elapsedDays, m.Stability))
	default:
		s = p.RecallStability(m.Difficulty, m.Stability, p.Retrievability(elapsedDays, m.Stability), r)
	}
	return Memory{Stability: s, Difficulty: p.NextDifficulty(m.Difficulty, r)}
}

// longTermMemory is NextMemory without the short-term formula: go-fsrs's
// long-term scheduler applies the recall and lapse formulas at any elapsed
// time, including zero days.
func (p Params) longTermMemory(m Memory, r Rating, elapsedDays float64) Memory {
	rr := p.Retrievability(elapsedDays, m.Stability)
	var s float64
	if r == Again {
		s = p.ForgetStability(m.Difficulty, m.Stability, rr)
	} else {
		s = p.RecallStability(m.Difficulty, m.Stability, rr, r)
	}
	return Memory{Stability: s, Difficulty: p.NextDifficulty(m.Difficulty, r)}
}

func clampStability(s float64) float64 { return min(max(s, MinStability), MaxStability) }

func clampDifficulty(d float64) float64 { return min(max(d, MinDifficulty), MaxDifficulty) }
