// Package classifier is Pulse's per-user relevance classifier: a logistic
// regression over a deck card's signals, trained on the user's thumbs, and the
// signed form it is stored in (SPEC "Pulse model signing").
//
// The package holds no storage and no key: Train fits a model to examples, Seal
// and Open turn a model into a signed blob and back, and Key resolves the
// signing key from the configuration at the moment it is needed.
package classifier

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/optimize"
)

// Features are the signals the classifier reads, in the order of its weights
// (REFERENCE §4). A signal a card lacks counts as 0.
var Features = []string{
	"embedding", "topic", "recency", "author_bonus", "llm_relevance", "llm_novelty",
	"citation_pagerank", "citation_count", "citation_adamic_adar",
}

const (
	// MinExamples is the fewest examples a model is trained on.
	MinExamples = 30
	// MaxExamples is how many of the newest examples training reads.
	MaxExamples = 1000
	// holdoutShare is the share of each class, newest first, held out to
	// measure the model.
	holdoutShare = 0.2
	// l2 is the strength of the penalty on the weights (the intercept is not
	// penalised): scikit-learn's default C = 1, which the reference used.
	l2 = 1.0
)

// Example is one piece of the user's feedback on a paper: the signals the paper
// had when it was shown, whether the feedback was positive, and when it was given.
type Example struct {
	Signals  map[string]float64
	Positive bool
	At       time.Time
}

// Model is a trained classifier.
type Model struct {
	// Features names the weights, in order.
	Features []string  `json:"features"`
	Weights  []float64 `json:"weights"`
	Bias     float64   `json:"bias"`
	// Samples is how many examples the model was fitted on; Positives and
	// Negatives split the examples read (fitted and held out).
	Samples   int `json:"samples"`
	Positives int `json:"positives"`
	Negatives int `json:"negatives"`
	// AUC is the area under the ROC curve on the held-out examples; nil when
	// they are too few to hold out both classes.
	AUC       *float64  `json:"auc,omitempty"`
	TrainedAt time.Time `json:"trained_at"`
}

// SkipError says why a model was not trained: too little feedback, or feedback
// of one kind only. It is the reason the deck diagnostics show.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "classifier: not trained: " + e.Reason }

// Probability is the model's probability that the user wants a paper with these
// signals. A signal the map lacks counts as 0.
func (m *Model) Probability(signals map[string]float64) float64 {
	z := m.Bias
	for i, f := range m.Features {
		z += m.Weights[i] * clamp(signals[f])
	}
	return sigmoid(z)
}

// Train fits a model to the newest MaxExamples examples: the newest 20% of each
// class is held out to measure AUC, the rest fitted. Fewer than MinExamples, or
// examples of one class only, is a *SkipError.
func Train(examples []Example, now time.Time) (*Model, error) {
	examples = slices.Clone(examples)
	slices.SortStableFunc(examples, func(a, b Example) int { return b.At.Compare(a.At) })
	if len(examples) > MaxExamples {
		examples = examples[:MaxExamples]
	}
	var pos, neg []Example
	for _, e := range examples {
		if e.Positive {
			pos = append(pos, e)
		} else {
			neg = append(neg, e)
		}
	}
	switch {
	case len(examples) < MinExamples:
		return nil, &SkipError{Reason: fmt.Sprintf("%d ratings so far; the classifier needs at least %d", len(examples), MinExamples)}
	case len(pos) == 0:
		return nil, &SkipError{Reason: "no paper was rated up yet; the classifier needs both kinds of rating"}
	case len(neg) == 0:
		return nil, &SkipError{Reason: "no paper was rated down yet; the classifier needs both kinds of rating"}
	}
	// Newest first: the first share of each class is held out.
	hp, hn := int(holdoutShare*float64(len(pos))), int(holdoutShare*float64(len(neg)))
	var fit, held []Example
	if hp > 0 && hn > 0 {
		held = append(append(held, pos[:hp]...), neg[:hn]...)
		fit = append(append(fit, pos[hp:]...), neg[hn:]...)
	} else {
		fit = examples
	}
	w, b, err := fitLogistic(fit)
	if err != nil {
		return nil, err
	}
	m := &Model{Features: slices.Clone(Features), Weights: w, Bias: b, Samples: len(fit),
		Positives: len(pos), Negatives: len(neg), TrainedAt: now.UTC()}
	if len(held) > 0 {
		auc := AUC(m, held)
		m.AUC = &auc
	}
	return m, nil
}

// fitLogistic minimises the L2-penalised log loss over examples with L-BFGS.
// x[0:n] are the weights, x[n] the intercept.
func fitLogistic(examples []Example) ([]float64, float64, error) {
	n := len(Features)
	rows := make([][]float64, len(examples))
	ys := make([]float64, len(examples))
	for i, e := range examples {
		rows[i] = vector(e.Signals)
		if e.Positive {
			ys[i] = 1
		}
	}
	loss := func(x []float64) float64 {
		var sum float64
		for i, r := range rows {
			z := x[n] + dot(x[:n], r)
			// log(1 + e^z) - y z, computed without overflow.
			sum += softplus(z) - ys[i]*z
		}
		return sum + 0.5*l2*dot(x[:n], x[:n])
	}
	grad := func(g, x []float64) {
		clear(g)
		for i, r := range rows {
			d := sigmoid(x[n]+dot(x[:n], r)) - ys[i]
			for j, v := range r {
				g[j] += d * v
			}
			g[n] += d
		}
		for j := range n {
			g[j] += l2 * x[j]
		}
	}
	res, err := optimize.Minimize(optimize.Problem{Func: loss, Grad: grad}, make([]float64, n+1),
		&optimize.Settings{MajorIterations: 500, GradientThreshold: 1e-8}, &optimize.LBFGS{})
	if res == nil {
		return nil, 0, fmt.Errorf("classifier: fit: %w", err)
	}
	// Running out of iterations still leaves the best point found; only a
	// result that is not a number is a failure.
	for _, v := range res.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, errors.New("classifier: fit: the weights did not converge to numbers")
		}
	}
	return slices.Clone(res.X[:n]), res.X[n], nil
}

// AUC is the area under the ROC curve of m on examples: the probability that a
// positive example scores above a negative one, ties counting half
// (Mann-Whitney). It is 0.5 when either class is missing.
func AUC(m *Model, examples []Example) float64 {
	type scored struct {
		p   float64
		pos bool
	}
	s := make([]scored, len(examples))
	var np, nn float64
	for i, e := range examples {
		s[i] = scored{m.Probability(e.Signals), e.Positive}
		if e.Positive {
			np++
		} else {
			nn++
		}
	}
	if np == 0 || nn == 0 {
		return 0.5
	}
	slices.SortFunc(s, func(a, b scored) int {
		switch {
		case a.p < b.p:
			return -1
		case a.p > b.p:
			return 1
		}
		return 0
	})
	// Sum of the positives' ranks, tied scores sharing their mean rank.
	var rankSum float64
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].p == s[i].p {
			j++
		}
		mean := float64(i+j+1) / 2 // ranks i+1 .. j
		for k := i; k < j; k++ {
			if s[k].pos {
				rankSum += mean
			}
		}
		i = j
	}
	return (rankSum - np*(np+1)/2) / (np * nn)
}

func vector(signals map[string]float64) []float64 {
	v := make([]float64, len(Features))
	for i, f := range Features {
		v[i] = clamp(signals[f])
	}
	return v
}

// clamp keeps a signal in [0, 1], where every Pulse signal lives; anything else
// (a NaN from a broken source) counts as 0.
func clamp(v float64) float64 {
	switch {
	case math.IsNaN(v), v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}
