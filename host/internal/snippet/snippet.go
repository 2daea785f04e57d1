// Package snippet builds the short extract of a passage shown under a search
// result, with the words that match the query marked: the window of the passage
// that holds most of the query's words, at most MaxWords words long.
//
// It reads a query as PostgreSQL's text form of a tsquery (what
// websearch_to_tsquery returns), whose lexemes are the english configuration's
// Snowball stems, and stems the passage's words with the same Snowball english
// stemmer, so a word is marked when PostgreSQL would match it. It replaces
// ts_headline, which parsed and stemmed every passage again inside PostgreSQL and
// cost about half a millisecond a passage there (docs/benchmarks.md).
package snippet

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Lengths of a snippet, in words.
const (
	// MaxWords is the longest snippet.
	MaxWords = 35
	// MinWords is the length of the opening words shown for a passage the query
	// does not match.
	MinWords = 12
)

// Terms returns the lexemes of a tsquery's text ('space' <-> 'repetit' &
// !'forget') that count for a match: each once, in order, without those under a
// negation.
func Terms(tsquery string) []string {
	var out []string
	seen := map[string]bool{}
	negated := false
	for i := 0; i < len(tsquery); i++ {
		switch c := tsquery[i]; c {
		case '!':
			negated = true
		case '(':
			// "!( 'a' | 'b' )" negates the group: skip it whole.
			if negated {
				i = closing(tsquery, i)
				negated = false
			}
		case '\'':
			lexeme, end := quoted(tsquery, i)
			i = end
			if !negated && lexeme != "" && !seen[lexeme] {
				seen[lexeme] = true
				out = append(out, lexeme)
			}
			negated = false
		}
	}
	return out
}

// quoted reads the lexeme quoted at s[i] (” is a quote inside it) and returns it
// with the index of its closing quote (or of the last byte).
func quoted(s string, i int) (string, int) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != '\'' {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return b.String(), skipWeights(s, j)
	}
	return b.String(), len(s) - 1
}

// skipWeights skips a lexeme's suffix (:*, :AB) after its closing quote at s[j].
func skipWeights(s string, j int) int {
	if j+1 < len(s) && s[j+1] == ':' {
		j++
		for j+1 < len(s) && strings.IndexByte("*ABCDabcd", s[j+1]) >= 0 {
			j++
		}
	}
	return j
}

// closing returns the index of the parenthesis that closes the one at s[i],
// skipping quoted lexemes.
func closing(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		case '\'':
			_, i = quoted(s, i)
		}
	}
	return len(s) - 1
}

// word is one word of the passage: bytes [start, end) of it, and the index of the
// query term it matches (-1 for none).
type word struct {
	start, end int
	term       int
}

func (w word) matches() bool { return w.term >= 0 }

// Build returns the snippet of text for a query of terms (Terms): the window of
// at most MaxWords words with the most distinct terms, then the most matching
// words, centred on its matches, with the text's runs of white space made single
// spaces; and the [start, end) byte offsets in it of each matching word. A text
// the terms do not match gets its first MinWords words and no highlights.
func Build(text string, terms []string) (string, [][2]int) {
	words := split(text)
	if len(words) == 0 {
		return "", [][2]int{}
	}
	mark(text, words, terms)
	first, last, ok := best(words, len(terms))
	if !ok {
		return render(text, words[:min(MinWords, len(words))])
	}
	// Centre the matches in a window of MaxWords words, or begin it with the
	// sentence of the first match when that sentence begins inside the window
	// (a snippet that starts mid-sentence reads as a fragment).
	slack := MaxWords - (last - first + 1)
	from := max(0, first-slack/2)
	for s := first; s > from; s-- {
		if sentenceStart(text, words, s) {
			from = s
			break
		}
	}
	to := min(len(words), from+MaxWords)
	from = max(0, to-MaxWords)
	return render(text, words[from:to])
}

// sentenceStart reports whether words[i] begins a sentence: a capital after a
// full stop, question or exclamation mark (and maybe a closing quote or bracket)
// and white space.
func sentenceStart(text string, words []word, i int) bool {
	if i == 0 {
		return true
	}
	if r, _ := utf8.DecodeRuneInString(text[words[i].start:]); !unicode.IsUpper(r) {
		return false
	}
	gap := text[words[i-1].end:words[i].start]
	end := strings.TrimRightFunc(gap, unicode.IsSpace)
	if len(end) == len(gap) {
		return false
	}
	end = strings.TrimRight(end, `"')]`)
	return strings.HasSuffix(end, ".") || strings.HasSuffix(end, "?") || strings.HasSuffix(end, "!")
}

// split finds the words of text: runs of letters and digits, a number keeping its
// decimal point or comma (3.5, 1,000) as PostgreSQL's parser does.
func split(text string) []word {
	var out []word
	start := -1
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if !inWord && (r == '.' || r == ',') && start >= 0 && i > 0 && isDigit(text[i-1]) && i+1 < len(text) && isDigit(text[i+1]) {
			inWord = true
		}
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			out = append(out, word{start: start, end: i, term: -1})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, word{start: start, end: len(text), term: -1})
	}
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// mark sets the term of each word whose stem is one of terms.
func mark(text string, words []word, terms []string) {
	index := make(map[string]int, len(terms))
	for i, t := range terms {
		if t != "" {
			index[t] = i
		}
	}
	stems := map[string]int{}
	for i := range words {
		w := strings.ToLower(text[words[i].start:words[i].end])
		if !couldStemTo(w, terms) || inPathOrAddress(text, words[i]) {
			continue
		}
		t, ok := stems[w]
		if !ok {
			t = -1
			if n, found := index[english.Stem(w, false)]; found {
				t = n
			} else if n, found := index[w]; found { // a lexeme PostgreSQL keeps whole
				t = n
			}
			stems[w] = t
		}
		if s := words[i].start; t < 0 && s > 0 && (text[s-1] == '-' || text[s-1] == '+') && isDigit(w[0]) {
			// A signed number: PostgreSQL reads "28-36" as 28 and -36.
			if n, found := index[text[s-1:s]+w]; found {
				t = n
				words[i].start--
			}
		}
		words[i].term = t
	}
}

// inPathOrAddress reports whether w is part of a run of text without white space
// that holds a slash or an at sign (and/or, a DOI, a URL, an e-mail address):
// PostgreSQL's parser reads such a run as one path, URL or address token, so its
// words match nothing on their own.
func inPathOrAddress(text string, w word) bool {
	for i := w.start - 1; i >= 0 && !isSpaceByte(text[i]); i-- {
		if text[i] == '/' || text[i] == '@' {
			return true
		}
	}
	for i := w.end; i < len(text) && !isSpaceByte(text[i]); i++ {
		if text[i] == '/' || text[i] == '@' {
			return true
		}
	}
	return false
}

func isSpaceByte(b byte) bool {
	return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f' || b == '\v'
}

// couldStemTo reports whether word w might have one of terms for its stem. The
// Snowball english stemmer changes a word's ending only (its suffixes lie past
// the word's first two letters, and a replacement keeps a suffix's first letter),
// but it may make a final y an i (study, studi) or an i a y (skies, sky) and add
// an e (using, use; dying, die). So a stem, without a final e, shares its word's
// first three letters, i and y taken for one. Most words of a passage fail this
// and skip the stemmer.
func couldStemTo(w string, terms []string) bool {
	for _, t := range terms {
		if len(t) > 1 && (t[0] == '-' || t[0] == '+') {
			t = t[1:] // a signed number: its digits begin the word
		}
		if len(t) > 1 && t[len(t)-1] == 'e' {
			t = t[:len(t)-1]
		}
		k := min(3, len(t))
		if len(w) < k {
			continue
		}
		same := true
		for j := range k {
			if w[j] != t[j] && !(iOrY(t[j]) && iOrY(w[j])) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func iOrY(b byte) bool { return b == 'i' || b == 'y' }

// best returns the first and last matching word of the window of MaxWords words
// holding the most distinct terms, then the most matching words, the earliest
// on a tie; ok false when no word matches.
func best(words []word, terms int) (first, last int, ok bool) {
	bestTerms, bestMatches := 0, 0
	seen := make([]bool, terms)
	for i := range words {
		if !words[i].matches() {
			continue
		}
		clear(seen)
		distinct, matches, end := 0, 0, i
		for j := i; j < len(words) && j < i+MaxWords; j++ {
			if t := words[j].term; t >= 0 {
				if !seen[t] {
					seen[t] = true
					distinct++
				}
				matches++
				end = j
			}
		}
		if distinct > bestTerms || (distinct == bestTerms && matches > bestMatches) {
			bestTerms, bestMatches = distinct, matches
			first, last, ok = i, end, true
		}
	}
	return first, last, ok
}

// render writes the words (a run of text's words) with the text between them,
// white space made single spaces, and the offsets of the matching ones. The
// punctuation just after the last word is kept (up to white space).
func render(text string, words []word) (string, [][2]int) {
	end := words[len(words)-1].end
	for end < len(text) {
		r, size := utf8.DecodeRuneInString(text[end:])
		if unicode.IsSpace(r) {
			break
		}
		end += size
	}
	var b strings.Builder
	b.Grow(end - words[0].start)
	highlights := [][2]int{}
	at, space := words[0].start, false
	put := func(to int) {
		for i := at; i < to; {
			r, size := utf8.DecodeRuneInString(text[i:to])
			if unicode.IsSpace(r) {
				space = true
			} else {
				if space && b.Len() > 0 {
					b.WriteByte(' ')
				}
				space = false
				b.WriteString(text[i : i+size]) // as it was, invalid bytes too
			}
			i += size
		}
		at = to
	}
	for _, w := range words {
		put(w.start)
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			space = false
		}
		start := b.Len()
		put(w.end)
		if w.matches() {
			highlights = append(highlights, [2]int{start, b.Len()})
		}
	}
	put(end)
	return b.String(), highlights
}
