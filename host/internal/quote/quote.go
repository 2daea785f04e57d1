package quote

import (
	"math"
	"strings"
	"unicode"
)

// Threshold is the similarity at or above which a quote is verified: the
// reference implementation's fuzzy partial ratio of 97. A quote of m runes
// (normalised) may therefore differ from the passage by at most
// floor(0.03*m) edits: none below 34 runes, 3 at 100, 9 at 300.
const Threshold = 0.97

// MinWords and MinLetters bound the quotes that are checked at all: a quote
// with fewer than MinWords words or fewer than MinLetters letters and digits
// (after normalisation and stripping its wrapper) is rejected with
// ReasonTooShort, because a short string matches almost anywhere.
const (
	MinWords   = 3
	MinLetters = 12
)

// Reason says why a quote was not verified.
type Reason string

// The reasons. A verified Result has the empty Reason.
const (
	// ReasonEmpty: the quote is empty or only whitespace.
	ReasonEmpty Reason = "empty"
	// ReasonWrapperOnly: the quote holds no letter or digit, only quote marks,
	// ellipses or other punctuation.
	ReasonWrapperOnly Reason = "wrapper-only"
	// ReasonTooShort: fewer than MinWords words or MinLetters letters.
	ReasonTooShort Reason = "too-short"
	// ReasonNotFound: no passage reaches Threshold.
	ReasonNotFound Reason = "not-found"
	// ReasonMaterialChange: a passage reaches Threshold, but the quote differs
	// from it in a number, a negation, a comparison sign or a word (see
	// "Material changes" in the package doc).
	ReasonMaterialChange Reason = "material-change"
)

// Result is the outcome of checking one quote.
type Result struct {
	// Verified is true when the quote may be shown as verbatim.
	Verified bool
	// Similarity is 1 - d/m for the best passage found, d its edit distance
	// from the normalised quote and m the quote's length in runes; 1 for an
	// exact match. Below Threshold it is only a lower bound (the search looks
	// closely only where a verifiable match could be), 0 when nothing came
	// near.
	Similarity float64
	// Start and End are the byte offsets of the best passage in the original
	// text, End exclusive; -1, -1 when no passage was found. They are set for
	// ReasonMaterialChange too, so the caller can show what the text says.
	Start, End int
	// Reason is empty when Verified, else why not.
	Reason Reason
}

func rejected(r Reason) Result { return Result{Start: -1, End: -1, Reason: r} }

// Index is a paper's text normalised once, for verifying many quotes against
// it. It is safe for concurrent use.
type Index struct {
	n normalized
	// s is n.runes as UTF-8, for substring search; runeAt maps a byte offset
	// of s (at a rune start) to the rune index.
	s      string
	runeAt []int32
	g      grams
}

// NewIndex normalises text for Verify. It costs about as much as Normalize.
func NewIndex(text string) *Index {
	n := normalize(text)
	var b strings.Builder
	b.Grow(len(n.runes))
	runeAt := make([]int32, 0, len(n.runes)+1)
	for i, r := range n.runes {
		k := b.Len()
		b.WriteRune(r)
		for range b.Len() - k {
			runeAt = append(runeAt, int32(i))
		}
	}
	runeAt = append(runeAt, int32(len(n.runes)))
	s := b.String()
	return &Index{n: n, s: s, runeAt: runeAt, g: newGrams(s)}
}

// Verify checks one quote against text. To check several quotes against the
// same text, build an Index once.
func Verify(text, quote string) Result {
	return NewIndex(text).Verify(quote)
}

// Verify checks quote against the indexed text.
func (x *Index) Verify(quote string) Result {
	if strings.TrimFunc(quote, func(r rune) bool { return unicode.IsSpace(r) || ignorable(r) }) == "" {
		return rejected(ReasonEmpty)
	}
	q := stripWrapper(Normalize(quote))
	words, letters := countContent(q)
	switch {
	case letters == 0:
		return rejected(ReasonWrapperOnly)
	case words < MinWords || letters < MinLetters:
		return rejected(ReasonTooShort)
	}

	// Exact: the first occurrence whose edges cut no number or negation.
	var first, found *Result
	x.g.occurrences(x.s, q, func(b int) bool {
		s, e := int(x.runeAt[b]), int(x.runeAt[b+len(q)])
		res := x.result(s, e, 1)
		if edgeCutOK(x.n.runes, s, e) {
			res.Verified = true
			found = &res
			return false
		}
		if first == nil {
			res.Reason = ReasonMaterialChange
			first = &res
		}
		return true
	})
	if found != nil {
		return *found
	}
	if first != nil {
		return *first
	}

	// Fuzzy.
	qr := []rune(q)
	m := len(qr)
	maxEdits := editBudget(m)
	al, ok := x.align(qr, maxEdits)
	if !ok {
		return rejected(ReasonNotFound)
	}
	res := x.result(al.start, al.end, similarity(al.dist, m))
	switch {
	case al.dist > maxEdits:
		res.Reason = ReasonNotFound
	case !materialOK(qr, x.n.runes, al.start, al.end):
		res.Reason = ReasonMaterialChange
	default:
		res.Verified = true
	}
	return res
}

// similarity is 1 - d/m, computed so that it is at least Threshold exactly
// when d is within editBudget(m).
func similarity(d, m int) float64 { return float64(m-d) / float64(m) }

// editBudget is the largest d with similarity(d, m) >= Threshold.
func editBudget(m int) int {
	d := int(math.Floor((1 - Threshold) * float64(m)))
	for d > 0 && similarity(d, m) < Threshold {
		d--
	}
	for d+1 <= m && similarity(d+1, m) >= Threshold {
		d++
	}
	return d
}

// result is an unverified Result for the normalised runes [s, e), trimmed
// of spaces at its edges.
func (x *Index) result(s, e int, sim float64) Result {
	for s < e && x.n.runes[s] == ' ' {
		s++
	}
	for e > s && x.n.runes[e-1] == ' ' {
		e--
	}
	if s == e {
		return Result{Similarity: sim, Start: -1, End: -1}
	}
	start, end := x.n.origSpan(s, e)
	return Result{Similarity: sim, Start: start, End: end}
}

// stripWrapper removes, from both ends of a normalised quote, spaces, quote
// marks and ellipses ("...", ". . .", "[...]", "(...)"), which a quote
// often carries but the text need not.
func stripWrapper(q string) string {
	for {
		prev := q
		q = strings.Trim(q, ` "'`)
		for _, w := range []string{"[...]", "(...)", "...", ". . ."} {
			q = strings.TrimPrefix(q, w)
			q = strings.TrimSuffix(q, w)
		}
		if q == prev {
			return q
		}
	}
}

// countContent counts the words (runs of letters and digits) and the
// letters and digits of s.
func countContent(s string) (words, letters int) {
	in := false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w {
			letters++
			if !in {
				words++
			}
		}
		in = w || (in && unicode.Is(unicode.Mn, r))
	}
	return words, letters
}
