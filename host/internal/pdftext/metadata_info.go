package pdftext

import (
	"regexp"
	"strings"
)

// Titles and authors that tools, not people, wrote into the info dictionary.
var (
	toolTitle  = regexp.MustCompile(`(?i)^(microsoft word|untitled|document\d*$)|\.(docx?|tex|dvi|pdf|ps)$|^\s*$`)
	infoSplit  = regexp.MustCompile(`\s*(?:;|,|\band\b|&)\s*`)
	infoEtAlRe = regexp.MustCompile(`(?i)\{?\s*et\s+al\.?\s*\}?`)
)

// applyInfo fills what the layout left empty from the info dictionary: the
// title, and the authors when the Author entry lists two-word names or more.
func applyInfo(doc *Document, title, author string) {
	if doc.Title == "" && !toolTitle.MatchString(title) {
		doc.Title = Normalize(title)
	}
	if len(doc.Authors) > 0 || infoEtAlRe.MatchString(author) {
		return
	}
	var authors []Author
	for _, n := range infoSplit.Split(strings.TrimSpace(author), -1) {
		if k := len(strings.Fields(n)); k < 2 || k > 5 {
			return // a login name ("ibm") or not a list of names
		}
		authors = append(authors, Author{Name: Normalize(n)})
	}
	doc.Authors = authors
}
