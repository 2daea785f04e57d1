// Package paper is the bibliographic record every paper source returns and the
// reference manager plugins exchange: identifiers, title, authors with ORCID and
// affiliations, abstract, a publication date with its precision, venue, links,
// citation count and references.
//
// This package follows semantic versioning with the sdk module.
package paper

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// IDs names one work in the systems Lectern knows. Every field is optional; a
// well-formed Paper has at least one.
type IDs struct {
	// DOI is lowercase and bare ("10.1145/3368089.3409742").
	DOI string
	// ArXivID is the arXiv identifier without version ("2101.00001").
	ArXivID string
	// ArXivVersion is the version number (2 for v2); 0 when unknown.
	ArXivVersion int
	// OpenAlexID is the OpenAlex work id ("W2741809807").
	OpenAlexID string
	// SemanticScholarID is the Semantic Scholar paper id (40 hex digits).
	SemanticScholarID string
	// PubMedID is the PMID (digits only).
	PubMedID string
	// PMCID is the PubMed Central id ("PMC1234567").
	PMCID string
	// SourceID is the id in the answering source when none of the above applies.
	SourceID string
}

// Empty reports whether no identifier is set.
func (ids IDs) Empty() bool {
	return ids.DOI == "" && ids.ArXivID == "" && ids.OpenAlexID == "" &&
		ids.SemanticScholarID == "" && ids.PubMedID == "" && ids.PMCID == "" && ids.SourceID == ""
}

// Affiliation is an author's institution.
type Affiliation struct {
	// Name is the institution's name.
	Name string
	// ROR is the Research Organization Registry id URL, when known.
	ROR string
	// Country is an ISO 3166-1 alpha-2 code, when known.
	Country string
}

// Author is one author of a paper.
type Author struct {
	// Name is the display name as the source gives it. Required.
	Name string
	// GivenName and FamilyName are the split name, when the source splits it.
	GivenName  string
	FamilyName string
	// ORCID is the bare ORCID iD ("0000-0002-1825-0097").
	ORCID string
	// Affiliations lists the author's institutions for this paper.
	Affiliations []Affiliation
	// SourceAuthorID is the author's id in the answering source.
	SourceAuthorID string
}

// Precision says how much of a Date is known.
type Precision int

// Date precisions.
const (
	// PrecisionUnknown: no date.
	PrecisionUnknown Precision = iota
	// PrecisionYear: only the year.
	PrecisionYear
	// PrecisionMonth: year and month.
	PrecisionMonth
	// PrecisionDay: the full date.
	PrecisionDay
)

// Date is a publication date that may be known only to the year or month.
type Date struct {
	Year, Month, Day int
	Precision        Precision
}

// DayDate returns a Date known to the day.
func DayDate(t time.Time) Date {
	return Date{Year: t.Year(), Month: int(t.Month()), Day: t.Day(), Precision: PrecisionDay}
}

// IsZero reports whether no date is known.
func (d Date) IsZero() bool { return d.Precision == PrecisionUnknown }

// Time returns the first instant the date can mean, in UTC.
func (d Date) Time() time.Time {
	m, day := d.Month, d.Day
	if d.Precision < PrecisionMonth || m == 0 {
		m = 1
	}
	if d.Precision < PrecisionDay || day == 0 {
		day = 1
	}
	return time.Date(d.Year, time.Month(m), day, 0, 0, 0, 0, time.UTC)
}

// String renders "2024", "2024-03" or "2024-03-17"; "" when unknown.
func (d Date) String() string {
	switch d.Precision {
	case PrecisionYear:
		return fmt.Sprintf("%04d", d.Year)
	case PrecisionMonth:
		return fmt.Sprintf("%04d-%02d", d.Year, d.Month)
	case PrecisionDay:
		return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
	}
	return ""
}

// Validate checks that the fields agree with the precision and form a real date.
func (d Date) Validate() error {
	switch d.Precision {
	case PrecisionUnknown:
		if d != (Date{}) {
			return fmt.Errorf("date without precision has fields set")
		}
		return nil
	case PrecisionYear:
		if d.Month != 0 || d.Day != 0 {
			return fmt.Errorf("year-precision date %d has month or day", d.Year)
		}
	case PrecisionMonth:
		if d.Month < 1 || d.Month > 12 || d.Day != 0 {
			return fmt.Errorf("month-precision date %d-%d is not a month", d.Year, d.Month)
		}
	case PrecisionDay:
		if d.Month < 1 || d.Month > 12 || d.Day < 1 || d.Time().Day() != d.Day {
			return fmt.Errorf("day-precision date %d-%d-%d is not a day", d.Year, d.Month, d.Day)
		}
	default:
		return fmt.Errorf("unknown date precision %d", d.Precision)
	}
	if d.Year < 1000 || d.Year > 9999 {
		return fmt.Errorf("year %d is out of range", d.Year)
	}
	return nil
}

// Venue is where a paper appeared.
type Venue struct {
	// Name is the journal, conference or repository name.
	Name string
	// Type is journal, conference, preprint, book, repository or other.
	Type      string
	Volume    string
	Issue     string
	Pages     string
	Publisher string
	ISSN      []string
}

// Paper is one bibliographic record as a source returns it.
type Paper struct {
	// IDs identify the work. At least one must be set.
	IDs IDs
	// Title is required.
	Title string
	// Authors in byline order.
	Authors []Author
	// Abstract is plain text.
	Abstract string
	// Published is the publication date with its precision.
	Published Date
	// Venue is where it appeared.
	Venue Venue
	// LandingURL is the human page for the work (absolute http(s) URL).
	LandingURL string
	// PDFURL is a direct link to an openly available PDF (absolute http(s) URL).
	PDFURL string
	// Source is the name of the plugin that produced the record. The serve helpers
	// fill it from Describe when a plugin leaves it empty.
	Source string
	// CitationCount is how often the work is cited; nil when the source does not say.
	CitationCount *int64
	// References are the works this paper cites.
	References []IDs
	// Categories are subject classes (arXiv categories, MeSH terms, concepts).
	Categories []string
	// OpenAccess is true when a full text is free to read.
	OpenAccess bool
	// License is the licence id of the open full text, when known.
	License string
	// WorkType is article, preprint, review, book-chapter, dataset or other.
	WorkType string
	// Language is a BCP 47 tag, when known.
	Language string
	// UpdatedAt is when the source last changed the record; zero when unknown.
	UpdatedAt time.Time
}

var (
	doiPattern   = regexp.MustCompile(`^10\.\d{4,9}/\S+$`)
	arxivPattern = regexp.MustCompile(`^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})$`)
	orcidPattern = regexp.MustCompile(`^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$`)
	pmidPattern  = regexp.MustCompile(`^\d{1,9}$`)
)

// Validate checks the identifier formats.
func (ids IDs) Validate() error {
	if ids.Empty() {
		return fmt.Errorf("no identifier")
	}
	if ids.DOI != "" && (!doiPattern.MatchString(ids.DOI) || ids.DOI != strings.ToLower(ids.DOI)) {
		return fmt.Errorf("doi %q is not a bare lowercase DOI", ids.DOI)
	}
	if ids.ArXivID != "" && !arxivPattern.MatchString(ids.ArXivID) {
		return fmt.Errorf("arXiv id %q is not an arXiv identifier without version", ids.ArXivID)
	}
	if ids.ArXivVersion < 0 || (ids.ArXivVersion > 0 && ids.ArXivID == "") {
		return fmt.Errorf("arXiv version %d without a valid arXiv id", ids.ArXivVersion)
	}
	if ids.PubMedID != "" && !pmidPattern.MatchString(ids.PubMedID) {
		return fmt.Errorf("PubMed id %q is not a PMID", ids.PubMedID)
	}
	return nil
}

// Validate checks that p is well formed: at least one valid identifier, a title,
// named authors with well-formed ORCID iDs, a consistent date, absolute http(s)
// URLs and a non-negative citation count. The conformance kit runs it on every paper
// a source returns.
func (p *Paper) Validate() error {
	if err := p.IDs.Validate(); err != nil {
		return fmt.Errorf("paper %q: %w", p.Title, err)
	}
	if strings.TrimSpace(p.Title) == "" {
		return fmt.Errorf("paper %+v: empty title", p.IDs)
	}
	for i, a := range p.Authors {
		if strings.TrimSpace(a.Name) == "" {
			return fmt.Errorf("paper %q: author %d has no name", p.Title, i+1)
		}
		if a.ORCID != "" && !orcidPattern.MatchString(a.ORCID) {
			return fmt.Errorf("paper %q: author %q: ORCID %q is not a bare ORCID iD", p.Title, a.Name, a.ORCID)
		}
	}
	if err := p.Published.Validate(); err != nil {
		return fmt.Errorf("paper %q: %w", p.Title, err)
	}
	for _, u := range []string{p.LandingURL, p.PDFURL} {
		if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return fmt.Errorf("paper %q: URL %q is not an absolute http(s) URL", p.Title, u)
		}
	}
	if p.CitationCount != nil && *p.CitationCount < 0 {
		return fmt.Errorf("paper %q: negative citation count", p.Title)
	}
	if p.Source == "" {
		return fmt.Errorf("paper %q: no source", p.Title)
	}
	for i, r := range p.References {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("paper %q: reference %d: %w", p.Title, i+1, err)
		}
	}
	return nil
}
