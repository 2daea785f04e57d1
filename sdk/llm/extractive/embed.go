package extractive

import "math"

// EmptyBucket is the one bucket set (to +1) in the vector of a text with no words
// (empty, white space or punctuation only): a zero vector has no cosine, so every
// such text gets the unit vector along this bucket instead. Empty texts therefore
// match each other exactly and are close to orthogonal to real text.
const EmptyBucket = 0

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// embedText is the lexical embedding of one text: its words (weight (1+ln tf) ×
// weight(word)) and the pairs of adjacent non-function words (weight (1+ln tf) ×
// bigramScale × the lower word weight), each hashed with FNV-1a 64 into one of
// Dimension buckets with the sign given by the hash's top bit, then L2-normalised.
//
// The result has the same bits on every platform: terms are added in the order
// they first occur, each floating-point operation is rounded explicitly (so no
// multiply-add is fused) and the logarithm is computed by ln, not math.Log.
func embedText(text string) []float32 {
	toks := tokenize(text)
	// Features are keyed by their hash: two terms with one 64-bit hash would share
	// a count, which is as likely as never.
	type feature struct {
		h  uint64
		w  float64
		tf int
	}
	feats := make([]feature, 0, 2*len(toks))
	index := make(map[uint64]int, 2*len(toks))
	add := func(h uint64, w float64) {
		if i, ok := index[h]; ok {
			feats[i].tf++
			return
		}
		index[h] = len(feats)
		feats = append(feats, feature{h: h, w: w, tf: 1})
	}
	var prevH uint64
	prevW := 0.0
	for _, t := range toks {
		w := weight(t)
		h := fnv1a(fnvOffset64, t)
		add(h, w)
		if isStop(t) {
			continue
		}
		if prevW > 0 {
			// The pair "prev t": the hash of prev continued with a space and t.
			add(fnv1a(fnv1a(prevH, " "), t), float64(bigramScale*min(prevW, w)))
		}
		prevH, prevW = h, w
	}
	vec := make([]float64, Dimension)
	for _, f := range feats {
		w := f.w
		if f.tf > 1 {
			w = float64(float64(1+ln(float64(f.tf))) * f.w)
		}
		b := f.h % Dimension
		if f.h>>63 == 1 {
			vec[b] = float64(vec[b] - w)
		} else {
			vec[b] = float64(vec[b] + w)
		}
	}
	var sum float64
	for _, x := range vec {
		sum = float64(sum + float64(x*x))
	}
	out := make([]float32, Dimension)
	if sum == 0 {
		out[EmptyBucket] = 1
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range vec {
		out[i] = float32(x * inv)
	}
	return out
}

// fnv1a continues the 64-bit FNV-1a hash h with the bytes of s; from
// fnvOffset64 it is the hash of s.
func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// ln is the natural logarithm of x > 0 from IEEE-754 basic operations only, each
// rounded explicitly, so it returns the same bits on every platform (math.Log has
// per-architecture assembly, and the compiler may fuse multiply-adds). x = m·2^e
// with m in [√2/2, √2), and ln m = 2·atanh((m-1)/(m+1)) by its series, whose terms
// shrink by a factor of at least 34 each, so 14 terms are exact to a rounding.
func ln(x float64) float64 {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m = float64(m * 2)
		e--
	}
	s := float64(float64(m-1) / float64(m+1))
	s2 := float64(s * s)
	sum, term := 0.0, s
	for k := 1; k <= 27; k += 2 {
		sum = float64(sum + float64(term/float64(k)))
		term = float64(term * s2)
	}
	return float64(float64(float64(e)*math.Ln2) + float64(2*sum))
}
