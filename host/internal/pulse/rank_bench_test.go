package pulse_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// benchWords are what the benchmark's abstracts are written from.
var benchWords = strings.Fields(`graph neural network message passing protein folding structure prediction
reinforcement learning policy gradient quantum error correction surface code climate model precipitation
epidemic transmission speech recognition acoustic robot grasping dark matter halo lithium battery cathode
causal inference treatment effect image segmentation transformer we propose study method results show
improves baseline dataset benchmark analysis theory experiments efficient scalable robust novel approach`)

// benchText is a paper of about 180 words, the length of an abstract.
func benchText(rng *rand.Rand) string {
	var b strings.Builder
	for i := range 180 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(benchWords[rng.IntN(len(benchWords))])
	}
	return b.String()
}

// benchUser is one user's night: 200 library papers, 50 papers turned down, 5
// topics, 3 followed authors, a trained classifier, and n candidates.
type benchUser struct {
	library, negative, topics, candidates []string
	published                             []time.Time
	authors                               [][]score.Author
	tracked                               []score.Author
	model                                 *classifier.Model
	now                                   time.Time
}

func newBenchUser(b *testing.B, n int) *benchUser {
	rng := rand.New(rand.NewPCG(1, 2))
	u := &benchUser{now: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)}
	for range 200 {
		u.library = append(u.library, benchText(rng))
	}
	for range 50 {
		u.negative = append(u.negative, benchText(rng))
	}
	for i := range 5 {
		u.topics = append(u.topics, fmt.Sprintf("topic %d\n%s", i, strings.Join(benchWords[i*4:i*4+4], " ")))
	}
	u.tracked = []score.Author{{Name: "Ana Li"}, {Name: "Bo Sato"}, {Name: "Omar Novak"}}
	for i := range n {
		u.candidates = append(u.candidates, benchText(rng))
		u.published = append(u.published, u.now.AddDate(0, 0, -rng.IntN(7)))
		u.authors = append(u.authors, []score.Author{{Name: fmt.Sprintf("Author %d", i%500)}, {Name: "Bo Sato"}}[:1+i%2])
	}
	var ex []classifier.Example
	for i := range 200 {
		sig := map[string]float64{score.Embedding: rng.Float64(), score.Topic: rng.Float64(), score.Recency: rng.Float64()}
		ex = append(ex, classifier.Example{Signals: sig, Positive: sig[score.Embedding]+rng.Float64()/2 > 0.7, At: u.now.Add(-time.Duration(i) * time.Hour)})
	}
	m, err := classifier.Train(ex, u.now)
	require.NoError(b, err)
	u.model = m
	return u
}

// night scores the candidates as the nightly run does once discovery has found
// them, with no relevance model: embed the profile and the candidates with the
// builtin embedding, stage 1, the classifier, the weights, the deck of 10.
func (u *benchUser) night(b *testing.B, emb embedding.Embedder, candVecs [][]float32) []pulse.Card {
	ctx := b.Context()
	prof, err := emb.Embed(ctx, append(append(append([]string{}, u.library...), u.negative...), u.topics...))
	require.NoError(b, err)
	v := prof.Vectors
	lib := make([]pulse.Dated, len(u.library))
	for i := range lib {
		lib[i] = pulse.Dated{Vec: v[i], At: u.now.AddDate(0, 0, -i)}
	}
	neg := make([]pulse.Dated, len(u.negative))
	for i := range neg {
		neg[i] = pulse.Dated{Vec: v[len(lib)+i], At: u.now.AddDate(0, 0, -i)}
	}
	names := []string{"t0", "t1", "t2", "t3", "t4"}
	p := pulse.NewProfile(u.now, lib, neg, v[len(lib)+len(neg):], names)
	if candVecs == nil {
		r, err := emb.Embed(ctx, u.candidates)
		require.NoError(b, err)
		candVecs = r.Vectors
	}
	cands := make([]pulse.Candidate, len(u.candidates))
	for i := range cands {
		cands[i] = pulse.Candidate{ID: uuid.New(), Vec: candVecs[i], Published: &u.published[i], Authors: u.authors[i]}
	}
	set := pulse.DefaultSettings()
	scored := p.Stage1(cands, pulse.RankOpts{Tracked: u.tracked, Lambda: set.Lambda, TopK: 40, Now: u.now})
	return pulse.Cut(scored, score.Effective(set.Weights, true), u.model, set.DeckSize, u.now)
}

// BenchmarkScore10k scores 10,000 candidates for one user with no model call
// (issue 19: under 1 s). "embed+score" embeds the candidates' texts with the
// builtin embedding as the nightly run does; "score" starts from their vectors,
// as a deployment whose embed role is a remote model would after its call.
func BenchmarkScore10k(b *testing.B) {
	u := newBenchUser(b, 10_000)
	emb := embedding.Provider{P: extractive.New(nil), Name: extractive.EmbeddingModel}
	b.Run("embed+score", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			if deck := u.night(b, emb, nil); len(deck) != 10 {
				b.Fatalf("a deck of %d cards", len(deck))
			}
		}
		b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
	})
	r, err := emb.Embed(b.Context(), u.candidates)
	require.NoError(b, err)
	b.Run("score", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			if deck := u.night(b, emb, r.Vectors); len(deck) != 10 {
				b.Fatalf("a deck of %d cards", len(deck))
			}
		}
		b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
	})
}

// cpuTime is the CPU time the process has used (user and system, all threads):
// on a loaded machine it moves far less than the wall clock, so cpu-s/op says
// what a night costs when the wall-clock figure is mostly waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
