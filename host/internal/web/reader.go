package web

import (
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// The reader (GET /papers/{id}/read) shows a paper's PDF with pdf.js, opens it at
// a page and highlights the cited words there. pdf.js is vendored by make build
// into static/vendor/pdfjs (scripts/vendor-pdfjs); a binary built without it still
// serves the page, which then says so and offers the PDF as a download.

// ReaderURL is the address of the reader at page of paperID: with passage (a
// paper_chunks id) the passage is highlighted there, only its runes [start, end)
// when end > start; without one, q's words are. Every citation the dashboard
// shows links here; other packages may build the same query by hand:
// /papers/{paper_id}/read?page=N[&passage=<uuid>[&start=S&end=E]][&q=<words>].
func ReaderURL(paperID string, page int, passage string, start, end int, q string) string {
	var b strings.Builder
	b.WriteString("/papers/" + url.PathEscape(paperID) + "/read?page=" + strconv.Itoa(max(page, 1)))
	if passage != "" {
		b.WriteString("&passage=" + url.QueryEscape(passage))
		if end > start && start >= 0 {
			b.WriteString("&start=" + strconv.Itoa(start) + "&end=" + strconv.Itoa(end))
		}
	} else if q = strings.Join(strings.Fields(q), " "); q != "" {
		b.WriteString("&q=" + url.QueryEscape(q))
	}
	return b.String()
}

// citeURL is the reader at a citation of an answer: its page, its passage, and
// the cited words in it when they were found.
func citeURL(c citation) string {
	return ReaderURL(c.PaperID, c.Page, c.ChunkID, c.Start, c.End, "")
}

// quoteURL is the reader at page with quote's words highlighted: a summary's
// finding or an extracted claim, whose quote was found on that page.
func quoteURL(paperID string, page *int, quote string) string {
	if page == nil || *page < 1 {
		return ""
	}
	return ReaderURL(paperID, *page, "", 0, 0, quote)
}

// pdfjsDir is where make build puts pdf.js inside the embedded static files.
const pdfjsDir = "static/vendor/pdfjs"

// pdfjsVersion is the vendored pdf.js version, "" when the binary was built
// without it (a plain go build).
var pdfjsVersion = sync.OnceValue(func() string {
	for _, f := range []string{"pdf.min.mjs", "pdf.worker.min.mjs"} {
		if _, err := fs.Stat(staticFS, pdfjsDir+"/"+f); err != nil {
			return ""
		}
	}
	v, err := fs.ReadFile(staticFS, pdfjsDir+"/VERSION")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(v))
})

// Bounds of the reader's query.
const (
	maxReaderPage  = 100000
	maxReaderQuery = 2000 // runes of q
	maxCitedRunes  = 4000 // runes of the words the page looks for
)

// readerParams is the reader's query, checked.
type readerParams struct {
	// Page is 0 when the link names none: the passage's first page, else 1.
	Page       int
	Passage    string
	Start, End int
	// Span is set when the link gives start and end.
	Span bool
	Q    string
}

// readerQuery reads the reader's query, or says in a sentence what is wrong with it.
func readerQuery(v url.Values) (readerParams, string) {
	var p readerParams
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxReaderPage {
			return p, "The page in this reader link must be a whole number from 1."
		}
		p.Page = n
	}
	if s := v.Get("passage"); s != "" {
		if _, err := uuid.Parse(s); err != nil {
			return p, "The passage in this reader link is not a passage id."
		}
		p.Passage = s
	}
	ss, es := v.Get("start"), v.Get("end")
	if ss != "" || es != "" {
		start, err1 := strconv.Atoi(ss)
		end, err2 := strconv.Atoi(es)
		if err1 != nil || err2 != nil || start < 0 || end < start {
			return p, "The start and end in this reader link must be whole numbers with start at most end."
		}
		p.Start, p.End, p.Span = start, end, true
	}
	p.Q = strings.Join(strings.Fields(v.Get("q")), " ")
	if utf8.RuneCountInString(p.Q) > maxReaderQuery {
		return p, "The words to highlight in this reader link are too long (at most " + strconv.Itoa(maxReaderQuery) + " characters)."
	}
	return p, ""
}

// outlineEntry is one passage of GET /api/papers/{id}/passages.
type outlineEntry struct {
	ChunkID   string `json:"chunk_id"`
	Index     int    `json:"index"`
	Section   string `json:"section"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Preview   string `json:"preview"`
}

// passageText is GET /api/papers/{id}/passages/{chunk_id}.
type passageText struct {
	ChunkID   string `json:"chunk_id"`
	Section   string `json:"section"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Content   string `json:"content"`
}

// tocSection is a section of the reader's table of contents: its heading and its
// passages, each a link to its page with the passage highlighted.
type tocSection struct {
	Title    string
	Page     int
	Current  bool
	Passages []tocEntry
}

type tocEntry struct {
	URL     string
	Page    int
	Preview string
	Current bool
}

// readerData is what the reader page shows.
type readerData struct {
	Paper paper
	// Page is the page to open at; PageEnd the last page the cited words may
	// reach (a passage's last page).
	Page, PageEnd int
	// Cited are the words to highlight, "" for none; CitedNote says why a
	// citation's words are missing.
	Cited     string
	CitedNote string
	// Passage is the cited passage's id and section.
	Passage, Section string
	// HasPDF is false for a paper known only by its metadata.
	HasPDF bool
	// PDFNote says why the PDF could not be checked, when it could not.
	PDFNote string
	// Viewer is the vendored pdf.js version, "" when the binary lacks it.
	Viewer   string
	Sections []tocSection
	TOCNote  string
}

// PDFURL is where the browser reads the PDF.
func (d *readerData) PDFURL() string { return "/api/papers/" + url.PathEscape(d.Paper.ID) + "/pdf" }

// readerPage shows a paper's PDF at a page with the cited words highlighted, and
// its passages by section. A paper the caller may not see is not found, exactly
// like a missing one.
func (h *handler) readerPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	p, bad := readerQuery(r.URL.Query())
	if bad != "" {
		h.view.render(w, r, http.StatusBadRequest, "error", &view{Title: "This reader link is not valid", Me: s.me, Nav: "library",
			Err: &uiError{What: bad, Do: "Open the paper from your library and follow its citation again."}})
		return
	}
	d := &readerData{Viewer: pdfjsVersion()}
	if err := s.c.get("/api/papers/"+pathEscape(id), &d.Paper); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if to, ok := mergedInto(err); ok {
			h.toMerged(w, r, id, to)
			return
		}
		h.view.render(w, r, statusOf(err), "error", &view{Title: "Paper not found", Me: s.me, Nav: "library", Err: humanError(err)})
		return
	}
	h.readerCitation(s, id, p, d)
	h.readerPDF(s, id, d)
	h.readerOutline(s, id, d)
	v.Title, v.Nav, v.Data = d.Paper.Title, "library", d
	h.show(w, r, "reader", v)
}

// readerCitation sets the page to open at and the words to highlight.
func (h *handler) readerCitation(s *session, id string, p readerParams, d *readerData) {
	d.Page, d.Passage = p.Page, p.Passage
	switch {
	case p.Passage != "":
		var pt passageText
		if err := s.c.get("/api/papers/"+pathEscape(id)+"/passages/"+pathEscape(p.Passage), &pt); err != nil {
			d.CitedNote = "The cited passage is no longer part of this paper (its PDF was read again since), so nothing is highlighted."
			break
		}
		d.Section = pt.Section
		if d.Page == 0 {
			d.Page = pt.PageStart
		}
		d.PageEnd = max(pt.PageEnd, d.Page)
		runes := []rune(pt.Content)
		cited := runes
		if p.Span && p.End > p.Start && p.End <= len(runes) {
			cited = runes[p.Start:p.End]
		}
		d.Cited = strings.Join(strings.Fields(string(cited[:min(len(cited), maxCitedRunes)])), " ")
	case p.Q != "":
		d.Cited = p.Q
	}
	d.Page = max(d.Page, 1)
	d.PageEnd = max(d.PageEnd, d.Page)
}

// readerPDF asks the API whether the paper has a stored PDF (its first byte).
func (h *handler) readerPDF(s *session, id string, d *readerData) {
	err := s.c.doHeaders(http.MethodGet, "/api/papers/"+pathEscape(id)+"/pdf", nil, nil, http.Header{"Range": {"bytes=0-0"}})
	switch {
	case err == nil:
		d.HasPDF = true
	case isStatus(err, http.StatusNotFound):
	default:
		h.log.WarnContext(s.c.r.Context(), "dashboard: reader: check the PDF", "paper", id, "error", err)
		d.PDFNote = "Lectern could not open this paper's PDF just now. Reload the page in a moment."
	}
}

// readerOutline groups the paper's passages by section, marking the cited one.
func (h *handler) readerOutline(s *session, id string, d *readerData) {
	var out struct {
		Items []outlineEntry `json:"items"`
	}
	if err := s.c.get("/api/papers/"+pathEscape(id)+"/passages", &out); err != nil {
		d.TOCNote = "The list of passages could not be loaded; reload the page to try again."
		return
	}
	d.Sections = outlineSections(id, out.Items, d.Passage)
}

// outlineSections groups passages in reading order under their sections: a new
// section starts where the heading changes. Passages before the first heading
// are the front matter.
func outlineSections(paperID string, items []outlineEntry, current string) []tocSection {
	var out []tocSection
	for _, it := range items {
		title := it.Section
		if title == "" {
			title = "Front matter"
		}
		if len(out) == 0 || out[len(out)-1].Title != title {
			out = append(out, tocSection{Title: title, Page: it.PageStart})
		}
		sec := &out[len(out)-1]
		e := tocEntry{URL: ReaderURL(paperID, it.PageStart, it.ChunkID, 0, 0, ""), Page: it.PageStart, Preview: it.Preview,
			Current: it.ChunkID == current}
		sec.Current = sec.Current || e.Current
		sec.Passages = append(sec.Passages, e)
	}
	return out
}
