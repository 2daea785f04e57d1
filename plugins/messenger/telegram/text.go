package main

import (
	"html"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Every message goes to Telegram as HTML (parse_mode "HTML"), whatever its format:
// the text is read into rich text (runs of plain text, each with the tags around
// it), split there, and each part rendered with every character that HTML gives a
// meaning to escaped. Splitting rich text rather than markup means a part never
// ends inside a tag or an entity, and a <b> or <a> cut in two is closed at the end
// of one part and opened again at the start of the next.

// maxMessageLen is Telegram's limit on a message's text, in UTF-16 code units
// after the markup is parsed (Bot API: "1-4096 characters after entities
// parsing"; Telegram counts entity offsets in UTF-16 units, so that is the safe
// measure).
const maxMessageLen = 4096

// tag is one open HTML element: its name and its attributes, already rendered
// (` href="…"`).
type tag struct {
	name  string
	attrs string
}

// run is plain text with the tags around it, outermost first.
type run struct {
	text string
	tags []tag
}

// richText is a message read into runs.
type richText []run

// plainText is the text the reader sees.
func (rt richText) plainText() string {
	var b strings.Builder
	for _, r := range rt {
		b.WriteString(r.text)
	}
	return b.String()
}

// add appends text with tags, sharing a run with the previous text when the tags
// are the same.
func (rt *richText) add(text string, tags []tag) {
	if text == "" {
		return
	}
	if n := len(*rt); n > 0 && slices.Equal((*rt)[n-1].tags, tags) {
		(*rt)[n-1].text += text
		return
	}
	*rt = append(*rt, run{text: text, tags: tags})
}

// readText reads a message's text in format f into rich text. Markup the format
// does not allow is a BadRequest.
func readText(text string, f messenger.Format) (richText, error) {
	switch f {
	case messenger.FormatPlain:
		var rt richText
		rt.add(text, nil)
		return rt, nil
	case messenger.FormatMarkdown:
		var rt richText
		parseMarkdown(text, nil, &rt)
		return rt, nil
	case messenger.FormatHTML:
		return parseHTML(text)
	}
	return nil, protocol.BadRequest("unknown text format %d (plain, markdown or html)", f)
}

// render writes rich text as Telegram HTML.
func render(rt richText) string {
	var b strings.Builder
	var open []tag
	for _, r := range rt {
		same := 0
		for same < len(open) && same < len(r.tags) && open[same] == r.tags[same] {
			same++
		}
		for i := len(open) - 1; i >= same; i-- {
			b.WriteString("</" + open[i].name + ">")
		}
		for _, t := range r.tags[same:] {
			b.WriteString("<" + t.name + t.attrs + ">")
		}
		open = r.tags
		b.WriteString(escapeText(r.text))
	}
	for i := len(open) - 1; i >= 0; i-- {
		b.WriteString("</" + open[i].name + ">")
	}
	return b.String()
}

// escapeText escapes what Telegram's HTML gives a meaning to in text.
func escapeText(s string) string { return messenger.EscapeHTML(s) }

// escapeAttr escapes an attribute value for a double-quoted attribute.
func escapeAttr(s string) string {
	return strings.ReplaceAll(messenger.EscapeHTML(s), `"`, "&quot;")
}

// utf16Len is the length of s in UTF-16 code units, Telegram's measure.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// splitRich cuts rich text into parts of at most limit UTF-16 units of plain
// text each: at the last line break that fits, else the last space, else between
// two characters. The line break or space at a cut is dropped, as are the line
// breaks that would open the next part, and a part of nothing but white space.
func splitRich(rt richText, limit int) []richText {
	plain := rt.plainText()
	var parts []richText
	start := 0
	for start < len(plain) {
		end, next := cutPoint(plain, start, limit)
		if strings.TrimSpace(plain[start:end]) != "" {
			parts = append(parts, slice(rt, start, end))
		}
		start = next
		if start < len(plain) && end < len(plain) {
			for start < len(plain) && plain[start] == '\n' {
				start++
			}
		}
	}
	return parts
}

// cutPoint finds where the part starting at byte start of plain ends (end) and
// where the next one starts (next).
func cutPoint(plain string, start, limit int) (end, next int) {
	units, lastBreak, lastSpace := 0, -1, -1
	for i, r := range plain[start:] {
		at := start + i
		if units+utf16.RuneLen(r) > limit {
			switch {
			case r == '\n':
				return at, at + 1
			case lastBreak > start:
				return lastBreak, lastBreak + 1
			case r == ' ':
				return at, at + 1
			case lastSpace > start:
				return lastSpace, lastSpace + 1
			}
			return at, at
		}
		units += utf16.RuneLen(r)
		switch r {
		case '\n':
			lastBreak = at
		case ' ', '\t':
			lastSpace = at
		}
	}
	return len(plain), len(plain)
}

// slice returns the rich text of bytes [from, to) of rt's plain text.
func slice(rt richText, from, to int) richText {
	var out richText
	pos := 0
	for _, r := range rt {
		lo, hi := max(from, pos), min(to, pos+len(r.text))
		if lo < hi {
			out.add(r.text[lo-pos:hi-pos], r.tags)
		}
		pos += len(r.text)
	}
	return out
}

// renderParts reads text, splits it under Telegram's limit and renders each part.
func renderParts(text string, f messenger.Format) ([]string, error) {
	rt, err := readText(text, f)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, part := range splitRich(rt, maxMessageLen) {
		out = append(out, render(part))
	}
	if len(out) == 0 {
		return nil, protocol.BadRequest("the message has no visible text")
	}
	return out, nil
}

// Markdown: the SDK's messenger-neutral subset (package messenger's doc).

// parseMarkdown appends s, read as Markdown inside tags, to out.
func parseMarkdown(s string, tags []tag, out *richText) {
	var lit strings.Builder
	flush := func() {
		out.add(lit.String(), tags)
		lit.Reset()
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			lit.WriteByte(s[i+1])
			i += 2
			continue
		case strings.HasPrefix(s[i:], "```"):
			if end := strings.Index(s[i+3:], "```"); end >= 0 {
				flush()
				body, inner := preBody(s[i+3 : i+3+end])
				out.add(body, append(slices.Clip(tags), inner...))
				i += 3 + end + 3
				continue
			}
		case c == '`':
			if end := strings.IndexByte(s[i+1:], '`'); end > 0 {
				flush()
				out.add(s[i+1:i+1+end], withTag(tags, tag{name: "code"}))
				i += 1 + end + 1
				continue
			}
		case c == '*' || c == '_':
			if end := closingDelim(s, i); end > 0 {
				flush()
				name := "b"
				if c == '_' {
					name = "i"
				}
				parseMarkdown(s[i+1:end], withTag(tags, tag{name: name}), out)
				i = end + 1
				continue
			}
		case c == '[':
			if label, url, n := markdownLink(s[i:]); n > 0 {
				flush()
				parseMarkdown(label, withTag(tags, tag{name: "a", attrs: ` href="` + escapeAttr(url) + `"`}), out)
				i += n
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		lit.WriteString(s[i : i+size])
		i += size
	}
	flush()
}

// preBody reads a fenced block: a first line of one word names the language.
func preBody(body string) (string, []tag) {
	pre := []tag{{name: "pre"}}
	if nl := strings.IndexByte(body, '\n'); nl > 0 {
		lang := body[:nl]
		if isLanguage(lang) {
			return body[nl+1:], append(pre, tag{name: "code", attrs: ` class="language-` + escapeAttr(lang) + `"`})
		}
	}
	return strings.TrimPrefix(body, "\n"), pre
}

func isLanguage(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r == '+' || r == '-' || r == '#' || r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// withTag returns tags with t added innermost, never sharing tags's array.
func withTag(tags []tag, t tag) []tag {
	return append(slices.Clip(tags), t)
}

// closingDelim returns the index of the delimiter closing the one at s[open], or
// -1. A delimiter opens before a non-space that is not preceded by a letter or
// digit, and closes after a non-space, not followed by a letter or digit, on the
// same line; so snake_case and 2*3*4 stay as written.
func closingDelim(s string, open int) int {
	d := s[open]
	if open > 0 && isWordByte(s[open-1]) {
		return -1
	}
	if open+1 >= len(s) || isSpaceByte(s[open+1]) || s[open+1] == d {
		return -1
	}
	for j := open + 1; j < len(s); j++ {
		switch s[j] {
		case '\n':
			return -1
		case '\\':
			j++
		case d:
			if !isSpaceByte(s[j-1]) && (j+1 == len(s) || !isWordByte(s[j+1])) {
				return j
			}
		}
	}
	return -1
}

// markdownLink reads "[label](url)" at the start of s, returning the label, the
// URL and the bytes read; n is 0 when s does not start with a link whose URL is
// http, https or tg.
func markdownLink(s string) (label, url string, n int) {
	closeLabel := strings.Index(s, "](")
	if closeLabel < 0 || strings.ContainsAny(s[1:closeLabel], "\n[") {
		return "", "", 0
	}
	closeURL := strings.IndexByte(s[closeLabel+2:], ')')
	if closeURL < 0 {
		return "", "", 0
	}
	url = s[closeLabel+2 : closeLabel+2+closeURL]
	if !linkURL(url) {
		return "", "", 0
	}
	return s[1:closeLabel], url, closeLabel + 2 + closeURL + 1
}

// linkURL reports whether u may be a link target: http, https or tg, no spaces.
func linkURL(u string) bool {
	if strings.ContainsAny(u, " \t\n") {
		return false
	}
	lower := strings.ToLower(u)
	return strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "tg://")
}

func isASCIIPunct(c byte) bool {
	return c < utf8.RuneSelf && unicode.IsPunct(rune(c)) || c == '`' || c == '^' || c == '|' || c == '~' || c == '<' || c == '>' || c == '=' || c == '+' || c == '$'
}

func isWordByte(c byte) bool {
	return c >= utf8.RuneSelf || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// HTML: the subset Telegram accepts, read strictly enough that a refused message
// fails here with a clear error rather than upstream.

// htmlTags are the elements the HTML format allows, with the attributes kept.
var htmlTags = map[string][]string{
	"b": nil, "strong": nil, "i": nil, "em": nil, "u": nil, "ins": nil,
	"s": nil, "strike": nil, "del": nil, "tg-spoiler": nil,
	"span": {"class"}, "a": {"href"}, "code": {"class"}, "pre": nil,
	"blockquote": {"expandable"}, "tg-emoji": {"emoji-id"},
}

// parseHTML reads the HTML format. <br> becomes a line break; a "<" that starts no
// tag is text.
func parseHTML(s string) (richText, error) {
	var rt richText
	var stack []tag
	text := func(raw string) { rt.add(html.UnescapeString(raw), stack) }
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			text(s)
			break
		}
		text(s[:lt])
		s = s[lt:]
		name, attrs, closing, n, ok := readTag(s)
		if !ok {
			text("<")
			s = s[1:]
			continue
		}
		s = s[n:]
		if name == "br" {
			rt.add("\n", stack)
			continue
		}
		allowed, known := htmlTags[name]
		if !known {
			return nil, protocol.BadRequest("the HTML format does not allow <%s>; use b, i, u, s, code, pre, a, blockquote or tg-spoiler", name)
		}
		if closing {
			if len(stack) == 0 || stack[len(stack)-1].name != name {
				return nil, protocol.BadRequest("the HTML closes </%s> where it is not the innermost open element", name)
			}
			stack = slices.Clip(stack[:len(stack)-1])
			continue
		}
		if href, ok := attrs["href"]; name == "a" && (!ok || !linkURL(href)) {
			return nil, protocol.BadRequest("the HTML has a link whose target is not an http, https or tg URL")
		}
		stack = withTag(stack, tag{name: name, attrs: keepAttrs(attrs, allowed)})
	}
	return rt, nil
}

// readTag reads "<name attr=…>" or "</name>" at the start of s. ok is false when
// s does not start with a tag.
func readTag(s string) (name string, attrs map[string]string, closing bool, n int, ok bool) {
	i := 1
	if i < len(s) && s[i] == '/' {
		closing = true
		i++
	}
	startName := i
	for i < len(s) && (isWordByte(s[i]) && s[i] < utf8.RuneSelf || s[i] == '-') {
		i++
	}
	if i == startName {
		return "", nil, false, 0, false
	}
	name = strings.ToLower(s[startName:i])
	attrs = map[string]string{}
	for {
		for i < len(s) && isSpaceByte(s[i]) {
			i++
		}
		if i >= len(s) {
			return "", nil, false, 0, false
		}
		if s[i] == '>' {
			return name, attrs, closing, i + 1, true
		}
		if strings.HasPrefix(s[i:], "/>") {
			return name, attrs, closing, i + 2, true
		}
		key, val, used, good := readAttr(s[i:])
		if !good {
			return "", nil, false, 0, false
		}
		attrs[key] = val
		i += used
	}
}

// readAttr reads key, key=value, key="value" or key='value'.
func readAttr(s string) (key, val string, n int, ok bool) {
	i := 0
	for i < len(s) && s[i] != '=' && s[i] != '>' && s[i] != '/' && !isSpaceByte(s[i]) {
		i++
	}
	if i == 0 {
		return "", "", 0, false
	}
	key = strings.ToLower(s[:i])
	if i >= len(s) || s[i] != '=' {
		return key, "", i, true
	}
	i++
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return "", "", 0, false
		}
		return key, html.UnescapeString(s[i+1 : i+1+end]), i + 1 + end + 1, true
	}
	start := i
	for i < len(s) && s[i] != '>' && !isSpaceByte(s[i]) {
		i++
	}
	return key, html.UnescapeString(s[start:i]), i, true
}

// keepAttrs renders the allowed attributes, in the order allowed lists them.
func keepAttrs(attrs map[string]string, allowed []string) string {
	var b strings.Builder
	for _, k := range allowed {
		v, ok := attrs[k]
		if !ok {
			continue
		}
		if v == "" && k == "expandable" {
			b.WriteString(" " + k)
			continue
		}
		b.WriteString(" " + k + `="` + escapeAttr(v) + `"`)
	}
	return b.String()
}
