package web

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
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
	Scope string
	View  string
	Sort  string
	Query string
	Views []feedView
	Sorts []feedSort
	Items []paper
	// Formats are the export's formats.
	Formats []feedSort
	Cursor  string
	Next    string
	States  []string
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
		Views: feedViews, Sorts: feedSorts, Formats: exportFormats, Cursor: qv.Get("cursor"),
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

// paperUpload uploads the PDFs of one form post. One file opens its paper page,
// where the progress bar follows the reading job; several are forwarded to the API
// one by one, and a page lists each file's outcome.
func (h *handler) paperUpload(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	outs, err := h.uploadEach(r, s)
	if err == nil && len(outs) == 0 {
		err = &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
			Detail: "Choose a PDF file to upload.", Fields: []fieldError{{Field: "file", Message: "is required"}}}
	}
	if err != nil || len(outs) == 1 && outs[0].err != nil {
		if err == nil {
			err = outs[0].err
		}
		h.fail(w, r, s, v, err, h.libraryPage, nil)
		return
	}
	if len(outs) == 1 {
		res := outs[0].res
		msg := "The PDF is uploaded; Lectern is reading it."
		if res.Job.ID == 0 {
			msg = "You already have this PDF: here is its paper."
		}
		done(w, r, "/papers/"+res.PaperID+jobQuery(res.Job), msg)
		return
	}
	d := &uploadsData{}
	for _, o := range outs {
		d.Files = append(d.Files, o.row())
	}
	v.Title, v.Nav, v.Data = "Uploads", "library", d
	h.show(w, r, "uploads", v)
}

// uploadOutcome is what became of one file of a form post.
type uploadOutcome struct {
	name string
	res  *uploadResult
	err  error
}

// uploadRow is one file's line on the uploads page.
type uploadRow struct {
	Name    string
	Outcome string // "reading", "existing" or "refused"
	Link    string
	Err     *uiError
}

type uploadsData struct{ Files []uploadRow }

func (o uploadOutcome) row() uploadRow {
	switch {
	case o.err != nil:
		return uploadRow{Name: o.name, Outcome: "refused", Err: humanError(o.err)}
	case o.res.Job.ID == 0:
		return uploadRow{Name: o.name, Outcome: "existing", Link: "/papers/" + o.res.PaperID}
	default:
		return uploadRow{Name: o.name, Outcome: "reading", Link: "/papers/" + o.res.PaperID + jobQuery(o.res.Job)}
	}
}

// uploadEach forwards every file of the multipart form post (field "file") to the
// API in a request of its own, streaming each without holding it in memory. A
// refused file (not a PDF, the upload rate limit) does not stop the others; an
// error reading the browser's body does, after the files already sent.
func (h *handler) uploadEach(r *http.Request, s *session) ([]uploadOutcome, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
			Detail: "Choose a PDF file to upload.", Fields: []fieldError{{Field: "file", Message: "is required"}}}
	}
	var outs []uploadOutcome
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return outs, nil
		}
		if err != nil {
			return outs, fmt.Errorf("web: read upload: %w", err)
		}
		if part.FormName() != "file" || part.FileName() == "" {
			continue
		}
		res, err := forwardPart(s, part)
		outs = append(outs, uploadOutcome{name: part.FileName(), res: res, err: err})
	}
}

// forwardPart sends one file of the browser's form to the API as a form of its own,
// with the part's headers (its name and content type) as they came.
func forwardPart(s *session, part *multipart.Part) (*uploadResult, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		fw, err := mw.CreatePart(part.Header)
		if err == nil {
			_, err = io.Copy(fw, part)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	var res uploadResult
	err := s.c.raw(http.MethodPost, "/api/papers/upload", pr, mw.FormDataContentType(), &res)
	// An answer before the whole file was read (a refusal) leaves the copy waiting.
	pr.CloseWithError(io.ErrClosedPipe)
	<-copied
	if err != nil {
		return nil, err
	}
	if res.PaperID == "" {
		return nil, errors.New("web: upload answer without a paper id")
	}
	return &res, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func pathEscape(s string) string { return url.PathEscape(s) }
