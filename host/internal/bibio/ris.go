package bibio

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var risLine = regexp.MustCompile(`^([A-Z][A-Z0-9])  -( (.*))?$`)

// risTypes maps RIS reference types to BibTeX entry types.
var risTypes = map[string]string{
	"JOUR": "article", "EJOUR": "article", "MGZN": "article", "NEWS": "article",
	"CONF": "inproceedings", "CPAPER": "inproceedings", "BOOK": "book", "EBOOK": "book",
	"CHAP": "incollection", "ECHAP": "incollection", "THES": "phdthesis", "RPRT": "techreport",
	"UNPB": "unpublished", "ELEC": "misc", "GEN": "misc", "DATA": "misc",
}

// maxRISLine is the longest line ParseRIS reads.
const maxRISLine = 1 << 20

// ParseRIS reads every record of an RIS file. A record starts at TY and ends at ER;
// a record without a title, a line outside a record, or a record that never ends is
// reported with its line, and the others are kept. A line longer than maxRISLine
// ends the reading there, with a LineError saying so.
func ParseRIS(src string) ([]Entry, []LineError) {
	var entries []Entry
	var errs []LineError
	var cur *Entry
	var lastTag string
	// more holds the abstract's continuation lines until the record ends: adding
	// each to the abstract in turn copied it once per line, quadratic in a long one.
	var more []string
	finish := func() {
		if cur != nil && len(more) > 0 {
			cur.Abstract = strings.Join(append([]string{cur.Abstract}, more...), " ")
		}
		more = more[:0]
	}
	sc := bufio.NewScanner(strings.NewReader(strings.TrimPrefix(src, "\ufeff")))
	sc.Buffer(make([]byte, 64<<10), maxRISLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r ")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := risLine.FindStringSubmatch(line)
		if m == nil {
			if cur != nil && (lastTag == "AB" || lastTag == "N2") {
				more = append(more, strings.TrimSpace(line))
				continue
			}
			errs = append(errs, LineError{n, fmt.Sprintf("not an RIS line (TAG  - value): %q", truncate(line, 60))})
			continue
		}
		tag, val := m[1], strings.TrimSpace(m[3])
		lastTag = tag
		if tag == "TY" {
			finish()
			if cur != nil {
				errs = append(errs, LineError{cur.Line, "record has no ER line before the next TY"})
			}
			cur = &Entry{Line: n, Type: risTypes[val]}
			if cur.Type == "" {
				cur.Type = "misc"
			}
			continue
		}
		if cur == nil {
			errs = append(errs, LineError{n, fmt.Sprintf("%s line outside a record (records start with TY)", tag)})
			continue
		}
		if tag == "ER" {
			finish()
			if cur.Title == "" {
				errs = append(errs, LineError{cur.Line, "record has no title (TI or T1)"})
			} else {
				entries = append(entries, *cur)
			}
			cur = nil
			continue
		}
		risField(cur, tag, val)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, LineError{n + 1, fmt.Sprintf("reading stopped here: the line is longer than %d MB; break it up and import the file again", maxRISLine>>20)})
	}
	finish()
	if cur != nil {
		errs = append(errs, LineError{cur.Line, "record never ends (no ER line)"})
	}
	return entries, errs
}

func risField(e *Entry, tag, val string) {
	switch tag {
	case "TI", "T1":
		if e.Title == "" {
			e.Title = val
		}
	case "AU", "A1":
		e.Authors = append(e.Authors, val)
	case "PY", "Y1", "DA":
		// 2017, 2017/06/12/, 2017/06
		parts := strings.FieldsFunc(val, func(r rune) bool { return r == '/' || r == '-' })
		if len(parts) > 0 && e.Year == 0 {
			e.Year, _ = strconv.Atoi(parts[0])
		}
		if len(parts) > 1 && e.Month == 0 {
			e.Month, _ = strconv.Atoi(parts[1])
		}
		if len(parts) > 2 && e.Day == 0 {
			e.Day, _ = strconv.Atoi(parts[2])
		}
	case "JO", "JF", "T2", "JA", "BT":
		if e.Venue == "" {
			e.Venue = val
		}
	case "DO":
		e.DOI = val
	case "AB", "N2":
		if e.Abstract == "" {
			e.Abstract = val
		}
	case "UR":
		if e.URL == "" {
			e.URL = val
		}
	case "L1":
		e.PDFURL = val
	case "VL":
		e.Volume = val
	case "IS":
		e.Issue = val
	case "SP":
		e.Pages = val
	case "EP":
		if e.Pages != "" {
			e.Pages += "–" + val
		}
	case "PB":
		e.Publisher = val
	case "ID":
		e.Key = val
	case "AN":
		if strings.HasPrefix(strings.ToLower(val), "arxiv:") {
			e.ArxivID = val[6:]
		}
	}
}
