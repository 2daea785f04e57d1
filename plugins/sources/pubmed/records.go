package main

import (
	"encoding/xml"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
)

// The PubMed XML of efetch (PubmedArticleSet), as far as Lectern reads it.

// articleSet is efetch's answer.
type articleSet struct {
	Articles []pubmedArticle `xml:"PubmedArticle"`
	Books    []bookArticle   `xml:"PubmedBookArticle"`
}

type pubmedArticle struct {
	Citation medlineCitation `xml:"MedlineCitation"`
	Data     pubmedData      `xml:"PubmedData"`
}

type medlineCitation struct {
	PMID        string   `xml:"PMID"`
	DateRevised xmlDate  `xml:"DateRevised"`
	Article     article  `xml:"Article"`
	MeSH        []string `xml:"MeshHeadingList>MeshHeading>DescriptorName"`
	Comments    []struct {
		RefType string `xml:"RefType,attr"`
		PMID    string `xml:"PMID"`
	} `xml:"CommentsCorrectionsList>CommentsCorrections"`
}

type article struct {
	Journal struct {
		ISSN  []string `xml:"ISSN"`
		Issue struct {
			Volume  string  `xml:"Volume"`
			Issue   string  `xml:"Issue"`
			PubDate pubDate `xml:"PubDate"`
		} `xml:"JournalIssue"`
		Title string `xml:"Title"`
	} `xml:"Journal"`
	Title           mixedText `xml:"ArticleTitle"`
	VernacularTitle mixedText `xml:"VernacularTitle"`
	Pagination      struct {
		StartPage  string `xml:"StartPage"`
		EndPage    string `xml:"EndPage"`
		MedlinePgn string `xml:"MedlinePgn"`
	} `xml:"Pagination"`
	ELocationIDs []typedID       `xml:"ELocationID"`
	Abstract     []abstractText  `xml:"Abstract>AbstractText"`
	Authors      []articleAuthor `xml:"AuthorList>Author"`
	Languages    []string        `xml:"Language"`
	PubTypes     []string        `xml:"PublicationTypeList>PublicationType"`
	ArticleDates []struct {
		DateType string `xml:"DateType,attr"`
		xmlDate
	} `xml:"ArticleDate"`
}

type pubmedData struct {
	History []struct {
		PubStatus string `xml:"PubStatus,attr"`
		xmlDate
	} `xml:"History>PubMedPubDate"`
	ArticleIDs []typedID `xml:"ArticleIdList>ArticleId"`
	References []struct {
		ArticleIDs []typedID `xml:"ArticleIdList>ArticleId"`
	} `xml:"ReferenceList>Reference"`
}

// bookArticle is a PubMed record of a book or book chapter (NCBI Bookshelf).
type bookArticle struct {
	Document struct {
		PMID       string    `xml:"PMID"`
		ArticleIDs []typedID `xml:"ArticleIdList>ArticleId"`
		Book       struct {
			Publisher string          `xml:"Publisher>PublisherName"`
			Title     mixedText       `xml:"BookTitle"`
			PubDate   pubDate         `xml:"PubDate"`
			Authors   []articleAuthor `xml:"AuthorList>Author"`
		} `xml:"Book"`
		Title     mixedText       `xml:"ArticleTitle"`
		Authors   []articleAuthor `xml:"AuthorList>Author"`
		Abstract  []abstractText  `xml:"Abstract>AbstractText"`
		Languages []string        `xml:"Language"`
	} `xml:"BookDocument"`
	Data pubmedData `xml:"PubmedBookData"`
}

// typedID is an ArticleId (IdType) or ELocationID (EIdType).
type typedID struct {
	IDType  string `xml:"IdType,attr"`
	EIDType string `xml:"EIdType,attr"`
	Value   string `xml:",chardata"`
}

// abstractText is one AbstractText segment with its optional Label.
type abstractText struct {
	Label string
	Text  mixedText
}

// UnmarshalXML reads the Label and the text of an AbstractText, inline markup
// included.
func (a *abstractText) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	for _, attr := range start.Attr {
		if attr.Name.Local == "Label" {
			a.Label = strings.TrimSpace(attr.Value)
		}
	}
	return a.Text.UnmarshalXML(d, start)
}

type articleAuthor struct {
	ValidYN        string   `xml:"ValidYN,attr"`
	LastName       string   `xml:"LastName"`
	ForeName       string   `xml:"ForeName"`
	Initials       string   `xml:"Initials"`
	Suffix         string   `xml:"Suffix"`
	CollectiveName string   `xml:"CollectiveName"`
	Affiliations   []string `xml:"AffiliationInfo>Affiliation"`
	Identifiers    []struct {
		Source string `xml:"Source,attr"`
		Value  string `xml:",chardata"`
	} `xml:"Identifier"`
}

// xmlDate is a Year/Month/Day element group.
type xmlDate struct {
	Year  string `xml:"Year"`
	Month string `xml:"Month"`
	Day   string `xml:"Day"`
}

// pubDate is a journal issue's PubDate: Year with optional Month (number or name),
// Day or Season, or a free-form MedlineDate.
type pubDate struct {
	xmlDate
	Season      string `xml:"Season"`
	MedlineDate string `xml:"MedlineDate"`
}

// mixedText is an element's text with inline markup (<i>, <sup>, ...) flattened and
// white space collapsed.
type mixedText string

// UnmarshalXML concatenates every character run inside the element.
func (t *mixedText) UnmarshalXML(d *xml.Decoder, _ xml.StartElement) error {
	var b strings.Builder
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tk := tok.(type) {
		case xml.CharData:
			b.Write(tk)
		case xml.StartElement:
			depth++
		case xml.EndElement:
			if depth == 0 {
				*t = mixedText(strings.Join(strings.Fields(b.String()), " "))
				return nil
			}
			depth--
		}
	}
}

var (
	pmidRE    = regexp.MustCompile(`^\d{1,9}$`)
	months    = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	languages = map[string]string{
		"eng": "en", "fre": "fr", "ger": "de", "spa": "es", "ita": "it", "jpn": "ja", "chi": "zh", "rus": "ru",
		"por": "pt", "dut": "nl", "pol": "pl", "swe": "sv", "dan": "da", "nor": "no", "fin": "fi", "kor": "ko",
		"tur": "tr", "cze": "cs", "hun": "hu", "gre": "el", "heb": "he", "ara": "ar", "per": "fa",
	}
)

// normalizePMCID returns "PMC1234567", or "" when s is not a PMC id.
func normalizePMCID(s string) string {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "PMC")
	if !pmidRE.MatchString(n) {
		return ""
	}
	return "PMC" + n
}

// monthNumber reads a month given as a number or an English name or abbreviation;
// 0 when it is neither.
func monthNumber(s string) int {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 1 && n <= 12 {
			return n
		}
		return 0
	}
	if len(s) < 3 {
		return 0
	}
	return slices.Index(months, strings.ToLower(s[:3])) + 1
}

// date builds the most precise valid date from year, month and day strings.
func date(year, month, day string) paper.Date {
	y, err := strconv.Atoi(strings.TrimSpace(year))
	if err != nil {
		return paper.Date{}
	}
	d := paper.Date{Year: y, Precision: paper.PrecisionYear}
	if m := monthNumber(month); m != 0 {
		d.Month, d.Precision = m, paper.PrecisionMonth
		if dd, err := strconv.Atoi(strings.TrimSpace(day)); err == nil {
			d.Day, d.Precision = dd, paper.PrecisionDay
		}
	}
	for d.Validate() != nil && d.Precision > paper.PrecisionUnknown {
		d.Precision--
		switch d.Precision {
		case paper.PrecisionMonth:
			d.Day = 0
		case paper.PrecisionYear:
			d.Month, d.Day = 0, 0
		case paper.PrecisionUnknown:
			d = paper.Date{}
		}
	}
	return d
}

var medlineDateRE = regexp.MustCompile(`^(\d{4})(?:\s+([A-Za-z]+)(?:\s+(\d{1,2}))?)?(.*)$`)

// medlineDate reads a free-form MedlineDate ("1998 Dec-1999 Jan", "2000 Spring",
// "2001 Jun 12-18", "1975-1976"): the first year, then the month and day only when
// they are not the start of a range.
func medlineDate(s string) paper.Date {
	m := medlineDateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return paper.Date{}
	}
	year, month, day, rest := m[1], m[2], m[3], m[4]
	switch {
	case day != "" && strings.HasPrefix(rest, "-"):
		day = "" // a range of days: the month is known
	case day == "" && month != "" && strings.HasPrefix(rest, "-"):
		month = "" // a range of months: only the year is known
	}
	if month == "" {
		day = ""
	}
	return date(year, month, day)
}

// published picks the publication date: the electronic ArticleDate when the issue
// date does not end before it (the article appeared online first), else the
// journal issue's PubDate or MedlineDate.
func published(a *article) paper.Date {
	pd := a.Journal.Issue.PubDate
	issue := date(pd.Year, pd.Month, pd.Day)
	if pd.Year == "" && pd.MedlineDate != "" {
		issue = medlineDate(pd.MedlineDate)
	}
	for _, ad := range a.ArticleDates {
		if ad.DateType != "" && !strings.EqualFold(ad.DateType, "Electronic") {
			continue
		}
		online := date(ad.Year, ad.Month, ad.Day)
		if online.IsZero() {
			continue
		}
		if issue.IsZero() || !periodEnd(issue).Before(online.Time()) {
			return online
		}
	}
	return issue
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

// toAuthors normalizes an AuthorList, skipping entries marked invalid.
func toAuthors(list []articleAuthor) []paper.Author {
	var out []paper.Author
	for _, a := range list {
		if strings.EqualFold(a.ValidYN, "N") {
			continue
		}
		au := paper.Author{FamilyName: strings.TrimSpace(a.LastName), GivenName: strings.TrimSpace(a.ForeName)}
		if au.GivenName == "" {
			au.GivenName = strings.TrimSpace(a.Initials)
		}
		switch {
		case au.FamilyName != "":
			au.Name = strings.TrimSpace(au.GivenName + " " + au.FamilyName)
			if s := strings.TrimSpace(a.Suffix); s != "" {
				au.Name += " " + s
			}
		case strings.TrimSpace(a.CollectiveName) != "":
			au = paper.Author{Name: strings.Join(strings.Fields(a.CollectiveName), " ")}
		default:
			continue
		}
		for _, id := range a.Identifiers {
			if strings.EqualFold(id.Source, "ORCID") {
				au.ORCID = paper.NormalizeORCID(id.Value)
			}
		}
		for _, aff := range a.Affiliations {
			if aff = strings.Join(strings.Fields(aff), " "); aff != "" {
				au.Affiliations = append(au.Affiliations, paper.Affiliation{Name: aff})
			}
		}
		out = append(out, au)
	}
	return out
}

// abstract joins AbstractText segments, each labelled one as "LABEL: text", with
// blank lines between them.
func abstract(segments []abstractText) string {
	var parts []string
	for _, s := range segments {
		text := strings.TrimSpace(string(s.Text))
		if text == "" {
			continue
		}
		if s.Label != "" {
			text = s.Label + ": " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}

// applyIDs reads an ArticleIdList (and ELocationIDs) into ids.
func applyIDs(ids *paper.IDs, list []typedID) {
	for _, id := range list {
		v := strings.TrimSpace(id.Value)
		switch strings.ToLower(id.IDType + id.EIDType) {
		case "pubmed":
			if ids.PubMedID == "" && pmidRE.MatchString(v) {
				ids.PubMedID = v
			}
		case "doi":
			if ids.DOI == "" {
				ids.DOI = paper.NormalizeDOI(v)
			}
		case "pmc":
			if ids.PMCID == "" {
				ids.PMCID = normalizePMCID(v)
			}
		}
	}
}

// landingURL is the PubMed page of a record.
func landingURL(pmid string) string { return "https://pubmed.ncbi.nlm.nih.gov/" + pmid + "/" }

// workType maps PublicationTypes to Lectern's work types.
func workType(types []string) string {
	has := func(name string) bool {
		return slices.ContainsFunc(types, func(t string) bool { return strings.EqualFold(t, name) })
	}
	switch {
	case has("Preprint"):
		return "preprint"
	case has("Review"), has("Systematic Review"), has("Meta-Analysis"):
		return "review"
	case has("Dataset"):
		return "dataset"
	}
	return "article"
}

// toPaper normalizes a PubmedArticle; ok is false for a record without a PMID or
// a title.
func (r *pubmedArticle) toPaper(now time.Time) (paper.Paper, bool) {
	mc, a := &r.Citation, &r.Citation.Article
	var ids paper.IDs
	if pmid := strings.TrimSpace(mc.PMID); pmidRE.MatchString(pmid) {
		ids.PubMedID = pmid
	}
	applyIDs(&ids, r.Data.ArticleIDs)
	applyIDs(&ids, a.ELocationIDs)
	title := strings.TrimSpace(string(a.Title))
	if title == "" {
		title = strings.TrimSpace(string(a.VernacularTitle))
	}
	if ids.PubMedID == "" || title == "" {
		return paper.Paper{}, false
	}
	p := paper.Paper{
		IDs:        ids,
		Title:      title,
		Authors:    toAuthors(a.Authors),
		Abstract:   abstract(a.Abstract),
		Published:  published(a),
		LandingURL: landingURL(ids.PubMedID),
		Source:     pluginName,
		WorkType:   workType(a.PubTypes),
		Categories: slices.Compact(slices.Clone(mc.MeSH)),
	}
	p.Venue = paper.Venue{
		Name:   strings.TrimSpace(a.Journal.Title),
		Type:   "journal",
		Volume: strings.TrimSpace(a.Journal.Issue.Volume),
		Issue:  strings.TrimSpace(a.Journal.Issue.Issue),
		Pages:  strings.TrimSpace(a.Pagination.MedlinePgn),
	}
	if p.Venue.Pages == "" && a.Pagination.StartPage != "" {
		p.Venue.Pages = strings.TrimSpace(a.Pagination.StartPage)
		if a.Pagination.EndPage != "" {
			p.Venue.Pages += "-" + strings.TrimSpace(a.Pagination.EndPage)
		}
	}
	for _, issn := range a.Journal.ISSN {
		if issn = strings.TrimSpace(issn); issn != "" {
			p.Venue.ISSN = append(p.Venue.ISSN, issn)
		}
	}
	for _, l := range a.Languages {
		if tag, ok := languages[strings.ToLower(strings.TrimSpace(l))]; ok {
			p.Language = tag
			break
		}
	}
	if ids.PMCID != "" {
		// A PMC copy is free to read once any embargo (pmc-release) has passed.
		p.OpenAccess = true
		for _, h := range r.Data.History {
			if strings.EqualFold(h.PubStatus, "pmc-release") {
				if d := date(h.Year, h.Month, h.Day); !d.IsZero() && d.Time().After(now) {
					p.OpenAccess = false
				}
			}
		}
	}
	if rev := mc.DateRevised; rev.Year != "" {
		if d := date(rev.Year, rev.Month, rev.Day); d.Precision == paper.PrecisionDay {
			p.UpdatedAt = d.Time()
		}
	}
	p.References = references(r)
	return p, true
}

// references reads the ReferenceList (current records) and CommentsCorrections of
// type Cites (older ones), deduplicated.
func references(r *pubmedArticle) []paper.IDs {
	var out []paper.IDs
	seen := map[paper.IDs]bool{}
	add := func(ids paper.IDs) {
		if !ids.Empty() && !seen[ids] {
			seen[ids] = true
			out = append(out, ids)
		}
	}
	for _, ref := range r.Data.References {
		var ids paper.IDs
		applyIDs(&ids, ref.ArticleIDs)
		add(ids)
	}
	for _, c := range r.Citation.Comments {
		if c.RefType == "Cites" {
			if pmid := strings.TrimSpace(c.PMID); pmidRE.MatchString(pmid) {
				add(paper.IDs{PubMedID: pmid})
			}
		}
	}
	return out
}

// toPaper normalizes a PubmedBookArticle.
func (b *bookArticle) toPaper() (paper.Paper, bool) {
	doc := &b.Document
	var ids paper.IDs
	if pmid := strings.TrimSpace(doc.PMID); pmidRE.MatchString(pmid) {
		ids.PubMedID = pmid
	}
	applyIDs(&ids, doc.ArticleIDs)
	applyIDs(&ids, b.Data.ArticleIDs)
	title := strings.TrimSpace(string(doc.Title))
	if title == "" {
		title = strings.TrimSpace(string(doc.Book.Title))
	}
	if ids.PubMedID == "" || title == "" {
		return paper.Paper{}, false
	}
	authors := doc.Authors
	if len(authors) == 0 {
		authors = doc.Book.Authors
	}
	pd := doc.Book.PubDate
	p := paper.Paper{
		IDs:        ids,
		Title:      title,
		Authors:    toAuthors(authors),
		Abstract:   abstract(doc.Abstract),
		Published:  date(pd.Year, pd.Month, pd.Day),
		LandingURL: landingURL(ids.PubMedID),
		Source:     pluginName,
		WorkType:   "book-chapter",
		Venue:      paper.Venue{Name: strings.TrimSpace(string(doc.Book.Title)), Type: "book", Publisher: strings.TrimSpace(doc.Book.Publisher)},
	}
	if p.Venue.Name == title {
		p.WorkType = "other"
	}
	for _, l := range doc.Languages {
		if tag, ok := languages[strings.ToLower(strings.TrimSpace(l))]; ok {
			p.Language = tag
			break
		}
	}
	return p, true
}

// item finds a named esummary item.
func (d *docSum) item(name string) *docItem {
	for i := range d.Items {
		if d.Items[i].Name == name {
			return &d.Items[i]
		}
	}
	return nil
}

func (d *docSum) value(name string) string {
	if it := d.item(name); it != nil {
		return strings.TrimSpace(it.Value)
	}
	return ""
}

// toPaper normalizes an esummary DocSum, the short record used when efetch has no
// full record for an id. Author names come as "LastName Initials".
func (d *docSum) toPaper() (paper.Paper, bool) {
	var ids paper.IDs
	if pmid := strings.TrimSpace(d.ID); pmidRE.MatchString(pmid) {
		ids.PubMedID = pmid
	}
	if it := d.item("ArticleIds"); it != nil {
		for _, sub := range it.Items {
			applyIDs(&ids, []typedID{{IDType: sub.Name, Value: sub.Value}})
		}
	}
	if doi := paper.NormalizeDOI(d.value("DOI")); ids.DOI == "" && doi != "" {
		ids.DOI = doi
	}
	title := strings.Join(strings.Fields(d.value("Title")), " ")
	if ids.PubMedID == "" || title == "" {
		return paper.Paper{}, false
	}
	p := paper.Paper{
		IDs:        ids,
		Title:      title,
		Published:  medlineDate(d.value("PubDate")),
		LandingURL: landingURL(ids.PubMedID),
		Source:     pluginName,
		Venue: paper.Venue{
			Name: d.value("FullJournalName"), Type: "journal",
			Volume: d.value("Volume"), Issue: d.value("Issue"), Pages: d.value("Pages"),
		},
	}
	if p.Venue.Name == "" {
		p.Venue.Name = d.value("Source")
	}
	for _, issn := range []string{d.value("ISSN"), d.value("ESSN")} {
		if issn != "" {
			p.Venue.ISSN = append(p.Venue.ISSN, issn)
		}
	}
	if it := d.item("AuthorList"); it != nil {
		for _, a := range it.Items {
			if name := strings.Join(strings.Fields(a.Value), " "); name != "" {
				p.Authors = append(p.Authors, paper.Author{Name: name})
			}
		}
	}
	var types []string
	if it := d.item("PubTypeList"); it != nil {
		for _, t := range it.Items {
			types = append(types, strings.TrimSpace(t.Value))
		}
	}
	p.WorkType = workType(types)
	if it := d.item("LangList"); it != nil {
		for _, l := range it.Items {
			if strings.EqualFold(strings.TrimSpace(l.Value), "English") {
				p.Language = "en"
			}
		}
	}
	return p, true
}
