package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
)

var (
	pmidRE     = regexp.MustCompile(`^\d{1,9}$`)
	s2IDRE     = regexp.MustCompile(`^[0-9a-f]{40}$`)
	authorIDRE = regexp.MustCompile(`^\d{1,12}$`)
)

// externalString reads a string (or the first string of a list) from an externalIds
// map; numbers are rendered in decimal.
func externalString(ids map[string]json.RawMessage, key string) string {
	raw, ok := ids[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		return strings.TrimSpace(list[0])
	}
	return ""
}

// toIDs reads the identifiers of a paper.
func toIDs(p *s2Paper) paper.IDs {
	var ids paper.IDs
	if s2IDRE.MatchString(p.PaperID) {
		ids.SemanticScholarID = p.PaperID
	}
	ids.DOI = paper.NormalizeDOI(externalString(p.ExternalIDs, "DOI"))
	if id, ver, ok := paper.ParseArXivID(externalString(p.ExternalIDs, "ArXiv")); ok {
		ids.ArXivID, ids.ArXivVersion = id, ver
	}
	if pmid := externalString(p.ExternalIDs, "PubMed"); pmidRE.MatchString(pmid) {
		ids.PubMedID = pmid
	}
	if pmc := strings.TrimPrefix(externalString(p.ExternalIDs, "PubMedCentral"), "PMC"); pmidRE.MatchString(pmc) {
		ids.PMCID = "PMC" + pmc
	}
	return ids
}

// toDate reads publicationDate ("2023-04-11", day precision) or else year (year
// precision); an unusable date is unknown.
func toDate(p *s2Paper) paper.Date {
	if p.PublicationDate != "" {
		if t, err := time.Parse("2006-01-02", p.PublicationDate); err == nil {
			d := paper.DayDate(t)
			if d.Validate() == nil {
				return d
			}
		}
	}
	if p.Year != 0 {
		d := paper.Date{Year: p.Year, Precision: paper.PrecisionYear}
		if d.Validate() == nil {
			return d
		}
	}
	return paper.Date{}
}

// workType maps publicationTypes to Lectern's work types.
func workType(p *s2Paper, ids paper.IDs) string {
	types := p.PublicationTypes
	switch {
	case slices.Contains(types, "Review"):
		return "review"
	case slices.Contains(types, "BookSection"):
		return "book-chapter"
	case slices.Contains(types, "Dataset"):
		return "dataset"
	case slices.Contains(types, "JournalArticle"), slices.Contains(types, "Conference"),
		slices.Contains(types, "CaseReport"), slices.Contains(types, "ClinicalTrial"),
		slices.Contains(types, "Study"), slices.Contains(types, "MetaAnalysis"):
		return "article"
	case ids.ArXivID != "" && ids.DOI == "":
		return "preprint"
	case len(types) > 0:
		return "other"
	}
	return ""
}

// venueType classifies the venue from publicationVenue.type or publicationTypes.
func venueType(p *s2Paper) string {
	if p.PublicationVenue != nil {
		switch strings.ToLower(p.PublicationVenue.Type) {
		case "journal":
			return "journal"
		case "conference":
			return "conference"
		}
	}
	switch {
	case slices.Contains(p.PublicationTypes, "JournalArticle"):
		return "journal"
	case slices.Contains(p.PublicationTypes, "Conference"):
		return "conference"
	case slices.Contains(p.PublicationTypes, "Book"), slices.Contains(p.PublicationTypes, "BookSection"):
		return "book"
	}
	return ""
}

func httpURL(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s
	}
	return ""
}

// toPaper normalizes a Graph API paper; ok is false for records Lectern cannot use
// (no title or no identifier, such as unresolved references).
func toPaper(p *s2Paper) (paper.Paper, bool) {
	ids := toIDs(p)
	title := strings.Join(strings.Fields(p.Title), " ")
	if ids.Empty() || title == "" {
		return paper.Paper{}, false
	}
	out := paper.Paper{
		IDs:           ids,
		Title:         title,
		Abstract:      strings.TrimSpace(p.Abstract),
		Published:     toDate(p),
		LandingURL:    httpURL(p.URL),
		Source:        pluginName,
		CitationCount: p.CitationCount,
		OpenAccess:    p.IsOpenAccess,
		WorkType:      workType(p, ids),
	}
	if out.CitationCount != nil && *out.CitationCount < 0 {
		out.CitationCount = nil
	}
	if out.LandingURL == "" && ids.SemanticScholarID != "" {
		out.LandingURL = "https://www.semanticscholar.org/paper/" + ids.SemanticScholarID
	}
	if pdf := p.OpenAccessPDF; pdf != nil {
		out.PDFURL = httpURL(pdf.URL)
		if out.PDFURL != "" {
			out.License = pdf.License
		}
	}
	out.Venue = paper.Venue{Name: strings.TrimSpace(p.Venue), Type: venueType(p)}
	if j := p.Journal; j != nil {
		if name := strings.TrimSpace(j.Name); name != "" {
			out.Venue.Name = name
		}
		out.Venue.Volume = strings.TrimSpace(j.Volume)
		out.Venue.Pages = strings.Join(strings.Fields(j.Pages), "")
	}
	if v := p.PublicationVenue; v != nil {
		if out.Venue.Name == "" {
			out.Venue.Name = strings.TrimSpace(v.Name)
		}
		if v.ISSN != "" {
			out.Venue.ISSN = []string{v.ISSN}
		}
	}
	for _, a := range p.Authors {
		name := strings.Join(strings.Fields(a.Name), " ")
		if name == "" {
			continue
		}
		author := paper.Author{Name: name, SourceAuthorID: a.AuthorID, ORCID: paper.NormalizeORCID(externalString(a.ExternalIDs, "ORCID"))}
		for _, aff := range a.Affiliations {
			if aff = strings.TrimSpace(aff); aff != "" {
				author.Affiliations = append(author.Affiliations, paper.Affiliation{Name: aff})
			}
		}
		out.Authors = append(out.Authors, author)
	}
	seen := map[string]bool{}
	for _, f := range p.FieldsOfStudy {
		if f != "" && !seen[f] {
			seen[f] = true
			out.Categories = append(out.Categories, f)
		}
	}
	for _, f := range p.S2FieldsOfStudy {
		if f.Category != "" && !seen[f.Category] {
			seen[f.Category] = true
			out.Categories = append(out.Categories, f.Category)
		}
	}
	for i := range p.References {
		if r := toIDs(&p.References[i]); !r.Empty() {
			out.References = append(out.References, r)
		}
	}
	return out, true
}

// toPapers normalizes a list, dropping unusable records.
func toPapers(list []s2Paper) []paper.Paper {
	out := make([]paper.Paper, 0, len(list))
	for i := range list {
		if p, ok := toPaper(&list[i]); ok {
			out = append(out, p)
		}
	}
	return out
}

// periodEnd is the last instant a date can mean (the end of its year or month).
func periodEnd(d paper.Date) time.Time {
	start := d.Time()
	switch d.Precision {
	case paper.PrecisionYear:
		return start.AddDate(1, 0, 0).Add(-time.Nanosecond)
	case paper.PrecisionMonth:
		return start.AddDate(0, 1, 0).Add(-time.Nanosecond)
	}
	return start.AddDate(0, 0, 1).Add(-time.Nanosecond)
}

// sortNewest orders papers newest first, unknown dates last, keeping ties stable.
func sortNewest(ps []paper.Paper) {
	slices.SortStableFunc(ps, func(a, b paper.Paper) int {
		if a.Published.IsZero() != b.Published.IsZero() {
			if a.Published.IsZero() {
				return 1
			}
			return -1
		}
		return b.Published.Time().Compare(a.Published.Time())
	})
}
