package pdftext

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// clean is the one normalisation step between pdftotext's layout and the
// Document's text: it drops the running headers, footers and page numbers
// (see runningLines), rejoins words split in small capitals or letter spacing
// (rejoinCaps), spells out ligatures (fixLigatures) and joins the words
// hyphenated across line breaks (see joinHyphens). It works on lines, page by
// page, before the text is built, so Document.Text is the clean text and every
// offset in the Document (pages, sections, references, and the chunks cut from
// it) points into it; a word joined across a page break stays on the page
// where it starts. Each step keeps where every byte came from in the raw text
// (rawmap.go), which becomes Document.Map.
func clean(layout []layoutPage) []layoutPage {
	drop := runningLines(layout)
	out := make([]layoutPage, len(layout))
	for i, p := range layout {
		out[i] = layoutPage{width: p.width, height: p.height, rawOff: p.rawOff}
		for j, l := range p.lines {
			if drop[[2]int{i, j}] {
				continue
			}
			rejoinCaps(&l)
			fixLigatures(&l)
			out[i].lines = append(out[i].lines, l)
		}
	}
	joinHyphens(out)
	return out
}

// ligatures are the Latin ligatures of Unicode's Alphabetic Presentation Forms
// (U+FB00 to U+FB06), which pdftotext copies from fonts that draw them as one
// glyph, spelled out as their compatibility decompositions.
var ligatures = map[rune]string{
	'\uFB00': "ff", '\uFB01': "fi", '\uFB02': "fl", '\uFB03': "ffi", '\uFB04': "ffl", '\uFB05': "ſt", '\uFB06': "st",
}

func isLigature(r rune) bool { return r >= '\uFB00' && r <= '\uFB06' }

// fixLigatures spells out the ligatures of l ("ﬁnd" -> "find"); each spelled-out
// pair maps back to its ligature in the raw text.
func fixLigatures(l *line) {
	if !strings.ContainsFunc(l.text, isLigature) {
		return
	}
	var b lineBuilder
	last := 0
	for i, r := range l.text {
		if s, ok := ligatures[r]; ok {
			b.keep(l, last, i)
			last = i + utf8.RuneLen(r)
			b.replace(l, i, last, s)
		}
	}
	b.keep(l, last, len(l.text))
	b.into(l)
}

// rejoinCaps joins the words of l that pdftotext split out of one word set in
// small capitals or letter-spaced, where the words' boxes say so (capsGroups):
// "S CIENCE P ARSE" reads "ScienceParse", the small capitals in lowercase as
// they are in the source. Lines without such boxes are left as they are.
func rejoinCaps(l *line) {
	geom := l.geom
	l.geom = nil
	if geom == nil {
		return
	}
	words := strings.Split(l.text, " ")
	if len(words) != len(geom)+1 {
		return // a word holding a space of its own: the boxes cannot be matched
	}
	groups := capsGroups(words, geom)
	if len(groups) == 0 {
		return
	}
	starts := make([]int, len(words))
	for i, off := 0, 0; i < len(words); i++ {
		starts[i] = off
		off += len(words[i]) + 1
	}
	var b lineBuilder
	pos := 0 // the next byte of l to copy
	for _, g := range groups {
		b.keep(l, pos, starts[g.from])
		for k := g.from; k < g.to; k++ {
			end := starts[k] + len(words[k])
			if g.small[k-g.from] {
				b.keepAs(l, starts[k], end, strings.ToLower(words[k]))
			} else {
				b.keep(l, starts[k], end)
			}
		}
		pos = starts[g.to-1] + len(words[g.to-1])
	}
	b.keep(l, pos, len(l.text))
	b.into(l)
}

// edgeBand is the share of the page height at its top and at its bottom where
// running headers and footers sit.
const edgeBand = 0.12

var digitRun = regexp.MustCompile(`\p{N}+`)

// headerKey is what repeats from page to page in a running header or footer:
// the line's text, case-folded, with every number ("Page 3 of 11", "2", "JCAP10
// (2008)003") made "#" and spaces collapsed.
func headerKey(s string) string {
	s = strings.ToLower(digitRun.ReplaceAllString(s, "#"))
	return strings.Join(strings.Fields(s), " ")
}

// runningLines returns the lines (page index, line index) that are running
// headers, footers, margin stamps or page numbers: lines at the edge of a page
// (in its two outermost rows at the top or the bottom and within 12 % of its
// height from that edge, or set sideways in the margin) whose headerKey is on the edge of at least a third of the pages, and of two
// at least. A third, not a half, because many journals alternate two headers
// (authors on even pages, the title on odd ones). Documents under three pages
// keep every line: nothing can be seen to repeat.
func runningLines(layout []layoutPage) map[[2]int]bool {
	if len(layout) < 3 {
		return nil
	}
	pagesWith := map[string]int{}
	keys := make([][]string, len(layout))
	for i, p := range layout {
		keys[i] = make([]string, len(p.lines))
		seen := map[string]bool{}
		outer := outerRows(p.lines)
		for j, l := range p.lines {
			if !(outer[j] && inBand(l, p.height)) && !sideways(l) {
				continue
			}
			k := headerKey(l.text)
			keys[i][j] = k
			if k != "" && !seen[k] {
				seen[k] = true
				pagesWith[k]++
			}
		}
	}
	need := max(2, (len(layout)+2)/3)
	drop := map[[2]int]bool{}
	for i := range layout {
		for j, k := range keys[i] {
			if k != "" && pagesWith[k] >= need {
				drop[[2]int{i, j}] = true
			}
		}
	}
	return drop
}

// inBand reports whether l is in the top or bottom band of a page of height ph.
func inBand(l line, ph float64) bool {
	return ph > 0 && (l.y0 < edgeBand*ph || l.y1 > (1-edgeBand)*ph)
}

// sideways reports whether l is set sideways, as margin stamps are: taller than
// two inches and over twice as tall as wide. A single letter or digit of a
// formula is taller than wide too, and is no stamp.
func sideways(l line) bool { return l.y1-l.y0 > 144 && l.y1-l.y0 > 2*(l.x1-l.x0) }

// outerRows marks the lines in the two topmost and the two bottommost rows of
// a page; lines whose tops (or bottoms) are within 3 points share a row.
func outerRows(lines []line) []bool {
	out := make([]bool, len(lines))
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	mark := func(edge func(l line) float64) {
		sort.Slice(idx, func(a, b int) bool { return edge(lines[idx[a]]) < edge(lines[idx[b]]) })
		row := 0
		for k, i := range idx {
			if k > 0 && edge(lines[i])-edge(lines[idx[k-1]]) > 3 {
				if row++; row == 2 {
					return
				}
			}
			out[i] = true
		}
	}
	mark(func(l line) float64 { return l.y0 })
	mark(func(l line) float64 { return -l.y1 })
	return out
}

// suspended are the words after which a line-end hyphen is a suspended one
// ("pre- and post-processing"), not a break inside a word.
var suspended = map[string]bool{"and": true, "or": true, "nor": true, "to": true, "as": true}

// prefixes are the prefixes written with a hyphen before a word ("non-paper",
// "pre-trained"), kept before a word printed on its own elsewhere.
var prefixes = wordSet("non self meta multi post pre co semi quasi pseudo cross")

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// joinHyphens joins the words hyphenated across line breaks, in reading order
// and across blocks and pages: when a line ends in a letter and a hyphen and the
// next line starts with a lowercase letter (or a capital and a hyphen are
// followed by a digit: "COVID-\n19"), the next line's first word moves up to
// the end of the line, and keepHyphen says whether the hyphen stays. A line
// left empty is dropped.
func joinHyphens(pages []layoutPage) {
	plain, pairs := vocabulary(pages)
	var prev *line
	for i := range pages {
		kept := pages[i].lines[:0]
		for _, l := range pages[i].lines {
			if prev != nil {
				joinInto(prev, &l, plain, pairs)
			}
			if l.text == "" {
				continue // its only word went up to the line before
			}
			kept = append(kept, l)
			prev = &kept[len(kept)-1]
		}
		pages[i].lines = kept
	}
}

// joinInto moves next's first word onto the end of prev when prev ends in a
// line-break hyphen, leaving the rest of next.
func joinInto(prev, next *line, plain, pairs map[string]bool) {
	r, size := utf8.DecodeLastRuneInString(prev.text)
	if !isHyphen(r) {
		return
	}
	head := prev.text[:len(prev.text)-size]
	before, _ := utf8.DecodeLastRuneInString(head)
	first, _ := utf8.DecodeRuneInString(next.text)
	capsNumber := unicode.IsUpper(before) && unicode.IsDigit(first) // "COVID-\n19"
	if !capsNumber && (!unicode.IsLetter(before) || !unicode.IsLower(first)) {
		return
	}
	word, _, hasRest := strings.Cut(next.text, " ")
	token := head[strings.LastIndexByte(head, ' ')+1:]
	var pb, nb lineBuilder
	switch {
	case suspended[word]:
		pb.keep(prev, 0, len(prev.text))
		pb.insert(" ")
	case keepHyphen(token, word, plain, pairs):
		pb.keep(prev, 0, len(prev.text))
	default:
		pb.keep(prev, 0, len(head))
	}
	pb.keep(next, 0, len(word))
	if hasRest {
		nb.keep(next, len(word)+1, len(next.text))
	}
	pb.into(prev)
	nb.into(next)
}

// keepHyphen says whether the hyphen between token, which ended a line, and
// word, which began the next, is printed in the word rather than made by the
// line break. The document decides first: the hyphen goes when the joined word
// is printed whole elsewhere in it. Then TeX, which set most papers, breaks a
// compound only at its own hyphens, never leaves fewer than two letters before
// a break nor fewer than three after it, and does not hyphenate identifiers; so
// the hyphen stays when either side already holds a hyphen
// ("low-molecular-\nweight", "mass-\nto-temperature"), the word holds a slash
// ("astro-\nph/0303455"), the part before it has no lowercase letter or has a
// digit ("RNA-\nbinding", "COVID-\n19"), or fewer than two letters come before
// it or three after it ("φ-\nnodes"). Then the document again: the hyphen stays
// when the hyphenated pair is printed within a line ("citation-informed"), or
// the word is printed on its own and follows a prefix written with a hyphen
// ("non-paper") or is a usual compound tail after a word ("tree-based").
// Failing all that it goes ("com-\nplement" -> "complement").
func keepHyphen(token, word string, plain, pairs map[string]bool) bool {
	part := trimNonLetters(token[strings.LastIndexAny(token, "-\u00AD\u2010")+1:])
	cont := strings.ToLower(trimNonLetters(word))
	switch {
	case cont != "" && plain[strings.ToLower(part)+cont]:
		return false
	case strings.ContainsAny(token, "-\u00AD\u2010"), strings.ContainsAny(word, "-\u00AD\u2010/"),
		!strings.ContainsFunc(part, unicode.IsLower), strings.ContainsFunc(part, unicode.IsDigit),
		utf8.RuneCountInString(part) < 2, utf8.RuneCountInString(cont) < 3:
		return true
	}
	part = strings.ToLower(part)
	return pairs[part+"-"+cont] || plain[cont] && (prefixes[part] || plain[part] && compoundTail[cont])
}

// compoundTail are words that end compounds ("tree-based", "token-level"),
// where the halves of a word cut by a line break mostly are not
// ("under-stated" is "understated").
var compoundTail = wordSet("based level wise like free specific aware driven oriented related " +
	"scale enhanced informed independent dependent agnostic dimensional making box world art " +
	"grained trained tuned shot step source modal throughput analysis")

func trimNonLetters(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
}

func isHyphen(r rune) bool { return r == '-' || r == '\u00AD' || r == '\u2010' }

// vocabulary returns the words printed whole in the document (case-folded,
// letters only) and the pairs of parts hyphenated within a line ("state",
// "of", "the", "art" give "state-of", "of-the", "the-art").
func vocabulary(pages []layoutPage) (plain, pairs map[string]bool) {
	plain, pairs = map[string]bool{}, map[string]bool{}
	for _, p := range pages {
		for _, l := range p.lines {
			fields := strings.Fields(l.text)
			for k, f := range fields {
				if k == len(fields)-1 && strings.HasSuffix(f, "-") {
					continue // a line-end hyphen attests nothing
				}
				parts := strings.FieldsFunc(strings.ToLower(f), func(r rune) bool { return isHyphen(r) })
				for n, w := range parts {
					w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
					parts[n] = w
					if len(parts) == 1 && w != "" {
						plain[w] = true
					}
				}
				for n := 1; n < len(parts); n++ {
					if parts[n-1] != "" && parts[n] != "" {
						pairs[parts[n-1]+"-"+parts[n]] = true
					}
				}
			}
		}
	}
	return plain, pairs
}
