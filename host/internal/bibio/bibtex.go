// Package bibio reads and writes the reference formats researchers move libraries
// in: BibTeX, RIS and CSL-JSON. Reading reports each bad entry with its line and keeps
// the good ones; writing produces files that reference managers import.
package bibio

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Entry is one bibliographic record in a neutral form.
type Entry struct {
	Line      int    // where the entry starts in the input
	Key       string // citation key (BibTeX) or ID (RIS), may be empty
	Type      string // article, inproceedings, book, misc, ... (BibTeX names)
	Title     string
	Authors   []string // "Family, Given" or a single name
	Year      int
	Month     int // 0 when unknown
	Day       int // 0 when unknown
	Venue     string
	DOI       string
	ArxivID   string
	PubMedID  string
	URL       string
	PDFURL    string
	Abstract  string
	Volume    string
	Issue     string
	Pages     string
	Publisher string
}

// LineError is a problem with the entry starting at Line.
type LineError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

var monthNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

// ParseBibTeX reads every entry of a BibTeX file. @string macros and # concatenation
// are expanded; @comment and @preamble are skipped; LaTeX accents and braces are
// turned into plain text. An entry that cannot be read becomes a LineError and the
// parser goes on at the next @.
//
// The work is bounded by the input (issue 23): a file whose unclosed braces would
// have every later entry rescan it to the end, or whose @string macros expand
// into each other without end, is read up to where the bound is reached, and the
// rest is reported as one LineError saying why.
func ParseBibTeX(src string) ([]Entry, []LineError) {
	p := &bibParser{src: src, line: 1, macros: map[string]string{},
		maxSteps: workFactor*len(src) + workSlack, maxExpanded: workFactor*len(src) + workSlack}
	for k, v := range monthNames {
		p.macros[k] = strconv.Itoa(v)
	}
	var entries []Entry
	var errs []LineError
	for p.skipTo('@') {
		if reason := p.overBudget(); reason != "" {
			errs = append(errs, LineError{p.line, reason})
			break
		}
		start, startPos := p.line, p.pos
		// On a broken entry, go on from just after its @: the next entry is found
		// even when this one's braces never close.
		resync := func() { p.pos, p.line = startPos+1, start }
		p.pos++ // @
		typ := strings.ToLower(p.ident())
		p.skipSpace()
		if p.pos >= len(p.src) || (p.src[p.pos] != '{' && p.src[p.pos] != '(') {
			errs = append(errs, LineError{start, fmt.Sprintf("@%s is not followed by { or (", typ)})
			continue
		}
		switch typ {
		case "comment", "preamble":
			if _, err := p.delimited(); err != nil {
				errs = append(errs, LineError{start, err.Error()})
				resync()
			}
			continue
		case "string":
			if err := p.stringMacro(); err != nil {
				errs = append(errs, LineError{start, err.Error()})
				resync()
			}
			continue
		}
		e, err := p.entry(typ)
		if err != nil {
			errs = append(errs, LineError{start, err.Error()})
			resync()
			continue
		}
		e.Line = start
		if e.Title == "" {
			errs = append(errs, LineError{start, fmt.Sprintf("entry %q has no title", e.Key)})
			continue
		}
		entries = append(entries, e)
	}
	return entries, errs
}

// workFactor and workSlack bound a parse: at most workFactor passes over the
// input (a well-formed file takes about one; each broken entry rescans from its @
// to where it gives up), and values expanded from @string macros at most
// workFactor times the input's size, each plus workSlack.
const (
	workFactor = 16
	workSlack  = 1 << 16
)

type bibParser struct {
	src    string
	pos    int
	line   int
	macros map[string]string
	// steps counts the bytes read, rescans included; expanded the bytes of the
	// values read, macros expanded. Reading stops past maxSteps or maxExpanded.
	steps, maxSteps       int
	expanded, maxExpanded int
}

func (p *bibParser) advance() {
	if p.src[p.pos] == '\n' {
		p.line++
	}
	p.pos++
	p.steps++
}

// overBudget says why reading must stop here, or "" while the parse is within
// its bounds.
func (p *bibParser) overBudget() string {
	switch {
	case p.expanded > p.maxExpanded:
		return fmt.Sprintf("reading stopped here: the @string macros expand to more than %d times the file's size; define them without nesting and import the file again", workFactor)
	case p.steps > p.maxSteps:
		return "reading stopped here: braces or quotes that never close make the rest of the file too costly to read; close them and import the file again"
	}
	return ""
}

func (p *bibParser) skipTo(c byte) bool {
	for p.pos < len(p.src) {
		if p.src[p.pos] == c {
			return true
		}
		p.advance()
	}
	return false
}

func (p *bibParser) skipSpace() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.advance()
	}
}

func (p *bibParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.IndexByte("_-:./+'", c) >= 0 {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

// delimited consumes a balanced {...} block, or a (...) block whose parentheses
// count only outside braces, and returns its inside.
func (p *bibParser) delimited() (string, error) {
	paren := p.src[p.pos] == '('
	start := p.pos + 1
	braces := 0
	if !paren {
		braces = 1
	}
	p.advance()
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '{':
			braces++
		case '}':
			braces--
			if !paren && braces == 0 {
				out := p.src[start:p.pos]
				p.advance()
				return out, nil
			}
		case ')':
			if paren && braces == 0 {
				out := p.src[start:p.pos]
				p.advance()
				return out, nil
			}
		}
		p.advance()
	}
	return "", fmt.Errorf("unbalanced braces: the entry never closes")
}

func (p *bibParser) stringMacro() error {
	p.advance() // { or (
	p.skipSpace()
	name := strings.ToLower(p.ident())
	p.skipSpace()
	if name == "" || p.pos >= len(p.src) || p.src[p.pos] != '=' {
		return fmt.Errorf("@string needs name = value")
	}
	p.advance()
	val, err := p.value()
	if err != nil {
		return err
	}
	p.macros[name] = val
	p.skipSpace()
	if p.pos < len(p.src) && (p.src[p.pos] == '}' || p.src[p.pos] == ')') {
		p.advance()
	}
	return nil
}

// value reads a field value: {braced}, "quoted", a number or a macro, joined by #.
func (p *bibParser) value() (string, error) {
	var b strings.Builder
	write := func(s string) error {
		if p.expanded+b.Len()+len(s) > p.maxExpanded {
			p.expanded = p.maxExpanded + 1
			return fmt.Errorf("the value expands past %d times the file's size", workFactor)
		}
		b.WriteString(s)
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return "", fmt.Errorf("a field value is cut off at the end of the input")
		}
		switch c := p.src[p.pos]; {
		case c == '{':
			inner, err := p.delimited()
			if err != nil {
				return "", err
			}
			if err := write(inner); err != nil {
				return "", err
			}
		case c == '"':
			p.advance()
			start, depth := p.pos, 0
			for p.pos < len(p.src) && (p.src[p.pos] != '"' || depth > 0) {
				switch p.src[p.pos] {
				case '{':
					depth++
				case '}':
					depth--
				}
				p.advance()
			}
			if p.pos >= len(p.src) {
				return "", fmt.Errorf("a quoted value never closes")
			}
			if err := write(p.src[start:p.pos]); err != nil {
				return "", err
			}
			p.advance()
		default:
			word := p.ident()
			if word == "" {
				return "", fmt.Errorf("unexpected %q in a field value", string(c))
			}
			if v, ok := p.macros[strings.ToLower(word)]; ok {
				word = v
			}
			if err := write(word); err != nil {
				return "", err
			}
		}
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == '#' {
			p.advance()
			continue
		}
		p.expanded += b.Len()
		return b.String(), nil
	}
}

func (p *bibParser) entry(typ string) (Entry, error) {
	closeCh := byte('}')
	if p.src[p.pos] == '(' {
		closeCh = ')'
	}
	p.advance()
	p.skipSpace()
	e := Entry{Type: typ, Key: p.ident()}
	p.skipSpace()
	fields := map[string]string{}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return e, fmt.Errorf("entry %q never closes", e.Key)
		}
		c := p.src[p.pos]
		if c == closeCh {
			p.advance()
			break
		}
		if c == ',' {
			p.advance()
			continue
		}
		if c == '@' {
			return e, fmt.Errorf("entry %q never closes (the next @ starts before its closing brace)", e.Key)
		}
		name := strings.ToLower(p.ident())
		p.skipSpace()
		if name == "" || p.pos >= len(p.src) || p.src[p.pos] != '=' {
			return e, fmt.Errorf("entry %q: expected field = value", e.Key)
		}
		p.advance()
		val, err := p.value()
		if err != nil {
			return e, fmt.Errorf("entry %q, field %s: %w", e.Key, name, err)
		}
		fields[name] = val
	}
	fill(&e, fields)
	return e, nil
}

func fill(e *Entry, f map[string]string) {
	e.Title = PlainText(f["title"])
	for _, a := range splitAuthors(f["author"]) {
		e.Authors = append(e.Authors, PlainText(a))
	}
	if e.Year == 0 {
		e.Year, _ = strconv.Atoi(strings.TrimSpace(f["year"]))
	}
	if m := strings.ToLower(strings.TrimSpace(f["month"])); m != "" {
		if n, err := strconv.Atoi(m); err == nil && n >= 1 && n <= 12 {
			e.Month = n
		} else if n, ok := monthNames[truncate(m, 3)]; ok {
			e.Month = n
		}
	}
	for _, k := range []string{"journal", "booktitle", "journaltitle", "howpublished", "school"} {
		if v := PlainText(f[k]); v != "" {
			e.Venue = v
			break
		}
	}
	e.DOI = strings.TrimSpace(f["doi"])
	if strings.EqualFold(f["archiveprefix"], "arxiv") || strings.EqualFold(f["eprinttype"], "arxiv") {
		e.ArxivID = strings.TrimSpace(f["eprint"])
	}
	e.PubMedID = strings.TrimSpace(f["pmid"])
	e.URL = strings.TrimSpace(f["url"])
	e.Abstract = PlainText(f["abstract"])
	e.Volume, e.Issue, e.Pages = PlainText(f["volume"]), PlainText(f["number"]), strings.ReplaceAll(PlainText(f["pages"]), "--", "–")
	e.Publisher = PlainText(f["publisher"])
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// splitAuthors splits a BibTeX author list on top-level " and " (in any case). It
// compares in place: a lower-cased copy is not aligned with s when lower-casing
// changes a letter's length (the Kelvin sign K is three bytes, k one), which once
// cut s out of range.
func splitAuthors(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 && i+5 <= len(s) && strings.EqualFold(s[i:i+5], " and ") {
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 5
			i += 4
		}
	}
	if last := strings.TrimSpace(s[start:]); last != "" {
		out = append(out, last)
	}
	return out
}

var accents = map[string]map[rune]rune{
	`"`: {'a': 'ä', 'o': 'ö', 'u': 'ü', 'e': 'ë', 'i': 'ï', 'A': 'Ä', 'O': 'Ö', 'U': 'Ü', 'y': 'ÿ'},
	`'`: {'a': 'á', 'e': 'é', 'i': 'í', 'o': 'ó', 'u': 'ú', 'y': 'ý', 'c': 'ć', 'n': 'ń', 's': 'ś', 'z': 'ź', 'E': 'É', 'A': 'Á', 'O': 'Ó'},
	"`": {'a': 'à', 'e': 'è', 'i': 'ì', 'o': 'ò', 'u': 'ù', 'E': 'È', 'A': 'À'},
	`^`: {'a': 'â', 'e': 'ê', 'i': 'î', 'o': 'ô', 'u': 'û'},
	`~`: {'a': 'ã', 'n': 'ñ', 'o': 'õ', 'N': 'Ñ'},
	`c`: {'c': 'ç', 'C': 'Ç', 's': 'ş'},
	`v`: {'c': 'č', 's': 'š', 'z': 'ž', 'r': 'ř', 'e': 'ě', 'C': 'Č', 'S': 'Š', 'Z': 'Ž'},
	`=`: {'a': 'ā', 'e': 'ē', 'o': 'ō'},
}

var symbols = map[string]string{
	`\ss`: "ß", `\o`: "ø", `\O`: "Ø", `\ae`: "æ", `\AE`: "Æ", `\aa`: "å", `\AA`: "Å", `\l`: "ł", `\L`: "Ł",
	`\&`: "&", `\%`: "%", `\$`: "$", `\_`: "_", `\#`: "#", `\{`: "{", `\}`: "}",
	`\textbackslash`: `\`, `\textasciitilde`: "~", `\textasciicircum`: "^",
}

// PlainText turns a LaTeX-flavoured BibTeX value into plain text: accents become
// letters, braces and unknown commands go, white space collapses.
func PlainText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '{' || r == '}':
			continue
		case r == '\\' && i+1 < len(rs):
			// Accent command: \"u, \"{u}, \'{e}, \c{c}, \v{s}.
			cmd := string(rs[i+1])
			if table, ok := accents[cmd]; ok {
				j := i + 2
				for j < len(rs) && (rs[j] == '{' || rs[j] == ' ') {
					j++
				}
				if j < len(rs) {
					if out, ok := table[rs[j]]; ok {
						b.WriteRune(out)
						i = j
						for i+1 < len(rs) && rs[i+1] == '}' {
							i++
						}
						continue
					}
				}
			}
			// Named symbol or command: read letters.
			j := i + 1
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			if j == i+1 && j < len(rs) {
				j++ // a one-character command like \&
			}
			name := string(rs[i:j])
			if out, ok := symbols[name]; ok {
				b.WriteString(out)
			}
			i = j - 1
		case r == '~':
			b.WriteRune(' ')
		case r == '-' && i+1 < len(rs) && rs[i+1] == '-':
			if i+2 < len(rs) && rs[i+2] == '-' {
				b.WriteString("—")
				i += 2
			} else {
				b.WriteString("–")
				i++
			}
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
