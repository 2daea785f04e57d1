package pdftext

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// analyse builds the Document from the layout and its raw text: the title from
// page 1 as printed, then the clean text (see clean), its offsets and its map
// back to the raw text, identifiers, sections and references.
func analyse(layout []layoutPage, raw string) *Document {
	doc := &Document{Raw: raw}
	var front []line // page 1 as printed, running header included: the front matter
	if len(layout) > 0 {
		front = layout[0].lines
		doc.Title = findTitle(front)
	}
	var sb strings.Builder
	var lines []line
	for i, p := range clean(layout) {
		if i > 0 {
			sb.WriteByte('\f')
		}
		start := sb.Len()
		for j, l := range p.lines {
			if j > 0 {
				if l.block != p.lines[j-1].block && !continues(p.lines[j-1], l) {
					sb.WriteString("\n\n")
				} else {
					sb.WriteByte('\n')
				}
			}
			l.start = sb.Len()
			sb.WriteString(l.text)
			for _, s := range l.sources() {
				doc.Map.add(segment{clean: l.start + s.at, n: s.n, raw: s.raw, rawN: s.rawN})
			}
			lines = append(lines, l)
		}
		doc.Pages = append(doc.Pages, Page{Number: i + 1, Offset: start, RawOffset: p.rawOff})
	}
	doc.Text = sb.String()
	for i := range doc.Pages {
		end, rawEnd := len(doc.Text), len(doc.Raw)
		if i+1 < len(doc.Pages) {
			end, rawEnd = doc.Pages[i+1].Offset-1, doc.Pages[i+1].RawOffset-1
		}
		doc.Pages[i].Text = doc.Text[doc.Pages[i].Offset:end]
		doc.Pages[i].Raw = doc.Raw[doc.Pages[i].RawOffset:rawEnd]
	}
	doc.Sections = findSections(doc.Text, lines)
	doc.References = findReferences(doc, lines)
	doc.DOI, doc.ArXivID = findIDs(doc)
	findMetadata(doc, front)
	return doc
}

// continues reports whether line l, which pdftotext put in a block of its own,
// continues the paragraph of prev, the line before it. Some PDFs (double-spaced
// manuscripts, for one) make every printed line its own block, and a blank line
// after each would cut every sentence at every line end. l continues prev when
// it is the next line of the same column in the same type: the same size (within
// a tenth), below prev by no more than the gap of double spacing, starting at
// prev's left edge (or left of it, after an indented first line, by at most three
// sizes), prev ran on to about the width of l (not a heading, nor the short last
// line of a paragraph), and prev does not end a sentence: a block that ends one
// ends its paragraph, pdftotext and the punctuation agreeing.
func continues(prev, l line) bool {
	size := prev.size
	if size <= 0 || abs(l.size-size) > 0.1*size {
		return false
	}
	if gap := l.y0 - prev.y1; gap < -0.3*size || gap > 1.6*size {
		return false
	}
	if l.x0 > prev.x0+0.5*size || l.x0 < prev.x0-3*size {
		return false
	}
	if width := l.x1 - l.x0; width <= 0 || prev.x1 < l.x0+0.6*width {
		return false
	}
	end := strings.TrimRight(prev.text, `"')]}’”»`)
	return !strings.HasSuffix(end, ".") && !strings.HasSuffix(end, ":") && !strings.HasSuffix(end, "?") && !strings.HasSuffix(end, "!")
}

// bodySize is the font size carrying the most characters: the body text's.
func bodySize(lines []line) float64 {
	chars := map[float64]int{}
	for _, l := range lines {
		chars[round1(l.size)] += len(l.text)
	}
	best, n := 0.0, -1
	for s, c := range chars {
		if c > n || (c == n && s < best) {
			best, n = s, c
		}
	}
	return best
}

func round1(f float64) float64 { return float64(int(f*2+0.5)) / 2 }

var (
	arxivStamp = regexp.MustCompile(`(?i)^arxiv:\S+\s+\[`)
	// Labels some publishers set above the title in a large font.
	articleLabel = regexp.MustCompile(`(?i)^((research|review|original|short|brief)\s+)?(article|paper|communication|report|letter)$`)
	letterRun    = regexp.MustCompile(`\p{L}{2,}`)
)

// findTitle returns the largest-font horizontal text on page 1, joined across
// the consecutive lines of that size.
func findTitle(lines []line) string {
	var first []line
	for _, l := range lines {
		if l.page != 1 {
			break
		}
		rotated := l.x1-l.x0 < l.y1-l.y0
		upper := l.ph == 0 || l.y0 < l.ph/2 // titles sit in the top half
		if rotated || !upper || arxivStamp.MatchString(l.text) || articleLabel.MatchString(l.text) || !letterRun.MatchString(l.text) {
			continue
		}
		first = append(first, l)
	}
	// Figure labels can be set larger than the title; a title has three words
	// or more unless nothing on the page has.
	minWords := 3
	maxSize := 0.0
	for pass := 0; pass < 2 && maxSize == 0; pass++ {
		for _, l := range first {
			if len(strings.Fields(l.text)) >= minWords && l.size > maxSize {
				maxSize = l.size
			}
		}
		minWords = 1
	}
	var parts []string
	started := false
	for _, l := range first {
		if abs(l.size-maxSize) <= 0.6 {
			parts = append(parts, fixCaps(l.text))
			started = true
		} else if started {
			break
		}
	}
	t := Normalize(strings.Join(parts, "\n"))
	return strings.TrimRight(t, " *∗†‡,")
}

var (
	citeAs  = regexp.MustCompile(`(?i)cite\s+this\s+article\s+as`)
	doiRe   = regexp.MustCompile(`\b10\.\d{4,9}/[^\s"<>]+`)
	arxivRe = regexp.MustCompile(`(?i)(?:arxiv(?:\.org/abs/|\.org/pdf/|:\s*|\s+))((?:\d{4}\.\d{4,5}|[a-z][a-z.\-]*/\d{7})(?:v\d+)?)`)
	// A line break right after a DOI's "/", ".", "-" or "_" continues the DOI.
	doiBreak = regexp.MustCompile(`([/.\-_])\n(\S)`)
)

// FindDOI returns the first DOI in s, with line breaks inside it removed and
// trailing punctuation trimmed, or "".
func FindDOI(s string) string {
	s = doiBreak.ReplaceAllString(s, "$1$2")
	m := doiRe.FindString(s)
	for m != "" {
		last := m[len(m)-1]
		switch {
		case strings.ContainsRune(".,;:'\"]}>", rune(last)):
		case last == ')' && strings.Count(m, "(") < strings.Count(m, ")"):
		default:
			return m
		}
		m = m[:len(m)-1]
	}
	return m
}

// FindArXivID returns the first arXiv identifier in s ("2304.02623v1",
// "astro-ph/0601001"), or "".
func FindArXivID(s string) string {
	if m := arxivRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// findIDs looks for the paper's DOI and arXiv id on pages 1 and 2, outside any
// references section.
func findIDs(doc *Document) (doi, arxiv string) {
	end := len(doc.Text)
	if len(doc.Pages) > 2 {
		end = doc.Pages[2].Offset
	}
	for _, s := range doc.Sections {
		if s.Kind == KindReferences && s.Start < end {
			end = s.Start
		}
	}
	head := doc.Text[:end]
	doi, arxiv = FindDOI(head), FindArXivID(head)
	if doi == "" {
		// BioMed Central and others print the DOI in a "Cite this article as"
		// note on the last page.
		if loc := citeAs.FindStringIndex(doc.Text); loc != nil {
			doi = FindDOI(doc.Text[max(0, loc[0]-200):min(len(doc.Text), loc[1]+600)])
		}
	}
	return doi, arxiv
}

// lineIndex returns the index of the first line starting at or after off.
func lineIndex(lines []line, off int) int {
	return sort.Search(len(lines), func(i int) bool { return lines[i].start >= off })
}

func letterRatio(s string) float64 {
	n, l := 0, 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		n++
		if unicode.IsLetter(r) {
			l++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(l) / float64(n)
}
