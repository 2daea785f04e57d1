package pdftext

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// parseBBoxLayoutXML is the decoder parseBBoxLayout replaced (issue 18 item 3),
// kept as the reference the scanner must agree with: it reads the XHTML that `pdftotext -bbox-layout` writes, token by
// token as it arrives, and stops with a *TextLimitError or *PageLimitError as
// soon as the text read crosses one of lim's caps: it never holds more than
// lim.textBytes of text in lim.lines lines (and the same again as the raw
// text), nor buffers more than lim.tokenBytes of XML. It returns the pages and
// their raw text (see Document.Raw).
func parseBBoxLayoutXML(r io.Reader, lim limits) ([]layoutPage, string, error) {
	in := &xmlStreamGuard{r: r, maxBytes: lim.outputBytes, maxToken: lim.tokenBytes}
	dec := xml.NewDecoder(in)
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	var (
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
	)
	for {
		tok, err := dec.RawToken()
		if in.err != nil {
			return nil, "", in.err
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("parse pdftotext output: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "page":
				if len(pages) == lim.pages {
					return nil, "", &PageLimitError{Pages: len(pages) + 1, Limit: lim.pages}
				}
				pages = append(pages, layoutPage{width: xmlAttrFloat(t, "width"), height: xmlAttrFloat(t, "height")})
				textBytes++ // the form feed before it
				block = -1
			case "block":
				block++
			case "line":
				if len(pages) == 0 {
					continue
				}
				cur = &line{box: xmlAttrBox(t), block: block, page: len(pages), ph: pages[len(pages)-1].height}
				text, sizes, gs, odd = text[:0], sizes[:0], gs[:0], false
			case "word":
				inWord = true
				word = word[:0]
				wb = xmlAttrBox(t)
				sizes = append(sizes, wb.y1-wb.y0)
			}
		case xml.CharData:
			if inWord {
				word = append(word, t...)
			}
		case xml.EndElement:
			switch t.Name.Local {
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
						return nil, "", &TextLimitError{What: "bytes of text", Limit: lim.textBytes}
					}
				}
			case "line":
				if cur != nil && len(text) > 0 {
					if lines++; lines > lim.lines {
						return nil, "", &TextLimitError{What: "lines of text", Limit: int64(lim.lines)}
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
			}
		}
	}
	raw := rawText(pages)
	for i := range pages {
		pages[i].lines = mergeNumberLines(pages[i].lines)
	}
	return pages, raw, nil
}

// xmlStreamGuard passes pdftotext's output to the XML decoder. It drops the C0
// control bytes (other than tab, newline and carriage return) that pdftotext
// copies from some fonts into its XML, where they are illegal; UTF-8
// continuation bytes are all >= 0x80, so dropping bytes is safe. It also stops
// the stream with a *TextLimitError once more than maxBytes have passed, or when
// one token (a tag, or the text between two tags) runs past maxToken bytes, so
// the decoder, which holds a whole token, never holds more. The error is kept in
// err as well, since the decoder may wrap it.
type xmlStreamGuard struct {
	r        io.Reader
	maxBytes int64
	maxToken int
	n        int64 // bytes read
	run      int   // bytes since the last '<' or '>'
	err      error
}

func (g *xmlStreamGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if g.n += int64(n); g.n > g.maxBytes {
		g.err = &TextLimitError{What: "bytes of pdftotext output", Limit: g.maxBytes}
		return 0, g.err
	}
	j := 0
	for _, b := range p[:n] {
		if b == '<' || b == '>' {
			g.run = 0
		} else if g.run++; g.run > g.maxToken {
			g.err = &TextLimitError{What: "bytes in one XML token", Limit: int64(g.maxToken)}
			return 0, g.err
		}
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			continue
		}
		p[j] = b
		j++
	}
	return j, err
}

func xmlAttrFloat(t xml.StartElement, name string) float64 {
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

func xmlAttrBox(t xml.StartElement) box {
	return box{xmlAttrFloat(t, "xMin"), xmlAttrFloat(t, "yMin"), xmlAttrFloat(t, "xMax"), xmlAttrFloat(t, "yMax")}
}
