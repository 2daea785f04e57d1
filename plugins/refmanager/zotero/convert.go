package main

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/paper"
)

// record reports whether a Zotero item is a bibliographic record rather than a
// child or a standalone note.
func record(it webapi.Item) bool {
	switch it.ItemType {
	case "note", "attachment", "annotation":
		return false
	}
	return it.ParentItem == ""
}

var arxivInText = regexp.MustCompile(`(?i)arxiv(?:\.org/(?:abs|pdf)/|:\s*)([a-z\-]+(?:\.[a-z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v(\d+))?`)

// toPaper is the bibliographic record of a Zotero item of library lib.
func toPaper(lib webapi.Library, it webapi.Item) paper.Paper {
	p := paper.Paper{
		Title:    strings.TrimSpace(it.Title),
		Abstract: strings.TrimSpace(it.Abstract),
		Venue: paper.Venue{Name: it.Publication, Volume: it.Volume, Issue: it.Issue, Pages: it.Pages,
			Publisher: it.Publisher},
		WorkType:  workType(it.ItemType),
		Published: date(it.ParsedDate),
		Source:    "zotero",
	}
	if p.Title == "" {
		p.Title = "Untitled Zotero item " + it.Key
	}
	if it.ISSN != "" {
		p.Venue.ISSN = strings.Fields(strings.ReplaceAll(it.ISSN, ",", " "))
	}
	if strings.HasPrefix(it.URL, "https://") || strings.HasPrefix(it.URL, "http://") {
		p.LandingURL = it.URL
	}
	p.IDs.DOI = paper.NormalizeDOI(it.DOI)
	if !doiLike(p.IDs.DOI) {
		p.IDs.DOI = ""
	}
	if m := arxivInText.FindStringSubmatch(it.URL + "\n" + it.Extra); m != nil && arxivCase(m[1]) != "" {
		p.IDs.ArXivID = arxivCase(m[1])
		p.IDs.ArXivVersion, _ = strconv.Atoi(m[2])
	} else if a := paper.ArXivFromDOI(p.IDs.DOI); a != "" {
		p.IDs.ArXivID = a
	}
	p.IDs.SourceID = libraryID(lib) + "/items/" + it.Key
	authors := creators(it.Creators, "author")
	if len(authors) == 0 {
		authors = creators(it.Creators, "")
	}
	p.Authors = authors
	return p
}

// arxivCase writes an arXiv id found in text the way arXiv does (an old-style id's
// archive in lower case, its subject class in upper case: "math.GT/0309136"), or
// "" when it is no id: users type "ARXIV: HEP-TH/9901001", which the host would
// refuse as an identifier.
func arxivCase(id string) string {
	if archive, number, ok := strings.Cut(id, "/"); ok {
		name, class, hasClass := strings.Cut(archive, ".")
		id = strings.ToLower(name) + "/" + number
		if hasClass {
			id = strings.ToLower(name) + "." + strings.ToUpper(class) + "/" + number
		}
	}
	if got, _, ok := paper.ParseArXivID(id); ok && got == id {
		return id
	}
	return ""
}

var doiPattern = regexp.MustCompile(`^10\.\d{4,9}/\S+$`)

func doiLike(s string) bool { return doiPattern.MatchString(s) }

// creators are the item's creators of one type ("" for all), as authors.
func creators(cs []webapi.Creator, kind string) []paper.Author {
	var out []paper.Author
	for _, c := range cs {
		if kind != "" && c.CreatorType != kind {
			continue
		}
		if name := c.Display(); name != "" {
			out = append(out, paper.Author{Name: name, GivenName: c.FirstName, FamilyName: c.LastName})
		}
	}
	return out
}

// workType maps Zotero's item types to the SDK's.
func workType(t string) string {
	switch t {
	case "journalArticle", "conferencePaper", "magazineArticle", "newspaperArticle":
		return "article"
	case "preprint":
		return "preprint"
	case "bookSection":
		return "book-chapter"
	case "dataset":
		return "dataset"
	}
	return "other"
}

// date reads Zotero's parsedDate ("2017-06-12", "2017-06", "2017") at the finest
// precision that makes a real date: "2017-02-31" is February 2017, and a year
// outside 1000-9999 (the user's typing of "1" or "20177") is no date at all, which
// the host would otherwise drop together with the whole date.
func date(s string) paper.Date {
	parts := strings.Split(s, "-")
	var n [3]int
	for i, p := range parts {
		if i >= 3 {
			break
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return paper.Date{}
		}
		n[i] = v
	}
	for _, d := range []paper.Date{
		{Year: n[0], Month: n[1], Day: n[2], Precision: paper.PrecisionDay},
		{Year: n[0], Month: n[1], Precision: paper.PrecisionMonth},
		{Year: n[0], Precision: paper.PrecisionYear},
	}[3-min(len(parts), 3):] {
		if d.Validate() == nil {
			return d
		}
	}
	return paper.Date{}
}

// fromPaper is the editable JSON of a new Zotero item for p, marked.
func fromPaper(p paper.Paper, marker string, collection string) map[string]any {
	t := "journalArticle"
	switch p.WorkType {
	case "preprint":
		t = "preprint"
	case "book-chapter":
		t = "bookSection"
	case "dataset":
		t = "dataset"
	}
	item := map[string]any{"itemType": t, "title": p.Title, "abstractNote": p.Abstract, "extra": marker,
		"creators": authorsJSON(p.Authors), "tags": []any{}, "collections": []any{}}
	if collection != "" {
		item["collections"] = []any{collection}
	}
	if p.IDs.DOI != "" && t != "bookSection" {
		item["DOI"] = p.IDs.DOI
	}
	if !p.Published.IsZero() {
		item["date"] = p.Published.String()
	}
	if p.LandingURL != "" {
		item["url"] = p.LandingURL
	} else if p.IDs.ArXivID != "" {
		item["url"] = "https://arxiv.org/abs/" + p.IDs.ArXivID
	}
	switch t {
	case "journalArticle":
		item["publicationTitle"] = p.Venue.Name
		item["volume"], item["issue"], item["pages"] = p.Venue.Volume, p.Venue.Issue, p.Venue.Pages
	case "preprint":
		item["repository"] = p.Venue.Name
		if p.IDs.ArXivID != "" {
			item["archiveID"] = "arXiv:" + p.IDs.ArXivID
		}
	case "bookSection":
		item["bookTitle"] = p.Venue.Name
		if p.IDs.DOI != "" { // a book section has no DOI field; Zotero reads it from Extra
			item["extra"] = marker + "\nDOI: " + p.IDs.DOI
		}
	}
	return item
}

func authorsJSON(as []paper.Author) []any {
	out := make([]any, 0, len(as))
	for _, a := range as {
		if a.FamilyName != "" {
			out = append(out, map[string]any{"creatorType": "author", "firstName": a.GivenName, "lastName": a.FamilyName})
		} else {
			out = append(out, map[string]any{"creatorType": "author", "name": a.Name})
		}
	}
	return out
}
