package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// feedView is one of the ten view surfaces of the feed (docs/feed.md).
type feedView struct{ Name, Label string }

var feedViews = []feedView{
	{"all_non_trash", "Everything"}, {"inbox", "Inbox"}, {"library", "Library"}, {"reading_list", "Reading list"},
	{"reading", "Reading"}, {"done", "Done"}, {"starred", "Starred"}, {"active", "Active"}, {"kept", "Kept"},
	{"trash", "Trash"},
}

// feedSort is one order of the library list (the API's sort parameter).
type feedSort struct{ Name, Label string }

var feedSorts = []feedSort{{"added", "Date added"}, {"year", "Year"}, {"title", "Title"}}

type libraryData struct {
	Scope  string
	View   string
	Sort   string
	Query  string
	Views  []feedView
	Sorts  []feedSort
	Items  []paper
	Cursor string
	Next   string
	States []string
}

// URL is the library's address for scope and view, keeping the sort and filter.
func (d *libraryData) URL(scope, view string) string {
	return "/library" + q("scope", scope, "view", view, "sort", d.Sort, "q", d.Query)
}

// NextURL is the address of the next page.
func (d *libraryData) NextURL() string {
	return "/library" + q("scope", d.Scope, "view", d.View, "sort", d.Sort, "q", d.Query, "cursor", d.Next)
}

// libraryPage is the library and the feed: the ten view surfaces, in the caller's
// library or across the corpus they may see, sorted by date added, year or title
// and filtered by text in the title or authors.
func (h *handler) libraryPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	qv := r.URL.Query()
	d := &libraryData{Scope: qv.Get("scope"), View: qv.Get("view"), Sort: qv.Get("sort"), Query: strings.TrimSpace(qv.Get("q")),
		Views: feedViews, Sorts: feedSorts, Cursor: qv.Get("cursor"),
		States: []string{"inbox", "to_read", "reading", "done", "trash"}}
	if d.Scope != "corpus" {
		d.Scope = "library"
	}
	known := false
	for _, fv := range feedViews {
		known = known || fv.Name == d.View
	}
	if !known {
		d.View = "all_non_trash"
	}
	known = false
	for _, fs := range feedSorts {
		known = known || fs.Name == d.Sort
	}
	if !known {
		d.Sort = "added"
	}
	v.Title, v.Nav, v.Data = "Library", "library", d
	var page paperPage
	err := s.c.get("/api/papers"+q("scope", d.Scope, "view", d.View, "sort", d.Sort, "q", d.Query, "cursor", d.Cursor, "limit", "25"), &page)
	if err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	d.Items, d.Next = page.Items, page.NextCursor
	h.show(w, r, "library", v)
}

// libraryAdd adds a paper by DOI or arXiv id.
func (h *handler) libraryAdd(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := strings.TrimSpace(r.PostFormValue("identifier"))
	body := map[string]string{}
	switch {
	case id == "":
		h.fail(w, r, s, v, &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
			Detail: "Enter a DOI or an arXiv id.", Fields: []fieldError{{Field: "identifier", Message: "is required"}}}, h.libraryPage, nil)
		return
	case strings.HasPrefix(strings.ToLower(id), "10.") || strings.Contains(strings.ToLower(id), "doi.org/"):
		body["doi"] = id
	default:
		body["arxiv_id"] = strings.TrimPrefix(strings.TrimPrefix(id, "arXiv:"), "arxiv:")
	}
	var p paper
	if err := s.c.do(http.MethodPost, "/api/library", body, &p); err != nil {
		h.fail(w, r, s, v, err, h.libraryPage, map[string]string{"doi": "identifier", "arxiv_id": "identifier"})
		return
	}
	done(w, r, "/papers/"+p.ID, "The paper is in your library.")
}

// upload forwards the browser's multipart upload (field "file") to the API as it
// came, without holding the PDF in memory.
func (h *handler) upload(r *http.Request, s *session) (*uploadResult, error) {
	ct := r.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "multipart/form-data") {
		return nil, &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
			Detail: "Choose a PDF file to upload.", Fields: []fieldError{{Field: "file", Message: "is required"}}}
	}
	var res uploadResult
	if err := s.c.raw(http.MethodPost, "/api/papers/upload", r.Body, ct, &res); err != nil {
		return nil, err
	}
	if res.PaperID == "" {
		return nil, errors.New("web: upload answer without a paper id")
	}
	return &res, nil
}

// paperUpload uploads a PDF and opens its paper page, where the progress bar follows
// the reading job.
func (h *handler) paperUpload(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	res, err := h.upload(r, s)
	if err != nil {
		h.fail(w, r, s, v, err, h.libraryPage, nil)
		return
	}
	msg := "The PDF is uploaded; Lectern is reading it."
	if res.Job.ID == 0 {
		msg = "You already have this PDF: here is its paper."
	}
	done(w, r, "/papers/"+res.PaperID+jobQuery(res.Job), msg)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func pathEscape(s string) string { return url.PathEscape(s) }
