package pdftext

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pdftotext starts a new word wherever the font size changes, so a word set in
// small capitals ("LongEval" printed as L, ONG, E, VAL in two sizes) comes out
// as "L ONG E VAL", and a letter-spaced word ("T I T L E") as single letters.
// capsGroups finds such runs; fixCaps (titles) and rejoinCaps (body lines)
// apply them, one to plain words, the other to lines that keep the map back to
// the raw text.

// gapGeom is how two neighbouring words of a line sit, read from their boxes.
type gapGeom struct {
	// touch: the second starts where the first ends (within 15 % of the larger
	// height), as the parts of one word do; a space is wider.
	touch bool
	// ratio is the second word's height over the first's: about 0.8 from a
	// capital to small capitals, 1.25 back.
	ratio float64
	// gap is the space between them over the first word's height.
	gap float64
	// base is how much lower the second word's bottom is than the first's,
	// over the first word's height: small capitals stand on the capitals'
	// baseline, so their bottom is a little higher (about -0.05); a subscript's
	// is lower.
	base float64
}

// capsGroup is a run of words [from, to) to be read as one word; small marks
// the words set in small capitals, which read in lowercase.
type capsGroup struct {
	from, to int
	small    []bool
}

var (
	capOne      = regexp.MustCompile(`^\p{Lu}$`)
	capsRun     = regexp.MustCompile(`^\p{Lu}{2,}$`)
	punctOne    = regexp.MustCompile(`^[:;,.!?)]$`)
	openCap     = regexp.MustCompile(`^[(\[“"]?\p{Lu}$`)          // a capital, maybe after an opening mark
	smallWord   = regexp.MustCompile(`^\p{Lu}+[.,;:!?)\]”"'-]*$`) // small capitals, maybe before punctuation
	capThenTail = regexp.MustCompile(`^\p{Lu}(\P{L}.*)?$`)        // a capital ending a run ("X-parse)")
	bigWord     = regexp.MustCompile(`^\p{Lu}+$`)                 // capitals inside a run ("BERT" in "R O BERT A")
	bigEnd      = regexp.MustCompile(`^\p{Lu}+[.,;:!?)\]”"'-]*$`) // capitals ending a run
)

// capsGroups returns the runs of words that pdftotext split out of one word.
// With geom nil (a title, whose lines are large and whose words are few) the
// text decides: a capital followed by two or more capitals, repeated ("L ONG E
// VAL"), or three or more single letters. With geom (geom[i] is how words i and
// i+1 sit) the boxes must agree: small capitals touch the capital before them
// and are about 0.7 to 0.9 of its height, so "A BERT model" or a subscript stays
// as it is; a run may start with small capitals at the start of a line (a word
// hyphenated across lines), end with a capital ("L A T E X"), and take touching
// punctuation; letter-spaced letters are evenly and narrowly spaced.
func capsGroups(words []string, geom []gapGeom) []capsGroup {
	var out []capsGroup
	for i := 0; i < len(words); {
		g, ok := smallCapsAt(words, geom, i)
		if !ok {
			g, ok = letterSpacedAt(words, geom, i)
		}
		if !ok {
			i++
			continue
		}
		out = append(out, g)
		i = g.to
	}
	return out
}

// smallCapsAt reads a small-capitals run starting at word i.
func smallCapsAt(words []string, geom []gapGeom, i int) (capsGroup, bool) {
	if geom == nil {
		j := i
		for j+1 < len(words) && capOne.MatchString(words[j]) && capsRun.MatchString(words[j+1]) {
			j += 2
		}
		if j == i {
			return capsGroup{}, false
		}
		g := capsGroup{from: i, to: j, small: make([]bool, j-i)}
		for k := 1; k < j-i; k += 2 {
			g.small[k] = true
		}
		return g, true
	}
	// Small capitals stand on the baseline of the capitals: a little higher at
	// the bottom going down a size, a little lower coming back. A subscript
	// sits lower, and Greek capitals are mathematics.
	down := func(k int) bool {
		g := geom[k]
		return g.touch && g.ratio >= 0.7 && g.ratio <= 0.9 && g.base >= -0.09 && g.base <= -0.01 && latin(words[k+1])
	}
	up := func(k int) bool {
		g := geom[k]
		return g.touch && g.ratio >= 1.1 && g.ratio <= 1.45 && g.base >= 0.01 && g.base <= 0.09 && latin(words[k])
	}
	var small []bool
	j := i
	if i == 0 && capsRun.MatchString(words[0]) && len(words) > 2 && up(0) && capOne.MatchString(words[1]) {
		small, j = append(small, true), 1 // the rest of a word begun on the line before
	}
	for j+1 < len(words) && (j == i && openCap.MatchString(words[j]) || j > i && bigWord.MatchString(words[j])) &&
		smallWord.MatchString(words[j+1]) && down(j) {
		small = append(small, false, true)
		j += 2
		if last, _ := utf8.DecodeLastRuneInString(words[j-1]); !unicode.IsLetter(last) {
			break // punctuation closes the word
		}
		if j < len(words) && !up(j-1) {
			break
		}
	}
	if len(small) < 2 || !small[len(small)-1] {
		return capsGroup{}, false
	}
	if j < len(words) && up(j-1) && (capThenTail.MatchString(words[j]) || bigEnd.MatchString(words[j])) {
		small, j = append(small, false), j+1 // capitals end it: "L A T E X", "S CI BERT"
	}
	for j < len(words) && geom[j-1].touch && (punctOne.MatchString(words[j]) || words[j] == "-") {
		small, j = append(small, false), j+1
	}
	return capsGroup{from: i, to: j, small: small}, true
}

// letterSpacedAt reads three or more single letters starting at word i; with
// geom, evenly spaced, closer than a space and closer than the words around.
func letterSpacedAt(words []string, geom []gapGeom, i int) (capsGroup, bool) {
	single := func(k int) bool {
		r, n := utf8.DecodeRuneInString(words[k])
		return n == len(words[k]) && unicode.IsLetter(r)
	}
	j := i
	for j < len(words) && single(j) {
		j++
	}
	if j-i < 3 {
		return capsGroup{}, false
	}
	if geom != nil {
		lo, hi := 1.0, 0.0
		for k := i; k+1 < j; k++ {
			if g := geom[k]; g.ratio < 0.95 || g.ratio > 1.05 || !latin(words[k]) || !unicode.IsUpper([]rune(words[k])[0]) {
				return capsGroup{}, false // spaced-out headings are capitals of one size
			}
			lo, hi = min(lo, geom[k].gap), max(hi, geom[k].gap)
		}
		even := hi-lo <= 0.05 && hi <= 0.2 && hi >= 0
		apart := (i == 0 || geom[i-1].gap > 1.5*hi) && (j >= len(words) || geom[j-1].gap > 1.5*hi)
		if !even || !apart {
			return capsGroup{}, false
		}
	}
	return capsGroup{from: i, to: j, small: make([]bool, j-i)}, true
}

// latin reports whether every letter of s is of the Latin script.
func latin(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
}

// fixCaps rejoins what pdftotext splits in small capitals and letter-spaced
// titles, by the text alone: "L ONG E VAL : Guidelines" reads "LongEval:
// Guidelines", and "T I T L E" reads "TITLE".
func fixCaps(s string) string {
	w := strings.Fields(s)
	groups := capsGroups(w, nil)
	var out []string
	for i, g := 0, 0; i < len(w); {
		if g < len(groups) && groups[g].from == i {
			var b strings.Builder
			for k := groups[g].from; k < groups[g].to; k++ {
				if groups[g].small[k-groups[g].from] {
					b.WriteString(strings.ToLower(w[k]))
				} else {
					b.WriteString(w[k])
				}
			}
			out = append(out, b.String())
			i = groups[g].to
			g++
			continue
		}
		if punctOne.MatchString(w[i]) && len(out) > 0 {
			out[len(out)-1] += w[i]
		} else {
			out = append(out, w[i])
		}
		i++
	}
	return strings.Join(out, " ")
}
