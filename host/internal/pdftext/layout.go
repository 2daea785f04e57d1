package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// box is a rectangle in PDF points, y growing downwards (pdftotext's convention).
type box struct{ x0, y0, x1, y1 float64 }

// line is one line of text as pdftotext reports it, in reading order.
type line struct {
	box
	text  string
	size  float64 // median word height, a stand-in for the font size
	block int     // index of the block on its page; lines of a block are consecutive
	page  int     // 1-based page number
	ph    float64 // height of the page
	start int     // byte offset of the line in Document.Text, set when the text is built
	// raw is where the line's text starts in Document.Raw; src, once a
	// cleaning step has changed the text, where each part of it came from
	// (see sources).
	raw int
	src []piece
	// geom is how each word sits against the next (len(words)-1 entries), kept
	// only for lines where small capitals or letter spacing may have been split.
	geom []gapGeom
}

// layoutPage is one page: its size, its lines in reading order, and where its
// text starts in the raw text.
type layoutPage struct {
	width, height float64
	lines         []line
	rawOff        int
}

// limits are the caps parseBBoxLayout enforces while it reads.
type limits struct {
	pages       int   // <page> elements
	textBytes   int64 // text as it will stand in Document.Text
	lines       int   // lines holding text
	outputBytes int64 // bytes of XML
	tokenBytes  int   // bytes of one XML token
}

// parseBBoxLayout reads the XHTML that `pdftotext -bbox-layout` writes, token by
// token as it arrives, and stops with a *TextLimitError or *PageLimitError as
// soon as the text read crosses one of lim's caps: it never holds more than
// lim.textBytes of text in lim.lines lines (and the same again as the raw
// text), nor buffers more than lim.tokenBytes of XML. It returns the pages and
// their raw text (see Document.Raw).
func parseBBoxLayout(r io.Reader, lim limits) ([]layoutPage, string, error) {
	out, err := parseBBoxStream(r, lim)
	if err != nil {
		return nil, "", err
	}
	return out.pages, out.raw, nil
}

// bboxOutput is what parseBBoxStream read: the pages, their raw text, and the
// Title and Author entries of the PDF's info dictionary, which pdftotext
// writes into the head as <title> and <meta name="Author">.
type bboxOutput struct {
	pages         []layoutPage
	raw           string
	title, author string
}

// parseBBoxStream is parseBBoxLayout with the head's info. Each page's lines
// are read as pdftotext writes them, while it works on the next.
func parseBBoxStream(r io.Reader, lim limits) (*bboxOutput, error) {
	sc := newBBoxScanner(r, lim.outputBytes, lim.tokenBytes)
	var (
		out       bboxOutput
		pages     []layoutPage
		cur       *line
		text      []byte // the current line's words, joined by spaces
		sizes     []float64
		inWord    bool
		word      []byte
		block     = -1
		textBytes int64 // text held, counted as in Document.Text
		lines     int
		wb, prev  box       // the current word's box, and the previous word's on the line
		prevOne   bool      // the previous word is one letter
		gs        []gapGeom // how each word of the line sits against the next
		odd       bool      // the line may hold split small capitals or spaced letters
		inTitle   bool      // in the head's <title>
		title     []byte
	)
	for {
		kind, err := sc.next()
		if err != nil {
			if errors.Is(err, errSyntax) {
				return nil, fmt.Errorf("parse pdftotext output: %w", err)
			}
			return nil, err
		}
		switch kind {
		case tokEOF:
			// The raw text is laid out once the stream has ended, not page by
			// page: a PDF stopped at a cap then never holds it beside its lines.
			out.raw = rawText(pages)
			for i := range pages {
				pages[i].lines = mergeNumberLines(pages[i].lines)
			}
			out.pages = pages
			out.title = infoLine(title)
			return &out, nil
		case tokStart:
			switch string(sc.name) {
			case "page":
				if len(pages) == lim.pages {
					return nil, &PageLimitError{Pages: len(pages) + 1, Limit: lim.pages}
				}
				pages = append(pages, layoutPage{width: sc.attrFloat("width"), height: sc.attrFloat("height")})
				textBytes++ // the form feed before it
				block = -1
			case "block":
				block++
			case "line":
				if len(pages) == 0 {
					break
				}
				cur = &line{box: sc.attrBox(), block: block, page: len(pages), ph: pages[len(pages)-1].height}
				text, sizes, gs, odd = text[:0], sizes[:0], gs[:0], false
			case "word":
				inWord = true
				word = word[:0]
				wb = sc.attrBox()
				sizes = append(sizes, wb.y1-wb.y0)
			case "title":
				inTitle = len(pages) == 0 && !sc.selfClosing
			case "meta":
				if n, ok := sc.attr("name"); ok && len(pages) == 0 && string(n) == "Author" {
					if v, ok := sc.attr("content"); ok {
						a, err := decodeText(nil, v)
						if err != nil {
							return nil, fmt.Errorf("parse pdftotext output: %w", err)
						}
						out.author = infoLine(a)
					}
				}
			}
			if !sc.selfClosing {
				break
			}
			fallthrough
		case tokEnd:
			switch string(sc.name) {
			case "word":
				inWord = false
				if w := bytes.TrimSpace(word); len(w) > 0 && cur != nil {
					one := utf8.RuneCount(w) == 1
					if len(text) > 0 {
						text = append(text, ' ')
						g := sitting(prev, wb)
						gs = append(gs, g)
						odd = odd || g.touch && (g.ratio < 0.95 || g.ratio > 1.05) || prevOne && one && g.gap < 0.25
					}
					text = append(text, w...)
					prev, prevOne = wb, one
					if textBytes += int64(len(w)) + 1; textBytes > lim.textBytes {
						return nil, &TextLimitError{What: "bytes of text", Limit: lim.textBytes}
					}
				}
			case "line":
				if cur != nil && len(text) > 0 {
					if lines++; lines > lim.lines {
						return nil, &TextLimitError{What: "lines of text", Limit: int64(lim.lines)}
					}
					textBytes++ // a blank line between blocks
					cur.text = string(text)
					cur.size = median(sizes)
					if odd {
						cur.geom = append([]gapGeom(nil), gs...)
					}
					p := &pages[len(pages)-1]
					p.lines = append(p.lines, *cur)
				}
				cur = nil
			case "title":
				inTitle = false
			}
		case tokText:
			switch {
			case inWord:
				if word, err = decodeText(word, sc.tok); err != nil {
					return nil, fmt.Errorf("parse pdftotext output: %w", err)
				}
			case inTitle:
				if title, err = decodeText(title, sc.tok); err != nil {
					return nil, fmt.Errorf("parse pdftotext output: %w", err)
				}
			}
		}
	}
}

// rawText lays the pages' lines out as Document.Text would be laid out without
// cleaning (lines joined by a newline, blocks by a blank line, pages by a form
// feed) and records where each line and page starts in it.
func rawText(pages []layoutPage) string {
	var sb strings.Builder
	for i := range pages {
		layRawPage(pages, i, &sb)
	}
	return sb.String()
}

// layRawPage writes page i of the raw text (see rawText) to sb.
func layRawPage(pages []layoutPage, i int, sb *strings.Builder) {
	if i > 0 {
		sb.WriteByte('\f')
	}
	p := &pages[i]
	p.rawOff = sb.Len()
	for j := range p.lines {
		if j > 0 {
			if p.lines[j].block != p.lines[j-1].block {
				sb.WriteString("\n\n")
			} else {
				sb.WriteByte('\n')
			}
		}
		p.lines[j].raw = sb.Len()
		sb.WriteString(p.lines[j].text)
	}
}

// infoLine is an info dictionary entry as pdfinfo prints it and a reader takes
// it: its first line, trimmed.
func infoLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(bytes.TrimSpace(b))
}

// sitting says how word b sits after word a on a line.
func sitting(a, b box) gapGeom {
	ha, hb := a.y1-a.y0, b.y1-b.y0
	if ha <= 0 || hb <= 0 {
		return noGeom
	}
	gap := b.x0 - a.x1
	return gapGeom{touch: gap < 0.15*max(ha, hb) && gap > -0.5*min(ha, hb), ratio: hb / ha, gap: gap / ha, base: (b.y1 - a.y1) / ha}
}

// noGeom is the sitting of two words nothing is known of: apart, same size.
var noGeom = gapGeom{ratio: 1, gap: 1}

// mergeNumberLines joins a section number that pdftotext put in a block of its
// own ("2", "2.1", "A", "IV.") with the heading text beside it on the same
// baseline, which may come a few lines later in pdftotext's order.
func mergeNumberLines(lines []line) []line {
	drop := map[int]bool{}
	for i := range lines {
		l := &lines[i]
		if drop[i] || !loneNumber.MatchString(l.text) {
			continue
		}
		for j := i + 1; j < len(lines) && j <= i+6; j++ {
			n := lines[j]
			sameRow := abs(n.y0-l.y0) < 2 && abs(n.y1-l.y1) < 2
			if !drop[j] && sameRow && n.x0 > l.x1 && n.x0-l.x1 < 60 {
				appendLine(l, &n)
				l.x1, l.size = n.x1, n.size
				drop[j] = true
				break
			}
		}
	}
	out := lines[:0:0]
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return out
}

// appendLine puts n's text after l's, a space between, keeping where both came
// from and how their words sit.
func appendLine(l, n *line) {
	if l.geom != nil || n.geom != nil {
		g := l.geom
		if g == nil {
			g = wordsGeom(l.text)
		}
		g = append(g, noGeom)
		if n.geom != nil {
			g = append(g, n.geom...)
		} else {
			g = append(g, wordsGeom(n.text)...)
		}
		l.geom = g
	}
	var b lineBuilder
	b.keep(l, 0, len(l.text))
	b.insert(" ")
	b.keep(n, 0, len(n.text))
	b.into(l)
}

// wordsGeom is the sitting of the words of s when nothing is known of them.
func wordsGeom(s string) []gapGeom {
	g := make([]gapGeom, strings.Count(s, " "))
	for i := range g {
		g[i] = noGeom
	}
	return g
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
