package pdftext

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var (
	// "experi-\nment" -> "experiment": a hyphen ending a line between lowercase
	// letters is taken for hyphenation. A real hyphen that happens to fall at a
	// line end ("state-of-\nthe-art") is joined too; that is the price.
	lineEndHyphen = regexp.MustCompile(`(\p{Ll})[-\x{00AD}\x{2010}]\s*\n\s*(\p{Ll})`)
	// Dotless i with a combining diaeresis, as LaTeX's \"{\i} comes out.
	dotlessDiaeresis = strings.NewReplacer("ı\u0308", "ï")
	quoteFolder      = strings.NewReplacer(
		"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'", "\u2032", "'",
		"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`, "\u2033", `"`,
		"\u00AB", `"`, "\u00BB", `"`,
		"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2212", "-",
		"\u00AD", "",
	)
)

// Normalize folds the text of a PDF, or a quote from it, to a canonical form so
// that the two compare equal: line-end hyphenation is undone ("experi-\nment" ->
// "experiment"), compatibility characters are decomposed by NFKC (ligatures
// "ﬁ" "ﬂ" "ﬀ" -> "fi" "fl" "ff", full-width forms, non-breaking spaces), curly
// quotes and primes become straight quotes, dashes and the minus sign become
// "-", soft hyphens go, and every run of whitespace becomes one space, trimmed
// at both ends. Case is kept. Normalize is idempotent. Bytes that are not UTF-8
// become U+FFFD first: removing a soft hyphen between two such bytes once joined
// them into a quote mark that a second pass folded again (FuzzNormalize,
// testdata/fuzz/FuzzNormalize).
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = dotlessDiaeresis.Replace(s)
	s = lineEndHyphen.ReplaceAllString(s, "$1$2")
	s = norm.NFKC.String(s)
	s = quoteFolder.Replace(s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}
