// Package embed turns passages into vectors for the vector store. Embedder is what
// the configured LLM plugin's Embed call will sit behind; until the LLM providers
// land, Lexical is the no-model default: feature hashing of words and word pairs,
// which needs no download and no network, and makes vector search find passages
// that share vocabulary with the question even where the full-text index's
// stemming or stop words miss them.
package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedder embeds texts with one model.
type Embedder interface {
	// Model names the embedding model; vectors of different models never meet.
	Model() string
	// Embed returns one vector per text, in order, all of one dimension.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// LexicalDimension is the length of Lexical's vectors.
const LexicalDimension = 384

// Lexical is the builtin no-model embedder (see the package comment).
type Lexical struct{}

var _ Embedder = Lexical{}

// Model names the lexical embedder and its version: a change to the hashing is a
// new model, so stored vectors are re-embedded rather than mixed.
func (Lexical) Model() string { return "lectern-lexical-v1-384" }

// Embed hashes each text's words (weight 1+ln tf) and adjacent word pairs (half
// that) into LexicalDimension signed buckets and normalises the result.
func (Lexical) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = lexical(t)
	}
	return out, nil
}

func lexical(text string) []float32 {
	words := Words(text)
	counts := make(map[string]float64, len(words)*2)
	for i, w := range words {
		counts[w]++
		if i > 0 {
			counts[words[i-1]+" "+w] += 0.5
		}
	}
	vec := make([]float32, LexicalDimension)
	for term, tf := range counts {
		h := fnv.New64a()
		_, _ = h.Write([]byte(term))
		sum := h.Sum64()
		weight := 1 + math.Log(tf)
		if tf < 1 {
			weight = tf // a word pair seen once
		}
		bucket := sum % LexicalDimension
		if sum>>63 == 1 {
			weight = -weight
		}
		vec[bucket] += float32(weight)
	}
	var norm float64
	for _, x := range vec {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range vec {
			vec[i] *= inv
		}
	}
	return vec
}

// Words splits text into lowercase words of letters and digits, dropping common
// English function words and a plural or possessive "s", so "Transformers" and
// "transformer's" meet.
func Words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	out := fields[:0]
	for _, f := range fields {
		f = strings.TrimSuffix(strings.Trim(f, "'"), "'s")
		if len(f) > 4 && strings.HasSuffix(f, "s") && !strings.HasSuffix(f, "ss") {
			f = f[:len(f)-1]
		}
		if len(f) < 2 || stop[f] {
			continue
		}
		out = append(out, f)
	}
	return out
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can do does for from has have
		how in into is it its of on or our so such than that the their then there these they this
		to was we were what when where which while who why will with would you your not no also may
		more most other some any each both all one two using use used based`) {
		m[w] = true
	}
	return m
}()
