package web

import (
	"net/http"
	"strings"
)

type searchData struct {
	Query    string
	Mode     string
	Result   *searchResponse
	Passages []passage
}

// searchPage searches the paper sources (with each source's status), or the
// passages of the caller's own papers.
func (h *handler) searchPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	qv := r.URL.Query()
	d := &searchData{Query: strings.TrimSpace(qv.Get("q")), Mode: qv.Get("mode")}
	if d.Mode != "passages" {
		d.Mode = "sources"
	}
	v.Title, v.Nav, v.Data = "Search", "search", d
	if d.Query != "" {
		var err error
		if d.Mode == "passages" {
			var res struct {
				Items []passage `json:"items"`
			}
			err = s.c.get("/api/search/chunks"+q("q", d.Query, "limit", "20"), &res)
			d.Passages = res.Items
		} else {
			var res searchResponse
			if err = s.c.get("/api/search"+q("q", d.Query, "limit", "20"), &res); err == nil {
				d.Result = &res
			}
		}
		if err != nil {
			if isStatus(err, http.StatusUnauthorized) {
				h.toSignIn(w, r)
				return
			}
			if v.Err == nil {
				v.Err = humanError(err)
			}
		}
	}
	h.show(w, r, "search", v)
}

// searchAdd adds a search result to the library.
func (h *handler) searchAdd(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	body := map[string]string{}
	for _, f := range []string{"paper_id", "doi", "arxiv_id"} {
		if val := r.PostFormValue(f); val != "" {
			body[f] = val
			break
		}
	}
	to := back(r, "/search")
	var p paper
	if err := s.c.do(http.MethodPost, "/api/library", body, &p); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "Added to your library: "+p.Title)
}
