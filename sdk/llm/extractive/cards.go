package extractive

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/llm"
)

// Card counts. The question of a cards request may ask for a count with
// "max_cards=N" (or "max_cards: N") anywhere in its text; N is clamped to 1..MaxCards.
// Any other text of the question is ignored.
const (
	DefaultCards = 5
	MaxCards     = 20
)

// Blank replaces the term on the front of a cloze card.
const Blank = "____"

// cardProse bounds the sentences cards are made from.
var cardProse = proseOpts{minWords: 6, maxWords: 50}

var maxCardsRE = regexp.MustCompile(`(?i)\bmax_cards\s*[=:]\s*(\d+)`)

// maxCardsOf reads "max_cards=N" from a question; DefaultCards when absent.
func maxCardsOf(question string) int {
	m := maxCardsRE.FindStringSubmatch(question)
	if m == nil {
		return DefaultCards
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return MaxCards
	}
	return min(max(n, 1), MaxCards)
}

// Term kinds and their base salience.
const (
	termMultiword = 1.2 // "Creative Commons Attribution License"
	termAcronym   = 1.0 // "BERT", "GPT-4", "ANOVA"
	termNumber    = 0.9 // "25.9 seconds", "6.7%"
	termFrequent  = 0.6 // "fusion": a content word the documents repeat
)

var (
	wordTokRE  = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'’-]*`)
	acronymRE  = regexp.MustCompile(`^[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*(-[A-Z0-9]+)*s?$`)
	romanRE    = regexp.MustCompile(`^[IVXLC]+$`)
	numUnitRE  = regexp.MustCompile(`\b\d+(?:[.,]\d+)?\s?(?:%|°C|°F|×|(?:percent|ms|seconds?|minutes?|hours?|days?|weeks?|months?|years?|kg|mg|g|ml|mL|km|cm|mm|nm|µm|Hz|kHz|MHz|GHz|GB|MB|KB|TB|dB|kW|W|mV|V|points?|participants|patients|subjects|samples|layers|parameters|tokens|words|sentences|documents|papers|examples|images|times|fold)\b)`)
	connectors = wordSet(`of for and the in on de la von van der to`)
)

// term is a candidate cloze term found in a sentence: its verbatim text and
// salience.
type term struct {
	text  string
	score float64
}

// terms finds the cloze terms of a sentence: runs of two or more capitalised
// words (with "of", "for", "and", "the", "in", ... allowed between them, and a
// sentence-initial function or filler word dropped), acronyms (two or more
// capitals, not Roman numerals or headings), numbers with a unit, and lowercase
// content words of five letters or more that the documents repeat. A term's
// salience is its kind's base times (1 + ln of its count in all documents), plus
// a tenth for each word of a multi-word term past the second.
func terms(s string, count func(string) int) []term {
	var out []term
	locs := wordTokRE.FindAllStringIndex(s, -1)
	words := wordCount(s)
	// Capitalised runs.
	capital := func(w string) bool {
		r, _ := utf8.DecodeRuneInString(w)
		return unicode.IsUpper(r) && utf8.RuneCountInString(w) >= 2
	}
	for i := 0; i < len(locs); {
		w := s[locs[i][0]:locs[i][1]]
		if !capital(w) || (i == 0 && (isStop(strings.ToLower(w)) || fillerWords[strings.ToLower(w)])) {
			i++
			continue
		}
		end, caps := i, 1
		for j := i + 1; j < len(locs); j++ {
			if strings.TrimSpace(s[locs[j-1][1]:locs[j][0]]) != "" {
				break // punctuation between the words
			}
			wj := s[locs[j][0]:locs[j][1]]
			if capital(wj) {
				end, caps = j, caps+1
				continue
			}
			if !connectors[wj] {
				break
			}
		}
		if caps >= 2 && end-i+1 < max(words*6/10, 3) {
			text := s[locs[i][0]:locs[end][1]]
			n := float64(end - i + 1)
			out = append(out, term{text: text, score: termMultiword * (1 + math.Log(float64(max(count(text), 1)))) * (1 + 0.1*max(n-2, 0))})
		}
		i = end + 1
	}
	// Acronyms.
	for _, l := range locs {
		w := strings.TrimRight(s[l[0]:l[1]], "-'’")
		if len(w) < 2 || len(w) > 10 || !acronymRE.MatchString(w) || romanRE.MatchString(w) {
			continue
		}
		if _, heading := sectionNames[strings.ToLower(w)]; heading || isStop(strings.ToLower(w)) {
			continue
		}
		out = append(out, term{text: w, score: termAcronym * (1 + math.Log(float64(max(count(w), 1))))})
	}
	// Numbers with a unit.
	for _, m := range numUnitRE.FindAllString(s, -1) {
		out = append(out, term{text: m, score: termNumber})
	}
	// Content words the documents repeat, for prose that names no capitalised
	// term: at least five letters, no function or filler word, seen twice or more.
	for _, l := range locs {
		w := s[l[0]:l[1]]
		lw := strings.ToLower(w)
		if utf8.RuneCountInString(w) < 5 || w != lw || isStop(lw) || fillerWords[lw] || strings.ContainsAny(w, "0123456789'’-") {
			continue
		}
		if c := count(w); c >= 2 {
			out = append(out, term{text: w, score: termFrequent * (1 + math.Log(float64(c)))})
		}
	}
	return out
}

// cards drafts up to n cloze cards: the candidate sentences (prose of 6 to 50
// words) are ranked by rank; each sentence's most salient term (terms) is its
// cloze, and a sentence's card scores (0.5 + rank score) × term salience. The
// best cards are kept, one per term (by stem) and one per sentence; a term that
// is a running header (a line repeated in the documents), or that stands in the
// sentence only as part of a word (Cloze), is never a cloze, nor is the title or
// a repeated line a card's sentence. Front is the
// sentence in display form with every whole-word occurrence of the term (or of
// its plural) replaced by Blank, Back is the term, Quote the verbatim sentence.
func cards(ctx context.Context, docs []llm.Document, n int) (*llm.CardDrafts, error) {
	out := &llm.CardDrafts{Cards: []llm.CardDraft{}}
	units, err := splitDocs(ctx, docs)
	if err != nil {
		return nil, err
	}
	cands := candidates(units, cardProse)
	if len(cands) == 0 {
		return out, nil
	}
	var all strings.Builder
	for _, d := range docs {
		all.WriteString(display(d.Text))
		all.WriteByte('\n')
	}
	text := all.String()
	lower := strings.ToLower(text)
	words := map[string]int{} // whole words, case-folded: "tions" is not in "citations"
	for _, w := range wordTokRE.FindAllString(lower, -1) {
		words[w]++
	}
	count := func(t string) int {
		switch {
		case acronymRE.MatchString(t):
			return strings.Count(text, t)
		case !strings.ContainsFunc(t, unicode.IsSpace):
			return words[strings.ToLower(t)]
		}
		return strings.Count(lower, strings.ToLower(display(t)))
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	boilerplate := lineStats(texts...).repeated
	// The title is no sentence to learn, and a running header repeats it.
	titles := map[string]bool{}
	for _, d := range docs {
		titles[strings.ToLower(display(d.Title))] = true
	}
	r := rank(cands)
	type draft struct {
		i     int
		term  term
		score float64
	}
	var drafts []draft
	for i, u := range cands {
		src := display(u.span.Text)
		if titles[strings.ToLower(strings.TrimRight(src, "."))] || boilerplate[strings.TrimSpace(u.span.Text)] {
			continue
		}
		ts := slices.DeleteFunc(terms(u.span.Text, count), func(t term) bool {
			_, whole := Cloze(src, display(t.text))
			return boilerplate[t.text] || !whole
		})
		if len(ts) == 0 {
			continue
		}
		best := ts[0]
		for _, t := range ts[1:] {
			if t.score > best.score {
				best = t
			}
		}
		drafts = append(drafts, draft{i: i, term: best, score: (0.5 + r.scores[i]) * best.score})
	}
	slices.SortStableFunc(drafts, func(a, b draft) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return compareUnits(cands[a.i], cands[b.i])
	})
	seen := map[string]bool{}
	for _, d := range drafts {
		if len(out.Cards) == n {
			break
		}
		key := strings.Join(tokenize(d.term.text), " ")
		if seen[key] {
			continue
		}
		seen[key] = true
		s := cands[d.i].span.Text
		front, _ := Cloze(display(s), display(d.term.text))
		out.Cards = append(out.Cards, llm.CardDraft{
			Front: front,
			Back:  display(d.term.text),
			Quote: s,
		})
	}
	return out, nil
}

// Cloze returns sentence with every whole-word occurrence of term (or of its
// plural) replaced by Blank, and whether there was one. An occurrence is whole
// when no letter or digit touches it and it does not continue a hyphenated word:
// "GP" in "the GP said" and "the GP's note", not in "GPU", "GP-based" or "non-GP",
// and never the second half of a word broken by a hyphen and a space ("cita-
// tions"). Cloze is how every cloze front is made, by this package's drafts and
// by the host from a model's drafts, so a card never blanks part of a word.
func Cloze(sentence, term string) (string, bool) {
	if term == "" {
		return sentence, false
	}
	front := blankOut(sentence, term)
	return front, front != sentence
}

// blankOut replaces every whole-word occurrence of term in s with Blank (see
// Cloze).
func blankOut(s, term string) string {
	var b strings.Builder
	done := 0 // s[:done] is written
	for from := 0; ; {
		i := strings.Index(s[from:], term)
		if i < 0 {
			b.WriteString(s[done:])
			return b.String()
		}
		i += from
		end := i + len(term)
		if wholeAt(s, i, end, term) {
			b.WriteString(s[done:i])
			b.WriteString(Blank)
			done = end
		}
		from = end
	}
}

// wholeAt reports whether s[i:end] (which is term) stands as a whole word or
// term of s: see Cloze.
func wholeAt(s string, i, end int, term string) bool {
	before, n := utf8.DecodeLastRuneInString(s[:i])
	switch {
	case i == 0:
	case wordRune(before):
		return false
	case isHyphen(before):
		if p, _ := utf8.DecodeLastRuneInString(s[:i-n]); wordRune(p) {
			return false // "non-GP"
		}
	default:
		// "cita- tions": a word broken by a hyphen and white space.
		t := strings.TrimRightFunc(s[:i], unicode.IsSpace)
		if h, hn := utf8.DecodeLastRuneInString(t); len(t) < i && isHyphen(h) {
			if p, _ := utf8.DecodeLastRuneInString(t[:len(t)-hn]); unicode.IsLetter(p) {
				return false
			}
		}
	}
	after, n := utf8.DecodeRuneInString(s[end:])
	switch {
	case end == len(s):
		return true
	case after == 's' && !strings.HasSuffix(term, "s"):
		next, _ := utf8.DecodeRuneInString(s[end+n:])
		return end+n == len(s) || !wordRune(next) && !isHyphen(next) // a plural
	case wordRune(after):
		return false
	case isHyphen(after):
		next, _ := utf8.DecodeRuneInString(s[end+n:])
		return end+n == len(s) || !wordRune(next) && !unicode.IsSpace(next) // "GP-based", "cita- "
	}
	return true
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isHyphen(r rune) bool { return r == '-' || r == '\u2010' || r == '\u2011' || r == '\u00AD' }
