package extractive

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Span is one sentence of a text: Text is exactly text[Start:End], so a quote made
// from it is a verbatim substring of the text, line breaks and hyphens included.
type Span struct {
	// Start and End are byte offsets into the text.
	Start, End int
	// Text is the sentence, verbatim, without leading or trailing white space.
	Text string
}

// longSentenceWords is the length above which a "sentence" is taken for text the
// splitter could not read (a table, a reference list without full stops) and is
// cut at line breaks into pieces of about longPieceWords words.
const (
	longSentenceWords = 120
	longPieceWords    = 60
)

// Sentences splits text, as extracted from a PDF, into sentences. A sentence ends
// at '.', '!', '?' or '…' (followed by any closing quotes or brackets) when white
// space and then something other than a lowercase letter or a comma follows, and
// always at a blank line, a form feed or a U+FFFD replacement character (what a
// form feed becomes in the XML of llm.FormatRequest), which no span contains. It
// does not end:
//
//   - after a known abbreviation ("e.g.", "i.e.", "et al.", "vs.", "cf.", "Dr.",
//     ...), nor after "Fig.", "Eq.", "Sec.", "Ref.", "No.", "pp." and the like when a
//     number or a bracket follows;
//   - after an initial ("Helen M. Burke") or a dotted abbreviation ("U.S.", "Ph.D.");
//   - after a list or section number at the start of a line ("1. Introduction");
//   - inside a number ("25.9", "p<.001"), since no white space follows the point.
//
// A line break also ends a sentence when the line before it is a heading (a known
// section name such as "2. Methods"; a numbered line such as "4. Experience of
// Programmes"; a line of at most ten words repeated three times or more in the
// text, such as a running header; or a line of at most ten words, less than half
// the text's typical line, with no final punctuation) and the next line starts
// with a capital or a digit, or when the next line starts with a bullet.
// Line breaks and hyphens inside a sentence are kept: the spans are verbatim.
// Sentences of more than longSentenceWords words are cut at line breaks.
func Sentences(text string) []Span {
	return sentences(text, lineStats(text))
}

// sentences is Sentences with the line statistics given (the tasks compute them
// over all the documents of a request, so that a running header repeated across
// chunks is known in each).
func sentences(text string, lines lineInfo) []Span {
	var out []Span
	emit := func(a, b int) {
		for a < b {
			r, size := utf8.DecodeRuneInString(text[a:])
			if !unicode.IsSpace(r) {
				break
			}
			a += size
		}
		for b > a {
			r, size := utf8.DecodeLastRuneInString(text[a:b])
			if !unicode.IsSpace(r) {
				break
			}
			b -= size
		}
		if a < b {
			out = append(out, splitLong(text, a, b)...)
		}
	}
	start, lineStart := 0, 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n' || r == '\f' || r == utf8.RuneError:
			next := skipBlank(text, i+size)
			if r != '\n' || (next < len(text) && (text[next] == '\n' || text[next] == '\f')) {
				// A paragraph break.
				emit(start, i)
				start = next
			} else if headingBreak(text, lineStart, i, next, lines) {
				emit(start, i)
				start = next
			}
			lineStart = i + size
		case r == '.' || r == '!' || r == '?' || r == '…':
			end := i + size
			for end < len(text) {
				c, csize := utf8.DecodeRuneInString(text[end:])
				if !strings.ContainsRune(`"')]}’”»`, c) {
					break
				}
				end += csize
			}
			if end == len(text) {
				break
			}
			if c, _ := utf8.DecodeRuneInString(text[end:]); unicode.IsSpace(c) && sentenceEnds(text, lineStart, i, r, end) {
				emit(start, end)
				start = end
			}
		}
		i += size
	}
	emit(start, len(text))
	return out
}

// skipBlank returns the index of the first byte at or after i that is not a
// horizontal space (a space, a tab, a carriage return).
func skipBlank(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
		i++
	}
	return i
}

// abbrevAlways never end a sentence; compared lowercased, without the point.
var abbrevAlways = wordSet(`e.g eg i.e ie cf vs viz al approx resp incl ca dr mr mrs ms prof
	st mt jr sr inc ltd co corp dept univ wrt w.r.t a.k.a`)

// abbrevBeforeNumber do not end a sentence when a number, a bracket or a
// numbered label ("S1") follows.
var abbrevBeforeNumber = wordSet(`fig figs eq eqs eqn eqns tab tabs sec secs ref refs no nos
	vol vols pp p ch chap art thm def prop lem alg app appx suppl ex`)

// sentenceEnds decides whether the terminator r at dot, followed by white space
// at after, ends a sentence.
func sentenceEnds(text string, lineStart, dot int, r rune, after int) bool {
	k := after
	for k < len(text) {
		c, size := utf8.DecodeRuneInString(text[k:])
		if !unicode.IsSpace(c) {
			break
		}
		k += size
	}
	if k == len(text) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(text[k:])
	if unicode.IsLower(next) || strings.ContainsRune(",;:).…", next) {
		return false // a lowercase continuation, or a spaced ellipsis ". . ."
	}
	if r != '.' {
		return true
	}
	// The word before the point.
	w := dot
	for w > 0 {
		c, size := utf8.DecodeLastRuneInString(text[:w])
		if unicode.IsSpace(c) || strings.ContainsRune(`([{"“‘`, c) {
			break
		}
		w -= size
	}
	word := text[w:dot]
	if word == "" {
		return true
	}
	lw := strings.ToLower(word)
	if abbrevAlways[lw] {
		return false
	}
	if abbrevBeforeNumber[lw] && (unicode.IsDigit(next) || next == '(' || next == '[' || labelFollows(text[k:])) {
		return false
	}
	if utf8.RuneCountInString(word) == 1 && unicode.IsUpper([]rune(word)[0]) {
		return false // an initial
	}
	if dottedAbbrev(word) {
		return false
	}
	if allDigits(word) && len(word) <= 3 && strings.TrimSpace(text[lineStart:w]) == "" {
		return false // "1. Introduction", "12. Smith J, ..."
	}
	return true
}

// labelFollows reports whether s starts with a label such as "S1" or "A.2".
func labelFollows(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) || size >= len(s) {
		return false
	}
	n, _ := utf8.DecodeRuneInString(s[size:])
	return unicode.IsDigit(n) || n == '.'
}

// dottedAbbrev reports whether word is like "U.S", "e.g" or "Ph.D": segments of
// one to three letters joined by points.
func dottedAbbrev(word string) bool {
	if !strings.Contains(word, ".") {
		return false
	}
	for seg := range strings.SplitSeq(word, ".") {
		n := utf8.RuneCountInString(seg)
		if n == 0 || n > 3 {
			return false
		}
		for _, c := range seg {
			if !unicode.IsLetter(c) {
				return false
			}
		}
	}
	return true
}

// headingBreak decides whether the line break at nl, after the line starting at
// lineStart and before the line starting at next, ends a sentence.
func headingBreak(text string, lineStart, nl, next int, lines lineInfo) bool {
	if next >= len(text) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(text[next:])
	if strings.ContainsRune("•◦▪‣∙", first) {
		return true
	}
	if !unicode.IsUpper(first) && !unicode.IsDigit(first) && first != '[' {
		return false
	}
	line := strings.TrimSpace(text[lineStart:nl])
	if line == "" {
		return false
	}
	if isHeading(line) || lines.repeated[line] || numberedHeading(line) {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	if strings.ContainsRune(".!?,;:-‐", last) {
		return false
	}
	lead, _ := utf8.DecodeRuneInString(line)
	if !unicode.IsUpper(lead) && !unicode.IsDigit(lead) {
		return false
	}
	if n := len(strings.Fields(line)); n > 10 {
		return false
	}
	return lines.typical > 0 && utf8.RuneCountInString(line)*2 < lines.typical
}

// undottedSectionNumber reports whether w is a section number without a point:
// 1 to 20.
func undottedSectionNumber(w string) bool {
	n, err := strconv.Atoi(w)
	return err == nil && n >= 1 && n <= 20 && w[0] != '0'
}

// titleCase reports whether words read as a title: the first capitalised, and
// every word of four letters or more capitalised.
func titleCase(words []string) bool {
	for i, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if (i == 0 || utf8.RuneCountInString(w) >= 4) && !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// lineInfo describes the lines of a text.
type lineInfo struct {
	// typical is the median length in runes of the lines of two words or more; 0
	// when there are fewer than five such lines (the short-line heading rule is
	// then off).
	typical int
	// repeated holds the lines of at most ten words that occur three times or
	// more: running headers and footers ("Journal of X", a page label).
	repeated map[string]bool
}

func lineStats(texts ...string) lineInfo {
	var lens []int
	counts := map[string]int{}
	for line := range linesOf(texts) {
		line = strings.TrimSpace(line)
		n := len(strings.Fields(line))
		if n >= 2 {
			lens = append(lens, utf8.RuneCountInString(line))
		}
		if n >= 1 && n <= 10 {
			counts[line]++
		}
	}
	info := lineInfo{repeated: map[string]bool{}}
	for line, c := range counts {
		if c >= 3 {
			info.repeated[line] = true
		}
	}
	if len(lens) >= 5 {
		slices.Sort(lens)
		info.typical = lens[len(lens)/2]
	}
	return info
}

// linesOf yields the lines of every text.
func linesOf(texts []string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, t := range texts {
			for line := range strings.SplitSeq(t, "\n") {
				if !yield(line) {
					return
				}
			}
		}
	}
}

// numberedHeading reports whether line reads as a numbered heading: a dotted
// section number of digits or Roman numerals ("4.", "2.3", "IV.", not an initial
// such as "J.") and a capitalised word, at most ten words in all, and no final
// sentence punctuation ("4. Experience of Programmes"); or a bare section number
// from 1 to 20 and title-case words, at most eight words in all ("2 The RTE
// System"), which a sentence opening with a count ("2 participants left") is not.
func numberedHeading(line string) bool {
	f := strings.Fields(line)
	if len(f) >= 2 && len(f) <= 8 && undottedSectionNumber(f[0]) && titleCase(f[1:]) {
		last, _ := utf8.DecodeLastRuneInString(line)
		return !strings.ContainsRune(".!?,;:", last)
	}
	if len(f) < 2 || len(f) > 10 || !strings.Contains(f[0], ".") || !sectionNumber(f[0]) {
		return false
	}
	if n := strings.TrimSuffix(f[0], "."); utf8.RuneCountInString(n) == 1 && !strings.ContainsAny(n, "0123456789IVX") {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(f[1]); !unicode.IsUpper(r) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	return !strings.ContainsRune(".!?,;:", last)
}

// sectionNames are the headings the splitter and the summary recognise, lowercased.
var sectionNames = map[string]string{
	"abstract": secAbstract, "summary": secAbstract,
	"introduction": secIntro, "background": secIntro, "motivation": secIntro,
	"conclusion": secConclusion, "conclusions": secConclusion, "concluding remarks": secConclusion,
	"discussion": secOther, "discussion and conclusion": secConclusion, "discussion and conclusions": secConclusion,
	"results": secOther, "results and discussion": secOther, "related work": secOther,
	"method": secOther, "methods": secOther, "methodology": secOther, "materials and methods": secOther,
	"approach": secOther, "experiments": secOther, "experimental setup": secOther, "evaluation": secOther,
	"limitations": secOther, "future work": secOther, "appendix": secOther,
	"references": secReferences, "bibliography": secReferences, "works cited": secReferences,
	"literature cited": secReferences, "acknowledgements": secBack, "acknowledgments": secBack,
	"acknowledgement": secBack, "acknowledgment": secBack, "funding": secBack,
	"conflict of interest": secBack, "conflicts of interest": secBack, "competing interests": secBack,
}

// Section kinds, for the summary's position prior and for skipping references.
const (
	secNone       = ""
	secAbstract   = "abstract"
	secIntro      = "introduction"
	secConclusion = "conclusion"
	secReferences = "references"
	secBack       = "back" // acknowledgements, funding, competing interests
	secOther      = "other"
)

// isHeading reports whether line is a known section name, optionally numbered
// ("3", "3.1", "III.", "A.") and ended by a point or a colon.
func isHeading(line string) bool {
	_, ok := headingKind(line)
	return ok
}

// headingKind returns the section kind of a heading line.
func headingKind(line string) (string, bool) {
	s := strings.TrimSpace(line)
	if len(s) > 48 {
		return "", false // longer than any known heading with its number
	}
	if f := strings.Fields(s); len(f) > 1 && sectionNumber(f[0]) {
		s = strings.Join(f[1:], " ")
	}
	s = strings.ToLower(strings.TrimRight(s, ".: "))
	kind, ok := sectionNames[strings.Join(strings.Fields(s), " ")]
	return kind, ok
}

// sectionNumber reports whether w numbers a section: "3", "3.1", "3.", "IV.", "A.".
// Only the dotted forms are taken for numbered headings.
func sectionNumber(w string) bool {
	w = strings.TrimSuffix(w, ".")
	if w == "" {
		return false
	}
	if strings.Trim(w, "0123456789.") == "" {
		return true
	}
	if strings.Trim(w, "IVXivx") == "" {
		return true
	}
	return utf8.RuneCountInString(w) == 1 && unicode.IsUpper([]rune(w)[0])
}

// splitLong cuts the sentence text[a:b] at line breaks when it is longer than
// longSentenceWords words, into pieces of at least longPieceWords words.
func splitLong(text string, a, b int) []Span {
	s := text[a:b]
	if wordCount(s) <= longSentenceWords || !strings.Contains(s, "\n") {
		return []Span{{Start: a, End: b, Text: s}}
	}
	var out []Span
	pieceStart := a
	for i := a; i < b; i++ {
		if text[i] == '\n' && wordCount(text[pieceStart:i]) >= longPieceWords {
			out = append(out, trimmedSpan(text, pieceStart, i))
			pieceStart = i + 1
		}
	}
	out = append(out, trimmedSpan(text, pieceStart, b))
	return slices.DeleteFunc(out, func(s Span) bool { return s.Text == "" })
}

func trimmedSpan(text string, a, b int) Span {
	for a < b && asciiSpace(text[a]) {
		a++
	}
	for b > a && asciiSpace(text[b-1]) {
		b--
	}
	return Span{Start: a, End: b, Text: text[a:b]}
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// tokenize returns the normalised words of s for scoring: its plain words
// (plainWords) stemmed (stem). The text itself is never changed: this is for
// scoring only.
func tokenize(s string) []string {
	ws := plainWords(s)
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// plainWords returns the words of s: NFKC-folded (so the ligature "ﬁ" reads
// "fi"), lowercased, split at anything that is not a letter, a digit or a
// combining mark, with line-end hyphenation undone ("experi-\nment" is one word),
// soft hyphens dropped, single letters dropped, and the plural "s" of an acronym
// dropped ("GPs" reads "gp", "LLMs" "llm").
func plainWords(s string) []string {
	if !isASCII(s) {
		s = norm.NFKC.String(s)
	}
	var toks []string
	buf := make([]byte, 0, 64)
	runes, upper := 0, 0 // runes and capitals of the current word
	prevLower, lastDigit := false, false
	flush := func() {
		if runes > 2 && upper == runes-1 && upper >= 2 && buf[len(buf)-1] == 's' {
			buf, runes = buf[:len(buf)-1], runes-1 // "GPs" -> "gp"
		}
		if runes > 1 || (runes == 1 && lastDigit) {
			toks = append(toks, string(buf))
		}
		buf, runes, upper = buf[:0], 0, 0
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
			buf = append(buf, byte(r))
			runes++
			prevLower, lastDigit = r >= 'a', r <= '9'
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) {
				upper++
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
			runes++
			prevLower, lastDigit = unicode.IsLower(r), unicode.IsDigit(r)
		case unicode.Is(unicode.Mn, r) && runes > 0:
			buf = utf8.AppendRune(buf, r)
		case r == '\u00AD':
			// A soft hyphen is invisible.
		case (r == '-' || r == '\u2010') && prevLower && runes > 0:
			if j, ok := hyphenatedBreak(s, i+size); ok {
				i = j
				continue
			}
			flush()
			prevLower = false
		default:
			flush()
			prevLower = false
		}
		i += size
	}
	flush()
	return toks
}

// hyphenatedBreak reports whether s[i:] is a line break (with any surrounding
// spaces) followed by a lowercase letter, and returns the index of that letter.
func hyphenatedBreak(s string, i int) (int, bool) {
	j := skipBlank(s, i)
	if j >= len(s) || s[j] != '\n' {
		return 0, false
	}
	j = skipBlank(s, j+1)
	if j >= len(s) {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return j, unicode.IsLower(r)
}

// stem reduces an English word to a stem for matching, conservatively: function
// words, words of three letters or fewer and words with digits are left alone;
// plurals lose their "s" ("results" -> "result", "studies" -> "study", but
// "analysis", "focus", "process" stay); then "-ing" (leaving four letters or
// more), "-ied" ("studied" -> "study") or "-ed" (leaving three or more) goes, with
// a doubled final consonant undone ("planned" -> "plan"); then a final "e"
// ("propose", "proposed" and "proposes" all read "propos"). Stems are internal:
// they only need to meet each other.
func stem(w string) string {
	if len(w) <= 3 || stopWords[w] || !letters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w)-3 >= 4:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ed") && len(w)-2 >= 3:
		w = undouble(w[:len(w)-2])
	}
	if len(w) >= 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops one of a doubled final consonant other than l, s or z.
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// letters reports whether w holds only ASCII lowercase letters.
func letters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// display returns s as a person should read it: line-end hyphenation between
// lowercase letters undone and every run of white space made one space. It is
// what pdftext-style normalisation on the host also does, so the host's
// normalised comparison still finds a displayed sentence in the paper.
func display(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == '-' || r == '\u2010' || r == '\u00AD') && i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			if unicode.IsLower(prev) {
				if j, ok := hyphenatedBreak(s, i+size); ok {
					i = j
					continue
				}
			}
		}
		if unicode.IsSpace(r) {
			space = true
			i += size
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		i += size
	}
	return b.String()
}

// wordCount counts the white-space separated words of s.
func wordCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
