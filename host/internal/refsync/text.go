package refsync

import (
	"strings"

	"golang.org/x/net/html"
)

// text is the plain text of a note's HTML: paragraphs, headings and list items on
// their own lines, entities decoded, nothing else of the markup kept (the
// dashboard shows notes as text).
func text(h string) string {
	z := html.NewTokenizer(strings.NewReader(h))
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(squeeze(b.String()))
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "blockquote", "pre":
				b.WriteByte('\n')
			}
		}
	}
}

// squeeze collapses runs of blank lines and trailing spaces.
func squeeze(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
