package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
)

type paperData struct {
	Paper       paper
	Jobs        []job
	Summary     *summary
	SummaryNote string
	Extractions *extractions
	ExtractNote string
	Cards       []card
	Drafts      []card
	Decks       []deck
	States      []string
	Answer      *answer
}

// paperPage shows one paper: metadata, the reading of its PDF, summary, extractions,
// a question box and its cards.
func (h *handler) paperPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	d := &paperData{States: []string{"inbox", "to_read", "reading", "done", "trash"}, Answer: v.answer}
	if err := s.c.get("/api/papers/"+pathEscape(id), &d.Paper); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if isStatus(err, http.StatusNotFound) && h.unreadUpload(w, r, s, id) {
			return
		}
		if to, ok := mergedInto(err); ok {
			h.toMerged(w, r, id, to)
			return
		}
		h.view.render(w, r, statusOf(err), "error", &view{Title: "Paper not found", Me: s.me, Nav: "library", Err: humanError(err)})
		return
	}
	v.Title, v.Nav, v.Data = d.Paper.Title, "library", d

	// Jobs working on this paper: the one the browser was sent here with, and any
	// still running.
	seen := map[int64]bool{}
	if jid := r.URL.Query().Get("job"); jid != "" {
		if n, err := strconv.ParseInt(jid, 10, 64); err == nil {
			var j job
			if s.c.get("/api/jobs/"+itoa(n), &j) == nil && j.PaperID() == id {
				d.Jobs, seen[j.ID] = append(d.Jobs, j), true
			}
		}
	}
	var active jobPage
	if s.c.get("/api/jobs?state=active&limit=50", &active) == nil {
		for _, j := range active.Jobs {
			// A check against the sources may wait an hour for them to come back:
			// only while it runs is it work to watch (and reload the page for).
			if j.Kind == "paper.enrich" && j.State != "running" {
				continue
			}
			if !seen[j.ID] && j.PaperID() == id {
				d.Jobs = append(d.Jobs, j)
			}
		}
	}
	for _, j := range d.Jobs {
		if j.Active() {
			v.Refresh = 3
		}
	}

	var sum summary
	switch err := s.c.get("/api/papers/"+pathEscape(id)+"/summary", &sum); {
	case err == nil:
		d.Summary = &sum
	case isStatus(err, http.StatusNotFound):
		d.SummaryNote = "No summary yet."
	default:
		d.SummaryNote = "Summaries are not available right now."
	}
	var ex extractions
	switch err := s.c.get("/api/papers/"+pathEscape(id)+"/extractions", &ex); {
	case err == nil:
		d.Extractions = &ex
	case isStatus(err, http.StatusNotFound):
		d.ExtractNote = "Nothing extracted yet."
	default:
		d.ExtractNote = "Extraction is not available right now."
	}
	var cards struct {
		Items []card `json:"items"`
	}
	if s.c.get("/api/cards?limit=500&paper_id="+url.QueryEscape(id), &cards) == nil {
		for _, c := range cards.Items {
			if c.Status == "draft" {
				d.Drafts = append(d.Drafts, c)
			} else {
				d.Cards = append(d.Cards, c)
			}
		}
	}
	var decks struct {
		Items []deck `json:"items"`
	}
	if s.c.get("/api/decks", &decks) == nil {
		d.Decks = decks.Items
	}
	h.show(w, r, "paper", v)
}

// paperState changes the caller's reading state, star or rating of a paper.
func (h *handler) paperState(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	body := map[string]any{}
	if st := r.PostFormValue("state"); st != "" {
		body["state"] = st
	}
	if st := r.PostFormValue("starred"); st != "" {
		body["starred"] = st == "true"
	}
	if rt := r.PostFormValue("rating"); rt != "" {
		if n, err := strconv.Atoi(rt); err == nil && n >= 1 && n <= 5 {
			body["rating"] = n
		} else if rt == "none" {
			body["rating"] = nil
		}
	}
	if _, ok := r.PostForm["notes"]; ok {
		body["notes"] = r.PostFormValue("notes")
	}
	to := back(r, "/papers/"+id)
	if err := s.c.do(http.MethodPatch, "/api/papers/"+pathEscape(id)+"/state", body, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "Saved.")
}

// paperIngest fetches the paper's PDF from a link and reads it.
func (h *handler) paperIngest(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	var a uploadResult
	if err := s.c.do(http.MethodPost, "/api/papers/"+pathEscape(id)+"/ingest", map[string]string{"url": strings.TrimSpace(r.PostFormValue("url"))}, &a); err != nil {
		h.fail(w, r, s, v, err, h.paperPage, nil)
		return
	}
	// The answer may name another paper: the user's private version of a shared one.
	if a.PaperID != "" {
		id = a.PaperID
	}
	msg := a.Message
	if msg == "" {
		msg = "Lectern is fetching and reading the PDF."
	}
	done(w, r, "/papers/"+id+jobQuery(a.Job), msg)
}

// paperSummarize and paperExtract start the paper's summary or extraction job.
func (h *handler) paperSummarize(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	h.paperJob(w, r, s, v, "summary", "Lectern is summarizing the paper.")
}

func (h *handler) paperExtract(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	h.paperJob(w, r, s, v, "extract", "Lectern is extracting claims and checking their quotes.")
}

func (h *handler) paperJob(w http.ResponseWriter, r *http.Request, s *session, v *view, what, msg string) {
	id := chi.URLParam(r, "id")
	body := map[string]any{}
	if what == "summary" && r.PostFormValue("force") == "true" {
		body["force"] = true
	}
	var a jobAnswer
	if err := s.c.do(http.MethodPost, "/api/papers/"+pathEscape(id)+"/"+what, body, &a); err != nil {
		h.actionFailed(w, r, err, "/papers/"+id)
		return
	}
	done(w, r, "/papers/"+id+jobQuery(a.envelope()), msg)
}

// paperEnrich asks for the paper to be checked against the sources ("Update from
// sources").
func (h *handler) paperEnrich(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	h.paperJob(w, r, s, v, "enrich", "Lectern is checking the paper against the sources.")
}

// jobQuery is the query that shows a job's progress on the paper page.
func jobQuery(j job) string {
	if j.ID == 0 {
		return ""
	}
	return q("job", itoa(j.ID))
}

// toMerged sends the browser from a merged-away paper's page (or reader) to the
// same page of the paper it became, with the same query.
func (h *handler) toMerged(w http.ResponseWriter, r *http.Request, from, to string) {
	u := *r.URL
	u.Path = strings.Replace(u.Path, "/papers/"+from, "/papers/"+url.PathEscape(to), 1)
	http.Redirect(w, r, u.RequestURI(), http.StatusMovedPermanently)
}
