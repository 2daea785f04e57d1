package pdftext

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
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
}

// layoutPage is one page: its size and its lines in reading order.
type layoutPage struct {
	width, height float64
	lines         []line
}

// parseBBoxLayout reads the XHTML that `pdftotext -bbox-layout` writes.
func parseBBoxLayout(r io.Reader) ([]layoutPage, error) {
	dec := xml.NewDecoder(controlFilter{r})
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	var (
		pages  []layoutPage
		cur    *line
		words  []string
		sizes  []float64
		inWord bool
		word   strings.Builder
		block  = -1
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse pdftotext output: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				pages = append(pages, layoutPage{width: attrFloat(t, "width"), height: attrFloat(t, "height")})
				block = -1
			case "block":
				block++
			case "line":
				cur = &line{box: attrBox(t), block: block, page: len(pages), ph: pages[len(pages)-1].height}
				words, sizes = words[:0], sizes[:0]
			case "word":
				inWord = true
				word.Reset()
				b := attrBox(t)
				sizes = append(sizes, b.y1-b.y0)
			}
		case xml.CharData:
			if inWord {
				word.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "word":
				inWord = false
				if w := strings.TrimSpace(word.String()); w != "" {
					words = append(words, w)
				}
			case "line":
				if cur != nil && len(words) > 0 && len(pages) > 0 {
					cur.text = strings.Join(words, " ")
					cur.size = median(sizes)
					p := &pages[len(pages)-1]
					p.lines = append(p.lines, *cur)
				}
				cur = nil
			}
		}
	}
	for i := range pages {
		pages[i].lines = mergeNumberLines(pages[i].lines)
	}
	return pages, nil
}

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
				l.text += " " + n.text
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

// controlFilter drops the C0 control bytes (other than tab, newline and carriage
// return) that pdftotext copies from some fonts into its XML, where they are
// illegal. UTF-8 continuation bytes are all >= 0x80, so dropping bytes is safe.
type controlFilter struct{ r io.Reader }

func (c controlFilter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	j := 0
	for _, b := range p[:n] {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			continue
		}
		p[j] = b
		j++
	}
	return j, err
}

func attrFloat(t xml.StartElement, name string) float64 {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			f, err := strconv.ParseFloat(a.Value, 64)
			if err == nil {
				return f
			}
		}
	}
	return 0
}

func attrBox(t xml.StartElement) box {
	return box{attrFloat(t, "xMin"), attrFloat(t, "yMin"), attrFloat(t, "xMax"), attrFloat(t, "yMax")}
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
