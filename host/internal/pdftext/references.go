package pdftext

import (
	"regexp"
	"strconv"
	"strings"
)

// Reference is one entry of a paper's reference list.
type Reference struct {
	// Text is the entry as printed, lines joined by "\n".
	Text string
	// Start and End delimit the entry in Document.Text.
	Start, End int
	// DOI is the DOI the entry carries, "" when none.
	DOI string
	// ArXivID is the arXiv identifier the entry carries, "" when none.
	ArXivID string
}

var (
	bracketMark = regexp.MustCompile(`^\[(\d{1,3}|[A-Za-z][\w+.\-]{0,20})\]`)
	pageNumber  = regexp.MustCompile(`^\d{1,5}$`)
	numberMark  = regexp.MustCompile(`^\(?(\d{1,3})[.)]?\s`)
)

// findReferences splits the last references section into entries. It tries, in
// order: "[n]" or "[Key]" markers at line starts; "n." numbers at line starts in
// sequence; and hanging indents (an entry starts at a line flush with its block's
// left edge when the block's other lines are indented), one block per entry when
// the block has no indent.
func findReferences(doc *Document, lines []line) []Reference {
	var sec *Section
	for i := range doc.Sections {
		if doc.Sections[i].Kind == KindReferences {
			sec = &doc.Sections[i]
		}
	}
	if sec == nil {
		return nil
	}
	lo := lineIndex(lines, sec.Start) + 1 // skip the heading line
	hi := lineIndex(lines, sec.End)
	if lo >= hi {
		return nil
	}
	// Page numbers printed in the reference list are neither entries nor
	// their starts.
	var rl []line
	for _, l := range lines[lo:hi] {
		if !pageNumber.MatchString(l.text) {
			rl = append(rl, l)
		}
	}
	if len(rl) == 0 {
		return nil
	}
	starts := markerStarts(rl)
	if len(starts) < 2 {
		starts = indentStarts(rl)
	}
	var refs []Reference
	for k, s := range starts {
		e := len(rl)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		first, last := rl[s], rl[e-1]
		text := doc.Text[first.start : last.start+len(last.text)]
		// Page breaks and blank lines between blocks are not part of an entry.
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\f", "\n"), "\n\n", "\n")
		refs = append(refs, Reference{
			Text:    text,
			Start:   first.start,
			End:     last.start + len(last.text),
			DOI:     FindDOI(text),
			ArXivID: FindArXivID(text),
		})
	}
	return refs
}

func markerStarts(rl []line) []int {
	var br []int
	for i, l := range rl {
		if bracketMark.MatchString(l.text) {
			br = append(br, i)
		}
	}
	if len(br) >= 2 {
		if br[0] != 0 {
			br = append([]int{0}, br...)
		}
		return br
	}
	var num []int
	next := 1
	for i, l := range rl {
		if m := numberMark.FindStringSubmatch(l.text); m != nil {
			if n, _ := strconv.Atoi(m[1]); n == next {
				num = append(num, i)
				next++
			}
		}
	}
	if len(num) >= 3 {
		if num[0] != 0 {
			num = append([]int{0}, num...)
		}
		return num
	}
	return nil
}

func indentStarts(rl []line) []int {
	var starts []int
	for i := 0; i < len(rl); {
		j := i
		for j < len(rl) && rl[j].block == rl[i].block && rl[j].page == rl[i].page {
			j++
		}
		minX := rl[i].x0
		indented := false
		for _, l := range rl[i:j] {
			minX = min(minX, l.x0)
		}
		for _, l := range rl[i:j] {
			if l.x0 > minX+2 {
				indented = true
			}
		}
		if !indented {
			starts = append(starts, i)
		} else {
			for k := i; k < j; k++ {
				if rl[k].x0 <= minX+2 || len(starts) == 0 {
					starts = append(starts, k)
				}
			}
		}
		i = j
	}
	return starts
}
