// Package score turns what Pulse knows about a candidate paper into its signals,
// and the signals into the score that orders the morning deck (REFERENCE §4:
// signals, default weights, the stage-1 rank and the final weighted sum).
//
// It is pure work: vectors, dates and names in, numbers and a sentence out. The
// nightly job gathers the inputs and stores the results.
package score

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Signal names, as stored with each deck card and read by the classifier.
const (
	Embedding          = "embedding"
	Topic              = "topic"
	Recency            = "recency"
	AuthorBonus        = "author_bonus"
	LLMRelevance       = "llm_relevance"
	LLMNovelty         = "llm_novelty"
	CitationPageRank   = "citation_pagerank"
	CitationCount      = "citation_count"
	CitationAdamicAdar = "citation_adamic_adar"
	Classifier         = "classifier"
)

// Required are the weights a PUT must give; the others are optional.
var Required = []string{Embedding, Topic, LLMRelevance, LLMNovelty, AuthorBonus, Recency}

// Optional are the weights a PUT may leave out (they keep their value).
var Optional = []string{CitationPageRank, CitationCount, CitationAdamicAdar, Classifier}

// Weights weigh each signal in the final score. Each is in [0, 1]; they need not
// sum to 1.
type Weights map[string]float64

// Defaults are the weights of a user who changed none (REFERENCE §4).
func Defaults() Weights {
	return Weights{Embedding: 0.20, Topic: 0.20, LLMRelevance: 0.30, LLMNovelty: 0.10, AuthorBonus: 0.15, Recency: 0.05,
		CitationPageRank: 0, CitationCount: 0, CitationAdamicAdar: 0, Classifier: 0}
}

// Clamped is w with every known weight in [0, 1] (a NaN is 0) and unknown names
// dropped.
func (w Weights) Clamped() Weights {
	out := Weights{}
	for _, k := range append(slices.Clone(Required), Optional...) {
		if v, ok := w[k]; ok {
			out[k] = clamp01(v)
		}
	}
	return out
}

// Merge returns base with the weights in w put over it, clamped. It refuses a w
// that lacks a required weight or names an unknown one, saying which.
func Merge(base, w Weights) (Weights, error) {
	for _, k := range Required {
		if _, ok := w[k]; !ok {
			return nil, fmt.Errorf("the weight %q is required", k)
		}
	}
	for k := range w {
		if !slices.Contains(Required, k) && !slices.Contains(Optional, k) {
			return nil, fmt.Errorf("%q is not a Pulse signal; the signals are %s", k, strings.Join(append(slices.Clone(Required), Optional...), ", "))
		}
	}
	out := Defaults()
	for k, v := range base.Clamped() {
		out[k] = v
	}
	for k, v := range w.Clamped() {
		out[k] = v
	}
	return out, nil
}

// Final is Σ weight × signal; a missing signal counts as 0. The terms are
// added in a fixed order (the signals' names sorted), so the same inputs give
// the same bits and the same deck: a map's order would change the last bits of
// the sum from run to run, and with them the order of near ties.
func Final(w Weights, signals map[string]float64) float64 {
	var s float64
	for _, k := range slices.Sorted(maps.Keys(w)) {
		s += w[k] * clamp01(signals[k])
	}
	return s
}

// Stage1 is the preliminary rank that keeps the candidates worth a model's
// judgement: embedding + topic + recency + 0.5 × author bonus.
func Stage1(signals map[string]float64) float64 {
	return signals[Embedding] + signals[Topic] + signals[Recency] + 0.5*signals[AuthorBonus]
}

// EmbeddingSignal is cos(candidate, library centroid) − λ × cos(candidate,
// negative centroid), clamped to [0, 1]. A nil centroid contributes 0.
func EmbeddingSignal(candidate, library, negative []float32, lambda float64) float64 {
	return clamp01(Cosine(candidate, library) - lambda*Cosine(candidate, negative))
}

// TopicSignal is the best cosine between the candidate and the user's topics; a
// dampened topic (one the user turned down often) counts half.
func TopicSignal(candidate []float32, topics [][]float32, dampened []bool) float64 {
	best := 0.0
	for i, t := range topics {
		c := Cosine(candidate, t)
		if c > 0 && i < len(dampened) && dampened[i] {
			c /= 2
		}
		best = max(best, c)
	}
	return clamp01(best)
}

// recencyScale is the e-folding time of the recency signal: exp(−age / 30 days).
const recencyScale = 30 * 24 * time.Hour

// RecencySignal is exp(−age/30 days) of a paper published at published, in [0, 1];
// 0 for an undated paper.
func RecencySignal(published *time.Time, now time.Time) float64 {
	if published == nil {
		return 0
	}
	age := now.Sub(*published)
	if age < 0 {
		age = 0
	}
	return clamp01(math.Exp(-float64(age) / float64(recencyScale)))
}

// AuthorSignal is 1 when one of the paper's authors is one the user tracks
// (by name, compared without case, accents aside, or by Semantic Scholar id).
func AuthorSignal(authors []Author, tracked []Author) (float64, string) {
	for _, a := range authors {
		for _, t := range tracked {
			if (t.S2ID != "" && a.S2ID == t.S2ID) || (t.Name != "" && sameName(a.Name, t.Name)) {
				return 1, a.Name
			}
		}
	}
	return 0, ""
}

// Author is an author of a paper, or one a user tracks.
type Author struct {
	Name string
	S2ID string
}

func sameName(a, b string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	return norm(a) != "" && norm(a) == norm(b)
}

// Centroid is the mean direction of vecs, each weighted by weights (nil: all 1),
// normalised; nil when there is nothing to average.
func Centroid(vecs [][]float32, weights []float64) []float32 {
	if len(vecs) == 0 {
		return nil
	}
	sum := make([]float64, len(vecs[0]))
	var total float64
	for i, v := range vecs {
		if len(v) != len(sum) {
			continue
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		total += w
		for j, x := range v {
			sum[j] += w * float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	if total == 0 || norm == 0 {
		return nil
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(sum))
	for j, x := range sum {
		out[j] = float32(x / norm)
	}
	return out
}

// PreferenceHalfLife is how fast a piece of feedback fades from the centroids:
// its weight halves every 90 days, so preferences drift back toward neutral and
// the deck does not narrow into what the user liked a year ago.
const PreferenceHalfLife = 90 * 24 * time.Hour

// Fade is the weight of feedback given at at, seen at now (1 when new).
func Fade(at, now time.Time) float64 {
	age := now.Sub(at)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(PreferenceHalfLife))
}

// Cosine is the cosine of a and b; 0 when either is empty or zero, or their
// lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func clamp01(v float64) float64 {
	switch {
	case math.IsNaN(v), v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}

// OptInClassifierWeight is the classifier's weight for a user whose classifier
// trained (pulse.classifier_opt_in) and who left its weight at 0.
const OptInClassifierWeight = 0.1

// Effective is the weights a deck is scored with: w, except that a classifier
// that trained for the user weighs OptInClassifierWeight while its configured
// weight is 0. A configured non-zero weight always wins.
func Effective(w Weights, classifierOptIn bool) Weights {
	out := w.Clamped()
	if classifierOptIn && out[Classifier] == 0 {
		out[Classifier] = OptInClassifierWeight
	}
	return out
}
