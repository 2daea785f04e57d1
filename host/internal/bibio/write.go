package bibio

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// keyFor makes a citation key: the first author's family name, the year and the first
// long title word (vaswani2017attention), with a, b, ... appended when taken.
func keyFor(e Entry, taken map[string]bool) string {
	family := "anon"
	if len(e.Authors) > 0 {
		a := e.Authors[0]
		if i := strings.Index(a, ","); i >= 0 {
			family = a[:i]
		} else if f := strings.Fields(a); len(f) > 0 {
			family = f[len(f)-1]
		}
	}
	word := ""
	for _, w := range strings.Fields(e.Title) {
		if len(w) > 3 {
			word = w
			break
		}
	}
	base := asciiLower(family) + yearString(e.Year) + asciiLower(word)
	if base == "" {
		base = "ref"
	}
	key := base
	for i := 0; taken[key]; i++ {
		key = base + string(rune('a'+i%26)) + strings.Repeat("z", i/26)
	}
	taken[key] = true
	return key
}

func yearString(y int) string {
	if y == 0 {
		return ""
	}
	return strconv.Itoa(y)
}

func asciiLower(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

var bibEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "{", `\{`, "}", `\}`, "&", `\&`, "%", `\%`,
	"$", `\$`, "#", `\#`, "_", `\_`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

// WriteBibTeX writes entries as BibTeX, UTF-8, one entry per paper.
func WriteBibTeX(w io.Writer, entries []Entry) error {
	taken := map[string]bool{}
	for _, e := range entries {
		typ := e.Type
		if typ == "" {
			typ = "article"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "@%s{%s,\n", typ, keyFor(e, taken))
		field := func(name, val string) {
			if val != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", name, bibEscaper.Replace(val))
			}
		}
		field("title", e.Title)
		field("author", strings.Join(e.Authors, " and "))
		if e.Year != 0 {
			fmt.Fprintf(&b, "  year = {%d},\n", e.Year)
		}
		if e.Month != 0 {
			fmt.Fprintf(&b, "  month = {%d},\n", e.Month)
		}
		venueField := "journal"
		if typ == "inproceedings" || typ == "incollection" {
			venueField = "booktitle"
		}
		field(venueField, e.Venue)
		field("volume", e.Volume)
		field("number", e.Issue)
		field("pages", strings.ReplaceAll(e.Pages, "–", "--"))
		field("publisher", e.Publisher)
		field("doi", e.DOI)
		if e.ArxivID != "" {
			field("eprint", e.ArxivID)
			field("archiveprefix", "arXiv")
		}
		field("pmid", e.PubMedID)
		field("url", e.URL)
		field("abstract", e.Abstract)
		b.WriteString("}\n\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return fmt.Errorf("bibio: write bibtex: %w", err)
		}
	}
	return nil
}

var bibToRIS = map[string]string{
	"article": "JOUR", "inproceedings": "CONF", "book": "BOOK", "incollection": "CHAP",
	"phdthesis": "THES", "mastersthesis": "THES", "techreport": "RPRT", "unpublished": "UNPB", "misc": "GEN",
}

// WriteRIS writes entries as RIS records.
func WriteRIS(w io.Writer, entries []Entry) error {
	for _, e := range entries {
		var b strings.Builder
		line := func(tag, val string) {
			if val = strings.Join(strings.Fields(val), " "); val != "" {
				fmt.Fprintf(&b, "%s  - %s\r\n", tag, val)
			}
		}
		ty := bibToRIS[e.Type]
		if ty == "" {
			ty = "JOUR"
		}
		line("TY", ty)
		line("TI", e.Title)
		for _, a := range e.Authors {
			line("AU", a)
		}
		if e.Year != 0 {
			date := fmt.Sprintf("%04d", e.Year)
			if e.Month != 0 {
				date += fmt.Sprintf("/%02d", e.Month)
				if e.Day != 0 {
					date += fmt.Sprintf("/%02d", e.Day)
				}
			}
			line("PY", strconv.Itoa(e.Year))
			line("DA", date)
		}
		line("T2", e.Venue)
		line("VL", e.Volume)
		line("IS", e.Issue)
		if from, to, ok := strings.Cut(e.Pages, "–"); ok {
			line("SP", from)
			line("EP", to)
		} else {
			line("SP", e.Pages)
		}
		line("PB", e.Publisher)
		line("DO", e.DOI)
		if e.ArxivID != "" {
			line("AN", "arXiv:"+e.ArxivID)
		}
		line("UR", e.URL)
		line("L1", e.PDFURL)
		line("AB", e.Abstract)
		b.WriteString("ER  - \r\n\r\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return fmt.Errorf("bibio: write ris: %w", err)
		}
	}
	return nil
}

type cslName struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
}

type cslDate struct {
	DateParts [][]int `json:"date-parts"`
}

type cslItem struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	Title          string    `json:"title"`
	Author         []cslName `json:"author,omitempty"`
	Issued         *cslDate  `json:"issued,omitempty"`
	ContainerTitle string    `json:"container-title,omitempty"`
	Volume         string    `json:"volume,omitempty"`
	Issue          string    `json:"issue,omitempty"`
	Page           string    `json:"page,omitempty"`
	Publisher      string    `json:"publisher,omitempty"`
	DOI            string    `json:"DOI,omitempty"`
	PMID           string    `json:"PMID,omitempty"`
	URL            string    `json:"URL,omitempty"`
	Abstract       string    `json:"abstract,omitempty"`
}

var bibToCSL = map[string]string{
	"article": "article-journal", "inproceedings": "paper-conference", "book": "book",
	"incollection": "chapter", "phdthesis": "thesis", "techreport": "report", "misc": "article",
}

// WriteCSLJSON writes entries as a CSL-JSON array (what Zotero, Pandoc and citeproc read).
func WriteCSLJSON(w io.Writer, entries []Entry) error {
	taken := map[string]bool{}
	items := make([]cslItem, 0, len(entries))
	for _, e := range entries {
		typ := bibToCSL[e.Type]
		if typ == "" {
			typ = "article-journal"
		}
		it := cslItem{ID: keyFor(e, taken), Type: typ, Title: e.Title, ContainerTitle: e.Venue, Volume: e.Volume,
			Issue: e.Issue, Page: e.Pages, Publisher: e.Publisher, DOI: e.DOI, PMID: e.PubMedID, URL: e.URL, Abstract: e.Abstract}
		for _, a := range e.Authors {
			if family, given, ok := strings.Cut(a, ","); ok {
				it.Author = append(it.Author, cslName{Family: strings.TrimSpace(family), Given: strings.TrimSpace(given)})
			} else if f := strings.Fields(a); len(f) > 1 {
				it.Author = append(it.Author, cslName{Family: f[len(f)-1], Given: strings.Join(f[:len(f)-1], " ")})
			} else {
				it.Author = append(it.Author, cslName{Literal: a})
			}
		}
		if e.Year != 0 {
			parts := []int{e.Year}
			if e.Month != 0 {
				parts = append(parts, e.Month)
				if e.Day != 0 {
					parts = append(parts, e.Day)
				}
			}
			it.Issued = &cslDate{DateParts: [][]int{parts}}
		}
		items = append(items, it)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(items); err != nil {
		return fmt.Errorf("bibio: write csl-json: %w", err)
	}
	return nil
}
