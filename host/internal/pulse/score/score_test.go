package score

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

func TestFinalIsTheWeightedSumOfTheSignals(t *testing.T) {
	t.Parallel()
	w := Defaults()
	s := map[string]float64{Embedding: 0.5, Topic: 1, LLMRelevance: 0.8, Recency: 2 /* clamped to 1 */, "unknown": 1}
	require.InDelta(t, 0.2*0.5+0.2*1+0.3*0.8+0.05*1, Final(w, s), 1e-12)
	require.InDelta(t, 0.5+1+1+0.5*0, Stage1(map[string]float64{Embedding: 0.5, Topic: 1, Recency: 1}), 1e-12)
}

func TestMergeRequiresTheSixAndClamps(t *testing.T) {
	t.Parallel()
	_, err := Merge(Defaults(), Weights{Embedding: 1})
	require.ErrorContains(t, err, `the weight "topic" is required`)
	_, err = Merge(Defaults(), Weights{Embedding: 1, Topic: 1, LLMRelevance: 1, LLMNovelty: 1, AuthorBonus: 1, Recency: 1, "karma": 1})
	require.ErrorContains(t, err, `"karma" is not a Pulse signal`)
	base := Defaults()
	base[Classifier] = 0.4
	got, err := Merge(base, Weights{Embedding: 2, Topic: -1, LLMRelevance: math.NaN(), LLMNovelty: 0.5, AuthorBonus: 0.1, Recency: 0})
	require.NoError(t, err)
	require.Equal(t, 1.0, got[Embedding])
	require.Equal(t, 0.0, got[Topic])
	require.Equal(t, 0.0, got[LLMRelevance])
	require.Equal(t, 0.4, got[Classifier], "an optional weight left out keeps its value")
}

func TestSignals(t *testing.T) {
	t.Parallel()
	lib := []float32{1, 0, 0}
	neg := []float32{0, 1, 0}
	require.InDelta(t, 1, EmbeddingSignal([]float32{1, 0, 0}, lib, neg, 0.5), 1e-6)
	c := []float32{1, 1, 0}
	require.InDelta(t, math.Sqrt(0.5)*(1-0.5), EmbeddingSignal(c, lib, neg, 0.5), 1e-6)
	require.Zero(t, EmbeddingSignal([]float32{0, 1, 0}, lib, neg, 0.5), "never below 0")
	require.InDelta(t, math.Sqrt(0.5), EmbeddingSignal(c, lib, nil, 0.5), 1e-6, "no negative feedback yet")

	topics := [][]float32{{1, 0, 0}, {0, 1, 0}}
	require.InDelta(t, 1, TopicSignal([]float32{0, 1, 0}, topics, nil), 1e-6)
	require.InDelta(t, 0.5, TopicSignal([]float32{0, 1, 0}, topics, []bool{false, true}), 1e-6, "a dampened topic counts half")

	day := now.Add(-30 * 24 * time.Hour)
	require.InDelta(t, math.Exp(-1), RecencySignal(&day, now), 1e-9)
	require.Equal(t, 1.0, RecencySignal(&now, now))
	future := now.Add(time.Hour)
	require.Equal(t, 1.0, RecencySignal(&future, now))
	require.Zero(t, RecencySignal(nil, now))

	v, who := AuthorSignal([]Author{{Name: "Grace  Hopper"}, {Name: "Ada Lovelace", S2ID: "42"}}, []Author{{Name: "grace hopper"}})
	require.Equal(t, 1.0, v)
	require.Equal(t, "Grace  Hopper", who)
	v, _ = AuthorSignal([]Author{{Name: "A. Lovelace", S2ID: "42"}}, []Author{{S2ID: "42"}})
	require.Equal(t, 1.0, v, "by Semantic Scholar id")
	v, _ = AuthorSignal([]Author{{Name: "Ada"}}, []Author{{Name: ""}})
	require.Zero(t, v)
}

func TestCentroidFadesOldFeedback(t *testing.T) {
	t.Parallel()
	old, fresh := now.Add(-PreferenceHalfLife), now
	require.InDelta(t, 0.5, Fade(old, now), 1e-12)
	require.Equal(t, 1.0, Fade(fresh, now))
	c := Centroid([][]float32{{1, 0}, {0, 1}}, []float64{Fade(old, now), Fade(fresh, now)})
	require.Greater(t, c[1], c[0], "the newer preference weighs more")
	require.InDelta(t, 1, Cosine(c, c), 1e-6)
	require.Nil(t, Centroid(nil, nil))
	require.Nil(t, Centroid([][]float32{{0, 0}}, nil))
}

func TestWhySaysTheTwoStrongestReasons(t *testing.T) {
	t.Parallel()
	pub := now.Add(-50 * time.Hour)
	s := map[string]float64{AuthorBonus: 1, LLMRelevance: 0.9, Recency: 0.9, Embedding: 0.1}
	require.Equal(t, "Judged highly relevant to your interests; by Grace Hopper, whom you follow.",
		Why(Defaults(), s, Facts{Author: "Grace Hopper", Published: &pub}, now))
	w := Weights{Recency: 1, Topic: 0.5}
	require.Equal(t, `Published 2 days ago; matches your topic "retrieval".`,
		Why(w, map[string]float64{Recency: 0.9, Topic: 0.8}, Facts{Topic: "retrieval", Published: &pub}, now))
	require.Equal(t, "A new paper in the areas you follow.", Why(Defaults(), map[string]float64{}, Facts{}, now))
}

func TestATrainedClassifierWeighsInUnlessSetByHand(t *testing.T) {
	t.Parallel()
	require.Zero(t, Effective(Defaults(), false)[Classifier])
	require.Equal(t, OptInClassifierWeight, Effective(Defaults(), true)[Classifier])
	w := Defaults()
	w[Classifier] = 0.7
	require.Equal(t, 0.7, Effective(w, true)[Classifier])
}
