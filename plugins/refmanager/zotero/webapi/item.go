package webapi

import (
	"cmp"
	"encoding/json"
	"strings"
)

// Item is one Zotero item: a bibliographic record, an attachment, a note or an
// annotation, with the fields the plugin reads. Data keeps the whole editable
// JSON, so a write can send back what it read with only its own changes.
type Item struct {
	Key     string
	Version int64
	// ItemType is "journalArticle", "book", "attachment", "note", "annotation", ...
	ItemType string
	Title    string
	Creators []Creator
	Abstract string
	// Date is as the user typed it ("2017", "June 12, 2017").
	Date        string
	DOI         string
	URL         string
	Extra       string
	Publication string
	// Volume, Issue, Pages, Publisher and ISSN describe where a record appeared.
	Volume, Issue, Pages, Publisher, ISSN string
	// ParsedDate is Zotero's reading of Date: "2017-06-12", "2017-06" or "2017".
	ParsedDate string
	// ParentItem is the key of the item a child (note, attachment, annotation)
	// belongs to; empty for a top-level item.
	ParentItem  string
	Collections []string
	Tags        []string
	// Trashed is true for an item in the trash: the sync treats it as removed.
	Trashed bool
	// Note is a note's HTML.
	Note string
	// ContentType and Filename describe an attachment.
	ContentType, Filename string
	// Annotation fields: kind ("highlight", "note", "underline", "image", "ink"),
	// the highlighted text, the user's comment, and the page label.
	AnnotationType, AnnotationText, AnnotationComment, AnnotationPageLabel string

	Data map[string]any
}

// Creator is an author, editor, ...: two-field or one-field (an institution).
type Creator struct {
	CreatorType string `json:"creatorType"`
	FirstName   string `json:"firstName,omitempty"`
	LastName    string `json:"lastName,omitempty"`
	Name        string `json:"name,omitempty"`
}

// Display is the creator's name as people write it.
func (c Creator) Display() string {
	if c.Name != "" {
		return c.Name
	}
	return strings.TrimSpace(c.FirstName + " " + c.LastName)
}

// Collection is one collection.
type Collection struct {
	Key     string
	Version int64
	Name    string
	// Parent is the parent collection's key; empty at the top level.
	Parent string
}

// itemData is the editable JSON's fields this package reads.
type itemData struct {
	ItemType         string    `json:"itemType"`
	Title            string    `json:"title"`
	Creators         []Creator `json:"creators"`
	AbstractNote     string    `json:"abstractNote"`
	Date             string    `json:"date"`
	DOI              string    `json:"DOI"`
	URL              string    `json:"url"`
	Extra            string    `json:"extra"`
	PublicationTitle string    `json:"publicationTitle"`
	BookTitle        string    `json:"bookTitle"`
	ProceedingsTitle string    `json:"proceedingsTitle"`
	Volume           string    `json:"volume"`
	Issue            string    `json:"issue"`
	Pages            string    `json:"pages"`
	Publisher        string    `json:"publisher"`
	ISSN             string    `json:"ISSN"`
	ParentItem       any       `json:"parentItem"`
	Collections      []string  `json:"collections"`
	Tags             []struct {
		Tag string `json:"tag"`
	} `json:"tags"`
	// Deleted is 1 (or true) for an item in the trash.
	Deleted             any    `json:"deleted"`
	Note                string `json:"note"`
	ContentType         string `json:"contentType"`
	Filename            string `json:"filename"`
	AnnotationType      string `json:"annotationType"`
	AnnotationText      string `json:"annotationText"`
	AnnotationComment   string `json:"annotationComment"`
	AnnotationPageLabel string `json:"annotationPageLabel"`
}

// decodeItems reads a JSON array of item objects.
func decodeItems(body []byte) ([]Item, error) {
	var raw []itemObject
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, malformed("the items", err)
	}
	out := make([]Item, 0, len(raw))
	for _, r := range raw {
		it, err := r.decode()
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// itemObject is an item as the API sends it.
type itemObject struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
	Meta    struct {
		ParsedDate string `json:"parsedDate"`
	} `json:"meta"`
	Data json.RawMessage `json:"data"`
}

func (o itemObject) decode() (Item, error) {
	it, err := decodeItem(o.Key, o.Version, o.Data)
	it.ParsedDate = o.Meta.ParsedDate
	return it, err
}

func decodeItem(key string, version int64, data json.RawMessage) (Item, error) {
	var d itemData
	if err := json.Unmarshal(data, &d); err != nil {
		return Item{}, malformed("item "+key, err)
	}
	var all map[string]any
	if err := json.Unmarshal(data, &all); err != nil {
		return Item{}, malformed("item "+key, err)
	}
	parent, _ := d.ParentItem.(string)
	it := Item{Key: key, Version: version, ItemType: d.ItemType, Title: d.Title, Creators: d.Creators,
		Abstract: d.AbstractNote, Date: d.Date, DOI: strings.TrimSpace(d.DOI), URL: d.URL, Extra: d.Extra,
		Publication: d.PublicationTitle, Volume: d.Volume, Issue: d.Issue, Pages: d.Pages, Publisher: d.Publisher,
		ISSN: d.ISSN, ParentItem: parent, Collections: d.Collections, Trashed: truthy(d.Deleted),
		Note: d.Note, ContentType: d.ContentType, Filename: d.Filename, AnnotationType: d.AnnotationType,
		AnnotationText: d.AnnotationText, AnnotationComment: d.AnnotationComment,
		AnnotationPageLabel: d.AnnotationPageLabel, Data: all}
	if it.Publication == "" {
		it.Publication = cmp.Or(d.ProceedingsTitle, d.BookTitle)
	}
	if it.DOI == "" {
		it.DOI = doiInExtra(d.Extra)
	}
	for _, t := range d.Tags {
		it.Tags = append(it.Tags, t.Tag)
	}
	return it, nil
}

// truthy reads the trash flag, which Zotero writes as 1 or true.
func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x == "1" || x == "true"
	}
	return false
}

// doiInExtra finds a "DOI: 10.x/y" line in Extra, where Zotero keeps the DOI of
// item types without a DOI field (book sections, preprints before Zotero 7).
func doiInExtra(extra string) string {
	for line := range strings.SplitSeq(extra, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "doi") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
