package pdftext

import (
	"regexp"
	"strconv"
	"strings"
)

// SectionKind says what a section holds.
type SectionKind string

// Section kinds.
const (
	// KindFront is the text before the first heading (title, authors, and the
	// abstract when it has no heading of its own).
	KindFront SectionKind = "front"
	// KindAbstract is the abstract.
	KindAbstract SectionKind = "abstract"
	// KindBody is any other section: introduction, methods, appendix...
	KindBody SectionKind = "body"
	// KindReferences is the reference list ("References", "Bibliography").
	KindReferences SectionKind = "references"
)

// Section is a span of Document.Text that starts at a heading (or at 0 for the
// front matter) and runs to the next heading.
type Section struct {
	// Kind is what the section holds.
	Kind SectionKind
	// Number is the heading's number as printed ("2", "2.1", "IV", "A"), "" when
	// unnumbered.
	Number string
	// Title is the heading text without its number ("Introduction"), "" for the
	// front matter.
	Title string
	// Level is 1 for top-level sections, 2 for "2.1", and so on; 0 for the front.
	Level int
	// Start and End delimit the section in Document.Text, heading included.
	Start, End int
	// Page is the 1-based page the section starts on.
	Page int
}

var (
	loneNumber = regexp.MustCompile(`^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H]\.?|[IVX]{1,5}\.)$`)
	namedHead  = regexp.MustCompile(`(?i)^(abstract|summary|introduction|background|related work|preliminaries|methods?|materials and methods|methodology|experiments?|evaluation|results(?: and discussion)?|discussion|conclusions?(?: and future work)?|limitations|acknowledge?ments?|references|bibliography|literature cited|works cited|appendix(?: [a-z])?|appendices)\s*[:.]?$`)
	inlineAbs  = regexp.MustCompile(`(?i)^abstract\s*[.:\-—–]\s*\S`)
	numHead    = regexp.MustCompile(`^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\p{Lu}.*)$`)
	romanHead  = regexp.MustCompile(`^([IVX]{1,5})\.\s+(\p{Lu}.*)$`)
	letterHead = regexp.MustCompile(`^([A-H])\.?\s+(\p{Lu}.*)$`)
	refsTitle  = regexp.MustCompile(`(?i)^(references|bibliography|literature cited|works cited)$`)
)

type heading struct {
	idx    int // line index
	number string
	title  string
	level  int
	kind   SectionKind
	letter bool // an appendix letter, kept only after the last references heading
}

// pruneHeadings drops what only looks like headings: entries of a table of
// contents (a heading followed by almost no text before the next one) and
// appendix letters before the reference list.
func pruneHeadings(text string, lines []line, heads []heading) []heading {
	lastRefs := -1
	for _, h := range heads {
		if h.kind == KindReferences {
			lastRefs = h.idx
		}
	}
	var out []heading
	for k, h := range heads {
		if h.letter && h.idx < lastRefs {
			continue
		}
		l := lines[h.idx]
		end := len(text)
		if k+1 < len(heads) {
			end = lines[heads[k+1].idx].start
		}
		body := text[min(end, l.start+len(l.text)):end]
		if k+1 < len(heads) && len(strings.Join(strings.Fields(body), "")) < 20 && heads[k+1].level <= h.level {
			continue
		}
		out = append(out, h)
	}
	return out
}

// findSections finds headings line by line and turns them into sections that
// tile text. A heading is a line that starts its block, is set at least at the
// body's font size, is short, and is either a known section name or numbered in
// sequence with the headings before it.
func findSections(text string, lines []line) []Section {
	body := bodySize(lines)
	var heads []heading
	lastTop, lastRoman := 0, 0
	afterRefs := false
	for i, l := range lines {
		if i > 0 && lines[i-1].block == l.block && lines[i-1].page == l.page {
			continue // not the first line of its block
		}
		if l.size < body*0.85 || len(l.text) > 90 || len(strings.Fields(l.text)) > 12 {
			continue
		}
		t := strings.TrimSpace(l.text)
		if m := namedHead.FindStringSubmatch(t); m != nil {
			h := heading{idx: i, title: strings.TrimRight(t, ":."), level: 1, kind: kindOf(m[1])}
			heads = append(heads, h)
			afterRefs = afterRefs || h.kind == KindReferences
			continue
		}
		if inlineAbs.MatchString(t) && !hasKind(heads, KindAbstract) {
			heads = append(heads, heading{idx: i, title: "Abstract", level: 1, kind: KindAbstract})
			continue
		}
		if m := numHead.FindStringSubmatch(t); m != nil && plausibleTitle(m[2]) {
			parts := strings.Split(m[1], ".")
			top, _ := strconv.Atoi(parts[0])
			ok := (len(parts) == 1 && (top == lastTop+1 || (lastTop == 0 && top == 0))) ||
				(len(parts) > 1 && top == lastTop)
			if ok {
				lastTop = top
				heads = append(heads, heading{idx: i, number: m[1], title: m[2], level: len(parts), kind: kindOf(m[2])})
				afterRefs = afterRefs || kindOf(m[2]) == KindReferences
				continue
			}
		}
		if m := romanHead.FindStringSubmatch(t); m != nil && plausibleTitle(m[2]) {
			if n := romanValue(m[1]); n == lastRoman+1 {
				lastRoman = n
				heads = append(heads, heading{idx: i, number: m[1], title: m[2], level: 1, kind: kindOf(m[2])})
				afterRefs = afterRefs || kindOf(m[2]) == KindReferences
				continue
			}
		}
		if afterRefs {
			if m := letterHead.FindStringSubmatch(t); m != nil && plausibleTitle(m[2]) {
				heads = append(heads, heading{idx: i, number: m[1], title: m[2], level: 1, kind: KindBody, letter: true})
			}
		}
	}
	heads = pruneHeadings(text, lines, heads)
	var out []Section
	if len(heads) == 0 || lines[heads[0].idx].start > 0 {
		out = append(out, Section{Kind: KindFront, Start: 0, Page: 1})
	}
	for _, h := range heads {
		l := lines[h.idx]
		out = append(out, Section{Kind: h.kind, Number: h.number, Title: Normalize(h.title), Level: h.level, Start: l.start, Page: l.page})
	}
	for i := range out {
		if i+1 < len(out) {
			out[i].End = out[i+1].Start
		} else {
			out[i].End = len(text)
		}
	}
	return out
}

func kindOf(title string) SectionKind {
	t := strings.ToLower(strings.TrimRight(strings.TrimSpace(title), ":."))
	switch {
	case t == "abstract" || t == "summary":
		return KindAbstract
	case refsTitle.MatchString(t):
		return KindReferences
	default:
		return KindBody
	}
}

func hasKind(heads []heading, k SectionKind) bool {
	for _, h := range heads {
		if h.kind == k {
			return true
		}
	}
	return false
}

// plausibleTitle rejects numbered lines that are table rows, equations or list
// items rather than headings: mostly letters, a few words, no sentence inside.
func plausibleTitle(s string) bool {
	s = strings.TrimSpace(s)
	words := strings.Fields(s)
	if len(words) == 0 || len(words) > 10 || len(s) > 80 {
		return false
	}
	if letterRatio(s) < 0.75 || !letterRun.MatchString(s) {
		return false
	}
	return !strings.Contains(strings.TrimRight(s, "."), ". ")
}

func romanValue(s string) int {
	vals := map[byte]int{'I': 1, 'V': 5, 'X': 10}
	n := 0
	for i := 0; i < len(s); i++ {
		v := vals[s[i]]
		if i+1 < len(s) && vals[s[i+1]] > v {
			n -= v
		} else {
			n += v
		}
	}
	return n
}
