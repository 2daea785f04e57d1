package messenger

import "strings"

// htmlEscaper escapes the three characters the HTML format gives a meaning to.
// Quotes stay as they are: text outside attributes does not need them escaped.
var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// EscapeHTML returns s with &, < and > escaped, for interpolating text (a paper
// title, a user's query) into a FormatHTML message.
func EscapeHTML(s string) string { return htmlEscaper.Replace(s) }

// markdownSpecial are the characters FormatMarkdown gives a meaning to.
const markdownSpecial = "\\*_`[]()"

// EscapeMarkdown returns s with a backslash before every character FormatMarkdown
// gives a meaning to, for interpolating text into a FormatMarkdown message.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
