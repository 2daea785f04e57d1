package pdftext

import (
	"bufio"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
)

// maxInfoBytes bounds what is read of pdfinfo's report: the info dictionary's
// fields are as long as the PDF makes them.
const maxInfoBytes = 64 << 10

var errInfoTooLong = errors.New("pdfinfo report too long")

// infoDict returns the Title and Author entries of the PDF's info dictionary,
// "" for each that is missing or unreadable. It is a fallback, so any failure
// is no answer rather than an error.
func infoDict(ctx context.Context, bin, path string) (title, author string) {
	_, _ = run(ctx, bin, []string{"-enc", "UTF-8", path}, func(stdout io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(stdout, maxInfoBytes+1))
		if err != nil {
			return err
		}
		if len(b) > maxInfoBytes {
			return errInfoTooLong
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, maxInfoBytes+1)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			switch {
			case !ok:
			case k == "Title" && title == "":
				title = strings.TrimSpace(v)
			case k == "Author" && author == "":
				author = strings.TrimSpace(v)
			}
		}
		return nil
	})
	return title, author
}

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
