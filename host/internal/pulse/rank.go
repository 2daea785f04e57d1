package pulse

import (
	"cmp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
)

// The pure half of a deck: from what the user reads, as vectors, and the
// candidates, as vectors, to the ordered cards. It touches no database and calls
// no model, so the nightly run, the offline evaluation (`lectern eval pulse`) and
// the scoring benchmark all measure the same code.

// Profile is what a user reads, as vectors: the centroid of their library, the
// centroid of the papers they turned down, and their topics.
type Profile struct {
	Library, Negative []float32
	Topics            [][]float32
	TopicNames        []string
}

// Dated is the vector of a paper the profile is made of, and when it joined it
// (entered the library, or was turned down).
type Dated struct {
	Vec []float32
	At  time.Time
}

// NewProfile averages the library and the turned-down papers into their
// centroids, each paper faded by its age (score.Fade), so preferences drift back
// toward neutral. topics and names are the user's topics' vectors and names.
func NewProfile(now time.Time, library, negative []Dated, topics [][]float32, names []string) *Profile {
	centroid := func(ps []Dated) []float32 {
		vecs := make([][]float32, len(ps))
		weights := make([]float64, len(ps))
		for i, p := range ps {
			vecs[i], weights[i] = p.Vec, score.Fade(p.At, now)
		}
		return score.Centroid(vecs, weights)
	}
	return &Profile{Library: centroid(library), Negative: centroid(negative), Topics: topics, TopicNames: names}
}

// topicSignal is the best cosine between v and the user's topics, and that
// topic's name.
func (p *Profile) topicSignal(v []float32) (float64, string) {
	best, name := 0.0, ""
	for i, t := range p.Topics {
		if c := score.Cosine(v, t); c > best {
			best, name = c, p.TopicNames[i]
		}
	}
	return min(max(best, 0), 1), name
}

// Candidate is a paper that may enter the deck: its text (for the relevance
// role), its vector, when it was published and by whom.
type Candidate struct {
	ID              uuid.UUID
	Title, Abstract string
	Vec             []float32
	Published       *time.Time
	Authors         []score.Author
}

// Scored is a candidate with its signals.
type Scored struct {
	Candidate
	Signals map[string]float64
	// Stage1 is the preliminary rank (score.Stage1).
	Stage1 float64
	// Topic and Author are what the card's "why" names; Reason is the relevance
	// role's sentence.
	Topic, Author, Reason string
}

// RankOpts are what stage 1 needs besides the profile.
type RankOpts struct {
	// Tracked are the authors the user follows.
	Tracked []score.Author
	// Lambda weighs the negative centroid (Settings.Lambda).
	Lambda float64
	// TopK is how many candidates survive stage 1; 0 keeps all.
	TopK int
	Now  time.Time
}

// Stage1 gives each candidate its embedding, topic, recency and author signals
// and keeps the TopK best by the stage-1 rank, best first (ties keep the
// candidates' order).
func (p *Profile) Stage1(cands []Candidate, o RankOpts) []*Scored {
	scored := make([]*Scored, len(cands))
	for i, c := range cands {
		s := &Scored{Candidate: c, Signals: make(map[string]float64, 6)}
		s.Signals[score.Embedding] = score.EmbeddingSignal(c.Vec, p.Library, p.Negative, o.Lambda)
		s.Signals[score.Topic], s.Topic = p.topicSignal(c.Vec)
		s.Signals[score.Recency] = score.RecencySignal(c.Published, o.Now)
		s.Signals[score.AuthorBonus], s.Author = score.AuthorSignal(c.Authors, o.Tracked)
		s.Stage1 = score.Stage1(s.Signals)
		scored[i] = s
	}
	slices.SortStableFunc(scored, func(a, b *Scored) int { return cmp.Compare(b.Stage1, a.Stage1) })
	if o.TopK > 0 && len(scored) > o.TopK {
		scored = scored[:o.TopK]
	}
	return scored
}

// Cut weighs in the classifier (when model is not nil), scores each candidate
// with weights (score.Final) and returns the best size of them as cards, best
// first.
func Cut(scored []*Scored, weights score.Weights, model *classifier.Model, size int, now time.Time) []Card {
	if model != nil {
		for _, c := range scored {
			c.Signals[score.Classifier] = model.Probability(c.Signals)
		}
	}
	final := make([]float64, len(scored))
	order := make([]int, len(scored))
	for i, c := range scored {
		final[i], order[i] = score.Final(weights, c.Signals), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(final[b], final[a]) })
	n := min(len(order), max(size, 0))
	cards := make([]Card, 0, n)
	for rank, i := range order[:n] {
		c := scored[i]
		cards = append(cards, Card{PaperID: c.ID, Rank: rank + 1, Score: final[i], Signals: c.Signals, Reason: c.Reason,
			Why: score.Why(weights, c.Signals, score.Facts{Topic: c.Topic, Author: c.Author, Published: c.Published}, now)})
	}
	return cards
}
