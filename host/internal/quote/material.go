package quote

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// negativePrefixes are the word beginnings that reverse a word's sense
// ("unlikely", "insignificant", "atypical"): an exact quote that starts just
// after one of them ("likely to ...") drops a negation.
var negativePrefixes = map[string]bool{
	"a": true, "dis": true, "il": true, "im": true, "in": true, "ir": true, "non": true, "un": true,
}

// negations are the words whose presence or absence reverses a statement.
var negations = map[string]bool{
	"no": true, "not": true, "never": true, "nor": true, "neither": true, "none": true,
	"nothing": true, "nobody": true, "nowhere": true, "without": true, "cannot": true, "non": true,
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' || unicode.IsDigit(r) }

// edgeCutOK reports whether an exact match at runes[s:e] of the normalised
// text keeps the sense of the text at its edges: it must not cut a number
// ("2 cases" out of "12 cases", "5 mg" out of "0.5 mg", "0.5" out of
// "-0.5"), start just after a negative prefix ("likely" out of "unlikely")
// or end just before "not" or "n't" ("can" out of "cannot"). Any other cut
// inside a word is accepted: an exact substring verifies.
func edgeCutOK(rs []rune, s, e int) bool {
	at := func(i int) rune {
		if i < 0 || i >= len(rs) {
			return ' '
		}
		return rs[i]
	}
	if isDigit(at(s)) && numberBefore(rs, s) {
		return false
	}
	if isWordRune(at(s)) && isWordRune(at(s-1)) {
		ws := s
		for ws > 0 && isWordRune(rs[ws-1]) {
			ws--
		}
		if negativePrefixes[string(rs[ws:s])] {
			return false
		}
	}
	if isDigit(at(e-1)) && (isDigit(at(e)) || (at(e) == '.' || at(e) == ',') && isDigit(at(e+1))) {
		return false
	}
	if isWordRune(at(e-1)) && isWordRune(at(e)) {
		tail := string(rs[e:min(e+3, len(rs))])
		if tail == "n't" || tail == "not" && !isWordRune(at(e+3)) {
			return false
		}
	}
	return true
}

// numberBefore reports whether the number starting at rs[s] continues to the
// left: a digit, a decimal point or comma after a digit, or a minus sign.
func numberBefore(rs []rune, s int) bool {
	if s == 0 {
		return false
	}
	p := rs[s-1]
	switch {
	case isDigit(p):
		return true
	case p == '.' || p == ',':
		return s >= 2 && isDigit(rs[s-2])
	case p == '-':
		return s < 2 || !isWordRune(rs[s-2])
	}
	return false
}

// materialOK reports whether a fuzzy match, the quote qr against the
// normalised text's runes [s, e), differs from the text only in form. The
// passage is first widened to whole words (and a leading minus sign). Both
// are cut into tokens (words, numbers, comparison signs) and aligned by
// longest common subsequence; every stretch where they differ must be one
// of:
//   - the same letters and digits split differently ("state-ofthe-art" for
//     "state-of-the-art", "heartfailure" for "heart failure");
//   - words of the passage the quote leaves out, all of them plain numbers
//     (citation and footnote markers);
//   - words respelled one for one, each pair at most one edit apart, both of
//     at least four letters, with no digit, negation or sign, and not a
//     negative "a-" prefix ("analysed" for "analyzed", "colour" for "color").
//
// Anything else (a changed number or sign, a negation added or dropped, a
// word added, dropped, replaced or moved) is a material change.
func materialOK(qr, rs []rune, s, e int) bool {
	for s > 0 && s < len(rs) && isWordRune(rs[s]) && isWordRune(rs[s-1]) {
		s--
	}
	if s < len(rs) && isDigit(rs[s]) && numberBefore(rs, s) {
		for s > 0 && !(rs[s-1] == ' ') {
			s--
		}
	}
	for e < len(rs) && e > 0 && isWordRune(rs[e-1]) && isWordRune(rs[e]) {
		e++
	}
	qt, pt := tokenize(qr), tokenize(rs[s:e])
	for _, d := range diff(qt, pt) {
		if !regionOK(d.q, d.p) {
			return false
		}
	}
	return true
}

// token is a word, a number or a sign of a quote or passage, lower-cased
// (normalisation did that) and without diacritics.
type token string

func (t token) hasDigit() bool { return strings.ContainsFunc(string(t), isDigit) }

// allDigits: a plain number such as a citation marker ("12").
func (t token) allDigits() bool {
	return t != "" && !strings.ContainsFunc(string(t), func(r rune) bool { return !isDigit(r) })
}

// isSign: a comparison or other math sign, "%" or a minus.
func (t token) isSign() bool {
	r, size := utf8.DecodeRuneInString(string(t))
	return size == len(t) && !isWordRune(r)
}

func (t token) isNegation() bool {
	return negations[string(t)] || strings.HasSuffix(string(t), "n't")
}

// tokenize cuts normalised runes into tokens: runs of letters, digits and
// marks (an apostrophe between letters and a point or comma between digits
// stay inside: "don't", "0.05", "1,000"), and the signs that change a
// statement's sense: math symbols (< > = ± ...), "%" and a minus sign before a
// number. Other punctuation and spaces separate tokens.
func tokenize(rs []rune) []token {
	var out []token
	at := func(i int) rune {
		if i < 0 || i >= len(rs) {
			return ' '
		}
		return rs[i]
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case isWordRune(r):
			j := i + 1
			for j < len(rs) {
				c := rs[j]
				if isWordRune(c) ||
					c == '\'' && unicode.IsLetter(at(j-1)) && unicode.IsLetter(at(j+1)) ||
					(c == '.' || c == ',') && isDigit(at(j-1)) && isDigit(at(j+1)) {
					j++
					continue
				}
				break
			}
			out = append(out, token(foldMarks(string(rs[i:j]))))
			i = j
		case unicode.Is(unicode.Sm, r) || r == '%' || r == '-' && isDigit(at(i+1)) && !isWordRune(at(i-1)):
			out = append(out, token(string(r)))
			i++
		default:
			i++
		}
	}
	return out
}

// foldMarks removes diacritics: "naïve" -> "naive".
func foldMarks(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			d := norm.NFD.String(s)
			return norm.NFC.String(strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				return r
			}, d))
		}
	}
	return s
}

// region is a stretch where the quote's tokens q and the passage's tokens p
// differ, between tokens they share.
type region struct{ q, p []token }

// diff aligns a and b by longest common subsequence and returns the
// stretches between common tokens where they differ.
func diff(a, b []token) []region {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out []region
	var cur region
	flush := func() {
		if len(cur.q) > 0 || len(cur.p) > 0 {
			out = append(out, cur)
		}
		cur = region{}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			i++
			j++
		case j < m && (i == n || l[i][j+1] >= l[i+1][j]):
			cur.p = append(cur.p, b[j])
			j++
		default:
			cur.q = append(cur.q, a[i])
			i++
		}
	}
	flush()
	return out
}

// regionOK applies the rules of materialOK to one differing stretch.
func regionOK(q, p []token) bool {
	if concat(q) == concat(p) {
		return true
	}
	switch {
	case len(q) == 0:
		for _, t := range p {
			if !t.allDigits() {
				return false
			}
		}
		return true
	case len(q) != len(p):
		return false
	}
	for i := range q {
		if !respelling(q[i], p[i]) {
			return false
		}
	}
	return true
}

func concat(ts []token) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(string(t))
	}
	return b.String()
}

// respelling reports whether a and b may be two spellings of one word.
func respelling(a, b token) bool {
	for _, t := range []token{a, b} {
		if t.hasDigit() || t.isSign() || t.isNegation() || utf8.RuneCountInString(string(t)) < 4 {
			return false
		}
	}
	if "a"+a == b || "a"+b == a {
		return false
	}
	return levenshtein([]rune(string(a)), []rune(string(b))) <= 1
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
