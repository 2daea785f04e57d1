package classifier

import (
	"crypto/sha256"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

var day0 = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)

// reader makes the feedback of a reader who likes papers close to their library
// and judged relevant, whatever their recency: positive with probability
// sigmoid(6·(embedding + llm_relevance − 1)).
func reader(n int, seed uint64) []Example {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]Example, n)
	for i := range out {
		s := map[string]float64{}
		for _, f := range Features {
			s[f] = r.Float64()
		}
		p := sigmoid(6 * (s["embedding"] + s["llm_relevance"] - 1))
		out[i] = Example{Signals: s, Positive: r.Float64() < p, At: day0.Add(time.Duration(i) * time.Hour)}
	}
	return out
}

func TestTrainLearnsWhatTheReaderLikes(t *testing.T) {
	t.Parallel()
	m, err := Train(reader(600, 7), day0)
	require.NoError(t, err)
	require.NotNil(t, m.AUC)
	require.Greater(t, *m.AUC, 0.8, "held-out AUC")
	idx := func(f string) int {
		for i, g := range Features {
			if g == f {
				return i
			}
		}
		t.Fatalf("no feature %s", f)
		return -1
	}
	require.Greater(t, m.Weights[idx("embedding")], 1.0)
	require.Greater(t, m.Weights[idx("llm_relevance")], 1.0)
	require.Less(t, math.Abs(m.Weights[idx("recency")]), 1.0, "a signal the reader ignores weighs little")
	liked := map[string]float64{"embedding": 0.9, "llm_relevance": 0.9}
	disliked := map[string]float64{"embedding": 0.1, "llm_relevance": 0.1}
	require.Greater(t, m.Probability(liked), 0.8)
	require.Less(t, m.Probability(disliked), 0.2)
}

// The fit is the minimum of the penalised log loss: its gradient there is ~0.
func TestTrainReachesTheOptimum(t *testing.T) {
	t.Parallel()
	ex := reader(200, 3)
	w, b, err := fitLogistic(ex)
	require.NoError(t, err)
	g := make([]float64, len(w)+1)
	for _, e := range ex {
		x := vector(e.Signals)
		y := 0.0
		if e.Positive {
			y = 1
		}
		d := sigmoid(b+dot(w, x)) - y
		for j := range x {
			g[j] += d * x[j]
		}
		g[len(w)] += d
	}
	for j := range w {
		g[j] += l2 * w[j]
	}
	for j, v := range g {
		require.InDelta(t, 0, v, 1e-4, "gradient component %d", j)
	}
}

func TestTrainHoldsOutTheNewestFifthOfEachClass(t *testing.T) {
	t.Parallel()
	ex := reader(100, 11)
	var pos int
	for _, e := range ex {
		if e.Positive {
			pos++
		}
	}
	m, err := Train(ex, day0)
	require.NoError(t, err)
	require.Equal(t, pos, m.Positives)
	require.Equal(t, 100-pos, m.Negatives)
	require.Equal(t, 100-int(0.2*float64(pos))-int(0.2*float64(100-pos)), m.Samples)

	// Only the newest MaxExamples are read.
	m, err = Train(reader(MaxExamples+500, 12), day0)
	require.NoError(t, err)
	require.Equal(t, MaxExamples, m.Positives+m.Negatives)
}

func TestTrainSaysWhyItDidNotTrain(t *testing.T) {
	t.Parallel()
	var skip *SkipError
	_, err := Train(reader(29, 1), day0)
	require.ErrorAs(t, err, &skip)
	require.Equal(t, "29 ratings so far; the classifier needs at least 30", skip.Reason)

	ups := reader(40, 2)
	for i := range ups {
		ups[i].Positive = true
	}
	_, err = Train(ups, day0)
	require.ErrorAs(t, err, &skip)
	require.Contains(t, skip.Reason, "no paper was rated down yet")
	for i := range ups {
		ups[i].Positive = false
	}
	_, err = Train(ups, day0)
	require.ErrorAs(t, err, &skip)
	require.Contains(t, skip.Reason, "no paper was rated up yet")
}

// AUC is the share of (positive, negative) pairs ordered right, ties half.
func TestAUCCountsOrderedPairs(t *testing.T) {
	t.Parallel()
	m := &Model{Features: []string{"embedding"}, Weights: []float64{4}, Bias: -2}
	r := rand.New(rand.NewPCG(5, 5))
	var ex []Example
	for range 300 {
		// Coarse values, so that many scores tie.
		v := float64(r.IntN(6)) / 5
		ex = append(ex, Example{Signals: map[string]float64{"embedding": v}, Positive: r.Float64() < v})
	}
	var good, pairs float64
	for _, a := range ex {
		for _, b := range ex {
			if !a.Positive || b.Positive {
				continue
			}
			pairs++
			pa, pb := m.Probability(a.Signals), m.Probability(b.Signals)
			switch {
			case pa > pb:
				good++
			case pa == pb:
				good += 0.5
			}
		}
	}
	require.InDelta(t, good/pairs, AUC(m, ex), 1e-12)
	require.Equal(t, 0.5, AUC(m, ex[:0]))
}

func TestSignalsOutsideTheirRangeAreClamped(t *testing.T) {
	t.Parallel()
	m := &Model{Features: []string{"embedding"}, Weights: []float64{2}, Bias: -1}
	require.Equal(t, m.Probability(map[string]float64{"embedding": 1}), m.Probability(map[string]float64{"embedding": 7}))
	require.Equal(t, m.Probability(map[string]float64{}), m.Probability(map[string]float64{"embedding": math.NaN()}))
}

func TestKeyFollowsTheSpec(t *testing.T) {
	t.Parallel()
	k, err := Key("a-dedicated-model-signing-key-of-32+chars", "ops-key", false)
	require.NoError(t, err)
	require.Equal(t, []byte("a-dedicated-model-signing-key-of-32+chars"), k, "SERVICE_MODEL_HMAC_KEY is preferred")
	k, err = Key("", "ops-key", true)
	require.NoError(t, err)
	want := sha256.Sum256([]byte("model-signing:ops-key"))
	require.Equal(t, want[:], k)
	_, err = Key("", "ops-key", false)
	require.ErrorIs(t, err, ErrDerivedKeyRefused)
	_, err = Key("", "", true)
	require.ErrorIs(t, err, ErrNoKey)
}

func TestASealedModelOpensOnlyUnchanged(t *testing.T) {
	t.Parallel()
	m, err := Train(reader(120, 9), day0)
	require.NoError(t, err)
	ann, bob := uuid.New(), uuid.New()
	key := []byte("a-dedicated-model-signing-key-of-32+chars")
	blob, tag, err := Seal(m, ann, key)
	require.NoError(t, err)
	require.Len(t, tag, 32)

	got, err := Open(blob, tag, ann, key)
	require.NoError(t, err)
	require.Equal(t, m.Weights, got.Weights)
	require.Equal(t, m.Bias, got.Bias)
	require.Equal(t, m.Probability(map[string]float64{"embedding": 0.4}), got.Probability(map[string]float64{"embedding": 0.4}))

	// Every single flipped byte, of the blob or of the tag, is refused.
	for i := range blob {
		bad := append([]byte(nil), blob...)
		bad[i] ^= 0x01
		_, err := Open(bad, tag, ann, key)
		require.ErrorIs(t, err, ErrTampered, "byte %d of the blob", i)
	}
	for i := range tag {
		bad := append([]byte(nil), tag...)
		bad[i] ^= 0x80
		_, err := Open(blob, bad, ann, key)
		require.ErrorIs(t, err, ErrTampered, "byte %d of the tag", i)
	}
	_, err = Open(blob, tag, bob, key)
	require.ErrorIs(t, err, ErrTampered, "Ann's model copied onto Bob's row")
	_, err = Open(blob, tag, ann, []byte("the-key-after-a-rotation-of-32+chars"))
	require.ErrorIs(t, err, ErrTampered, "a rotated key refuses the old rows")
	_, err = Open(blob, tag, ann, nil)
	require.True(t, errors.Is(err, ErrNoKey))
}
