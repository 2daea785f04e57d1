package quote

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchText returns about n bytes of paper-like text: words from a fixed
// vocabulary in lines of about 70 characters, some hyphenated at the line
// end, some with ligatures.
func benchText(n int) string {
	r := rand.New(rand.NewPCG(7, 8))
	vocab := make([]string, 400)
	for i := range vocab {
		var b strings.Builder
		writeLetters(&b, r, 2+r.IntN(9))
		vocab[i] = b.String()
	}
	vocab[0], vocab[1], vocab[2] = "e\uFB00ect", "signi\uFB01cant", "\uFB02ow"
	var b strings.Builder
	line := 0
	for b.Len() < n {
		w := vocab[r.IntN(len(vocab))]
		switch {
		case line+len(w) > 70 && len(w) > 5 && r.IntN(3) == 0:
			b.WriteString(w[:3] + "-\n" + w[3:] + " ")
			line = len(w) - 2
		case line+len(w) > 70:
			b.WriteString("\n" + w + " ")
			line = len(w) + 1
		default:
			b.WriteString(w + " ")
			line += len(w) + 1
		}
	}
	return b.String()
}

// benchQuote returns whole words, about 300 runes, of the normalised text
// from its middle, as is (exact) or with four spaces removed (fuzzy: 4
// edits, verified as a formatting difference).
func benchQuote(text string, fuzzy bool) string {
	norm := []rune(Normalize(text))
	mid := len(norm) / 2
	for norm[mid-1] != ' ' {
		mid++
	}
	end := mid + 300
	for norm[end] != ' ' {
		end--
	}
	q := string(norm[mid:end])
	if fuzzy {
		var b strings.Builder
		removed := 0
		for i, r := range q {
			if r == ' ' && removed < 4 && i > 50*(removed+1) {
				removed++
				continue
			}
			b.WriteRune(r)
		}
		q = b.String()
	}
	q = strings.TrimSpace(q)
	return q
}

func benchVerify(b *testing.B, q string, wantVerified bool, wantExact bool) {
	text := benchText(100_000)
	x := NewIndex(text)
	res := x.Verify(q)
	if res.Verified != wantVerified || (res.Similarity == 1) != wantExact {
		b.Fatalf("quote of %d runes: %+v", utf8.RuneCountInString(q), res)
	}
	for b.Loop() {
		x.Verify(q)
	}
}

// BenchmarkVerifyFuzzy: a 300-rune quote 4 edits from a passage of 100k
// characters of text.
func BenchmarkVerifyFuzzy(b *testing.B) {
	benchVerify(b, benchQuote(benchText(100_000), true), true, false)
}

// BenchmarkVerifyExact: a 300-rune quote found exactly.
func BenchmarkVerifyExact(b *testing.B) {
	benchVerify(b, benchQuote(benchText(100_000), false), true, true)
}

// BenchmarkVerifyFabricated: a 300-rune quote not in the text.
func BenchmarkVerifyFabricated(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	var sb strings.Builder
	for sb.Len() < 300 {
		writeLetters(&sb, r, 2+r.IntN(9))
		sb.WriteByte(' ')
	}
	benchVerify(b, strings.TrimSpace(sb.String()), false, false)
}

// BenchmarkNewIndex: normalising 100k characters of text once.
func BenchmarkNewIndex(b *testing.B) {
	text := benchText(100_000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		NewIndex(text)
	}
}

// BenchmarkVerifyOnce: Verify without an Index (normalise, then check one
// fuzzy quote).
func BenchmarkVerifyOnce(b *testing.B) {
	text := benchText(100_000)
	q := benchQuote(text, true)
	for b.Loop() {
		Verify(text, q)
	}
}
