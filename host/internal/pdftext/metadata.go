package pdftext

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Metadata is what the first page says about the paper beyond its title and
// identifiers. Every field is a heuristic reading of the layout: a source's
// record, when one is found, should win over it.
type Metadata struct {
	// Authors are the names on the lines under the title, in printed order.
	Authors []Author
	// Abstract is the abstract's text without its heading, "" when none was found.
	Abstract string
	// Year is the year of publication printed on page 1 (arXiv stamp, copyright
	// line or running header), 0 when none.
	Year int
	// Venue is the journal or proceedings named on page 1, "" when none.
	Venue string
}

// Author is one name under the title with what the front matter says of it.
type Author struct {
	Name        string
	Affiliation string // "" when none was found or several could apply
	Email       string // "" when none was matched to the name
}

// findMetadata fills doc.Metadata from page 1 as printed (its running header,
// which the clean text drops, names the journal and the year), after the title and
// the sections are known.
func findMetadata(doc *Document, page1 []line) {
	doc.Authors = findAuthors(page1, doc.Title)
	doc.Abstract = findAbstract(doc)
	doc.Year = findYear(page1, doc.Title)
	doc.Venue = findVenue(page1, doc.Title)
}

var (
	emailRe = regexp.MustCompile(`[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+|\{[^}]*\}@[\w\-]+(?:\.[\w\-]+)+`)
	affilRe = regexp.MustCompile(`(?i)\b(universit|institut|department|dept\.|college|school|laborator|lab\b|centre|center|hospital|research|inc\.|corporation|academy|faculty|ltd|gmbh|google|microsoft|meta|bytedance|division)`)
	// Lines that end the front matter: an abstract heading, keywords, a date line.
	frontEnd = regexp.MustCompile(`(?i)^(abstract|a\s*b\s*s\s*t\s*r\s*a\s*c\s*t|summary|keywords|key\s*words|received|correspondence|copyright|©)\b`)
	// Footnote marks, numbers and symbols set after a name.
	markRe   = regexp.MustCompile(`^[\d*∗†‡§¶#□⋄♠♣♥♦$+,;a-e]{1,6}$|^[*∗†‡§¶#□⋄♠♣♥♦$+\d,]+$`)
	nameWord = regexp.MustCompile(`^(\p{Lu}[\p{L}'’\-]*\.?|\p{Lu}\.(\p{Lu}\.)*|(van|von|de|der|den|da|del|di|du|la|le|ben|bin|al|el)|\p{Lu}[\p{Ll}]+-\p{Lu}[\p{Ll}]+)$`)
)

// findAuthors reads the names on the lines right under the title: names are
// split at commas, "and", and the footnote marks set after each name; the
// affiliation lines and emails that follow are attached when that is
// unambiguous.
func findAuthors(page1 []line, title string) []Author {
	end := titleEnd(page1, title)
	if end < 0 {
		return nil
	}
	var parts []string
	i := end
	for ; i < len(page1) && i < end+8; i++ {
		t := strings.TrimSpace(page1[i].text)
		if markRe.MatchString(t) {
			continue
		}
		if frontEnd.MatchString(t) || emailRe.MatchString(t) || affilRe.MatchString(t) || arxivStamp.MatchString(t) {
			break
		}
		if !looksLikeNames(t) {
			if len(parts) == 0 {
				continue // a subtitle or a label between the title and the names
			}
			break
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		parts = namesBelow(page1, page1[end-1])
	}
	// A name may run on to the next line ("Andrew" / "D. White").
	names, _ := splitNames(strings.Join(parts, " "))
	if len(names) == 0 {
		return nil
	}
	authors := make([]Author, len(names))
	for k, n := range names {
		authors[k].Name = n
	}
	// The affiliation blocks up to the abstract; one block without footnote
	// marks inside applies to every name, several cannot be told apart here.
	var affils []string
	for ; i < len(page1) && i < end+20; i++ {
		l := page1[i]
		t := strings.TrimSpace(l.text)
		if absHead.MatchString(t) || frontEnd.MatchString(t) {
			break
		}
		if !affilRe.MatchString(t) || emailRe.MatchString(t) {
			continue
		}
		a := t
		for i+1 < len(page1) && page1[i+1].block == l.block && page1[i+1].page == l.page && !emailRe.MatchString(page1[i+1].text) {
			i++
			a += " " + strings.TrimSpace(page1[i].text)
		}
		affils = append(affils, a)
	}
	if len(affils) == 1 && !strings.ContainsAny(strings.TrimLeftFunc(affils[0], isMarkRune), "*∗†‡§¶#□⋄♠♣♥♦$") {
		a := strings.Trim(strings.TrimLeftFunc(affils[0], func(r rune) bool { return isMarkRune(r) || unicode.IsSpace(r) }), " ,")
		for k := range authors {
			authors[k].Affiliation = a
		}
	}
	var emails []string
	// Emails may be anywhere on page 1: under the names or in a footnote.
	for _, l := range page1 {
		emails = append(emails, emailRe.FindAllString(l.text, -1)...)
	}
	for _, e := range emails {
		if strings.HasPrefix(e, "{") {
			continue // a grouped address names no single author
		}
		local := strings.ToLower(e[:strings.IndexByte(e, '@')])
		for k := range authors {
			f := strings.Fields(strings.ToLower(authors[k].Name))
			if authors[k].Email == "" && len(f) > 0 && len(f[len(f)-1]) > 2 && strings.Contains(local, f[len(f)-1]) {
				authors[k].Email = e
				break
			}
		}
	}
	return authors
}

// namesBelow returns the name lines set right under the title's last line when
// pdftotext reads them elsewhere (JCAP sets the affiliations first): the lines
// within 100 points below it, top to bottom, up to the first that is not names.
func namesBelow(page1 []line, last line) []string {
	var below []line
	for _, l := range page1 {
		rotated := l.x1-l.x0 < l.y1-l.y0 // a margin stamp
		if !rotated && l.y0 > last.y1 && l.y0 < last.y1+100 {
			below = append(below, l)
		}
	}
	sort.SliceStable(below, func(i, j int) bool { return below[i].y0 < below[j].y0 })
	var parts []string
	for _, l := range below {
		t := strings.TrimSpace(l.text)
		if markRe.MatchString(t) {
			continue
		}
		if !looksLikeNames(t) || frontEnd.MatchString(t) || affilRe.MatchString(t) {
			break
		}
		parts = append(parts, t)
	}
	return parts
}

// titleEnd returns the index of the first line after the title on page 1, or -1.
func titleEnd(page1 []line, title string) int {
	if title == "" {
		return -1
	}
	want := strings.Fields(Normalize(title))
	last := want[len(want)-1]
	for i, l := range page1 {
		f := strings.Fields(Normalize(fixCaps(l.text)))
		if len(f) > 0 && strings.TrimRight(f[len(f)-1], " *∗†‡,") == strings.TrimRight(last, " *∗†‡,") && strings.Contains(title, strings.TrimRight(f[0], " *∗†‡,")) {
			return i + 1
		}
	}
	return -1
}

// looksLikeNames reports whether every word of t is a name's word, a footnote
// mark or a separator.
func looksLikeNames(t string) bool {
	for _, w := range strings.Fields(t) {
		core := strings.TrimRightFunc(w, isMarkRune)
		if core != "" && !markRe.MatchString(w) && !nameWord.MatchString(core) && !strings.EqualFold(w, "and") && w != "&" {
			return false
		}
	}
	return true
}

func isMarkRune(r rune) bool {
	return unicode.IsDigit(r) || strings.ContainsRune("*∗†‡§¶#□⋄♠♣♥♦$+,;", r)
}

// splitNames splits one author line into names; ok is false when the line does
// not read as a list of names.
func splitNames(t string) ([]string, bool) {
	var names, cur []string
	flush := func() {
		if len(cur) > 0 {
			names = append(names, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, w := range strings.Fields(t) {
		// Marks glued to a name: "Ball1*", "Shen†", "Lo,".
		core := strings.TrimRightFunc(w, isMarkRune)
		switch {
		case strings.EqualFold(w, "and") || w == "&" || w == ",":
			flush()
		case core == "" || markRe.MatchString(w) && !nameWord.MatchString(w):
			flush()
		default:
			if !nameWord.MatchString(core) {
				return nil, false
			}
			cur = append(cur, core)
			if core != w {
				flush()
			}
		}
	}
	flush()
	for _, n := range names {
		if k := len(strings.Fields(n)); k < 2 || k > 5 {
			return nil, false
		}
	}
	return names, len(names) > 0
}

var absHead = regexp.MustCompile(`(?i)^\s*(abstract|a\s*b\s*s\s*t\s*r\s*a\s*c\s*t|summary)\s*[.:—–\-]?\s*`)

// findAbstract returns the abstract section's text without its heading, with
// line breaks and line-end hyphens folded.
func findAbstract(doc *Document) string {
	for _, s := range doc.Sections {
		if s.Kind != KindAbstract {
			continue
		}
		t := doc.Text[s.Start:s.End]
		t = absHead.ReplaceAllString(t, "")
		if i := strings.Index(t, "\n\n"); i > 0 && pageBreakOrFoot(t[i:]) {
			t = t[:i]
		}
		return strings.Join(strings.Fields(Normalize(t)), " ")
	}
	// No heading: some publishers (Hindawi, RevTeX) set the abstract as the first
	// paragraph of prose in the front matter, after the names and any copyright note.
	for _, s := range doc.Sections {
		if s.Kind != KindFront || len(doc.Pages) == 0 {
			continue
		}
		end := min(s.End, doc.Pages[0].Offset+len(doc.Pages[0].Text))
		for _, b := range strings.Split(doc.Text[s.Start:end], "\n\n") {
			low := strings.ToLower(strings.TrimSpace(b))
			prose := strings.Count(b, ". ")+strings.Count(b, ".\n") >= 2 && letterRatio(b) > 0.8
			if len(strings.Fields(b)) >= 50 && prose && !copyYear.MatchString(low) && !affilRe.MatchString(leadLine(b)) {
				return strings.Join(strings.Fields(Normalize(b)), " ")
			}
		}
	}
	return ""
}

func leadLine(b string) string {
	b = strings.TrimSpace(b)
	if i := strings.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// pageBreakOrFoot reports whether what follows an abstract's first block is
// front-page matter (arXiv stamp, keywords, footnotes) rather than more abstract.
func pageBreakOrFoot(rest string) bool {
	rest = strings.TrimSpace(rest)
	return rest == "" || arxivStamp.MatchString(rest) || strings.HasPrefix(strings.ToLower(rest), "keywords") ||
		strings.HasPrefix(rest, "\f")
}

var (
	stampYear = regexp.MustCompile(`(?i)^arxiv:\S+\s+\[[^\]]*\]\s+\d{1,2}\s+\w+\s+((?:19|20)\d\d)`)
	// "c 2020": pdftotext reads the © of some fonts as a c.
	copyYear  = regexp.MustCompile(`(?i)(?:©|\(c\)|copyright(?:\s*(?:©|c\b))?|\bc\s)\s*((?:19|20)\d\d)\b`)
	published = regexp.MustCompile(`(?i)^published\b.*?\b((?:19|20)\d\d)\b`)
	anyYear   = regexp.MustCompile(`\b((?:19|20)\d\d)\b`)
	proceed   = regexp.MustCompile(`(?i)(Proceedings of [^,.;]+|In [A-Z][A-Za-z ]*Conference[^,.;]*)`)
	venueWord = regexp.MustCompile(`\b(Journal|Transactions|Proceedings|Letters|Review|Research|Conference|Symposium|Workshop)\b`)
	etAl      = regexp.MustCompile(`^.*\bet al\.?\s*`)
	volTail   = regexp.MustCompile(`[\s,]*((?:19|20)\d\d)?[\s,]*(\d+[:(]\S*)?\s*$`)
)

// findYear reads the year from the arXiv stamp, a copyright line, or the running
// header above the title.
func findYear(page1 []line, title string) int {
	for _, l := range page1 {
		if m := stampYear.FindStringSubmatch(l.text); m != nil {
			return atoi(m[1])
		}
	}
	for _, l := range page1 {
		if m := copyYear.FindStringSubmatch(l.text); m != nil {
			return atoi(m[1])
		}
	}
	for _, l := range page1 {
		if m := published.FindStringSubmatch(l.text); m != nil {
			return atoi(m[1])
		}
	}
	for _, l := range aboveTitle(page1, title) {
		if m := anyYear.FindStringSubmatch(l.text); m != nil {
			return atoi(m[1])
		}
	}
	return 0
}

// findVenue reads the proceedings named on page 1, or the journal named in the
// running header above the title.
func findVenue(page1 []line, title string) string {
	for _, l := range page1 {
		if m := proceed.FindString(l.text); m != "" && utf8.RuneCountInString(m) > 20 {
			return strings.TrimSpace(m)
		}
	}
	for _, l := range aboveTitle(page1, title) {
		if !venueWord.MatchString(l.text) || articleLabel.MatchString(l.text) {
			continue
		}
		v := etAl.ReplaceAllString(l.text, "")
		v = strings.TrimSpace(volTail.ReplaceAllString(v, ""))
		if v != "" {
			return v
		}
	}
	return ""
}

// aboveTitle returns the page-1 lines set above the title's first line.
func aboveTitle(page1 []line, title string) []line {
	if title == "" {
		return nil
	}
	first := strings.Fields(title)[0]
	var out []line
	for _, l := range page1 {
		if f := strings.Fields(Normalize(fixCaps(l.text))); len(f) > 0 && f[0] == first && strings.Contains(title, strings.Join(f, " ")) {
			return out
		}
		out = append(out, l)
	}
	return nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
