package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-research/lectern/sdk/plugintest"
)

// upstream replays the recorded Graph API answers. A request matching a recording
// (same path and paging) gets the recorded body verbatim; other pages are cut from
// the recorded lists.
type upstream struct {
	t   *testing.T
	dir string
	plugintest.Recorder

	search     []json.RawMessage          // both recorded /paper/search pages, in order
	byID       map[string]json.RawMessage // every recorded paper object, by paperId
	citations  []json.RawMessage          // details_Paper.json citations
	references []json.RawMessage          // paper_references_offset0.json edges
	turing     []json.RawMessage          // details_Author.json papers
}

func newUpstream(t *testing.T) (*upstream, *httptest.Server) {
	t.Helper()
	u := &upstream{t: t, dir: plugintest.FixturesDir(t, "semanticscholar"), byID: map[string]json.RawMessage{}}
	type page struct {
		Data []json.RawMessage `json:"data"`
	}
	for _, f := range []string{"paper_search_turing.json", "paper_search_turing_offset100.json"} {
		var p page
		u.decode(f, &p)
		u.search = append(u.search, p.Data...)
	}
	var details struct {
		Citations []json.RawMessage `json:"citations"`
	}
	u.decode("details_Paper.json", &details)
	u.citations = details.Citations
	var refs page
	u.decode("paper_references_offset0.json", &refs)
	u.references = refs.Data
	var author struct {
		Papers []json.RawMessage `json:"papers"`
	}
	u.decode("details_Author.json", &author)
	u.turing = author.Papers
	for _, list := range [][]json.RawMessage{u.search, u.citations, u.turing} {
		for _, raw := range list {
			var p struct {
				PaperID string `json:"paperId"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("decode recorded paper: %v", err)
			}
			u.byID[p.PaperID] = raw
		}
	}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv
}

func (u *upstream) read(name string) []byte {
	return plugintest.ReadFixture(u.t, u.dir, name)
}

func (u *upstream) decode(name string, v any) {
	if err := json.Unmarshal(u.read(name), v); err != nil {
		u.t.Fatalf("decode fixture %s: %v", name, err)
	}
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.Record(r)
	q := r.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil {
		limit = 100
	}
	path := r.URL.Path
	switch {
	case path == "/paper/search":
		switch {
		case q.Get("query") == "n0 r3sult s3arch t3rm":
			u.file(w, http.StatusOK, "paper_search_empty.json")
		case offset == 0 && limit == 100:
			u.file(w, http.StatusOK, "paper_search_turing.json")
		case offset == 100 && limit == 100:
			u.file(w, http.StatusOK, "paper_search_turing_offset100.json")
		default:
			u.slice(w, u.search, offset, limit, "", true)
		}
	case path == "/paper/search/match":
		switch q.Get("query") {
		case "Attention is All you Need":
			u.file(w, http.StatusOK, "paper_search_match_attention_is_all_you_need.json")
		case "mining association rules between":
			u.file(w, http.StatusOK, "paper_search_match_title.json")
		default:
			u.file(w, http.StatusNotFound, "paper_search_match_title_404_no_match.json")
		}
	case path == "/paper/batch" && r.Method == http.MethodPost:
		u.batch(w, r)
	case strings.HasSuffix(path, "/citations"):
		u.slice(w, u.citations, offset, limit, "citingPaper", false)
	case strings.HasSuffix(path, "/references"):
		if offset == 0 && limit == 50 {
			u.file(w, http.StatusOK, "paper_references_offset0.json")
			return
		}
		u.slice(w, u.references, offset, limit, "", false)
	case strings.HasPrefix(path, "/paper/"):
		ref := strings.TrimPrefix(path, "/paper/")
		switch ref {
		case "10.1093/mind/lix.236.433":
			u.file(w, http.StatusOK, "paper_by_doi_fields_title.json")
		case "DOI:10.1093/mind/lix.236.433", "2d5673caa9e6af3a7b82a43f19ee920992db07ad":
			u.file(w, http.StatusOK, "details_Paper.json")
		case "DOI:10.1038/s42256-024-00832-8", "ARXIV:2304.05376", "PMID:38799228":
			u.file(w, http.StatusOK, "paper_by_doi_many_fields_s42256-024-00832-8.json")
		default:
			if raw, ok := u.byID[ref]; ok {
				writeJSON(w, http.StatusOK, raw)
				return
			}
			u.file(w, http.StatusNotFound, "paper_not_found_404.json")
		}
	case path == "/author/search":
		if strings.EqualFold(q.Get("query"), "turing") || strings.EqualFold(q.Get("query"), "A. Turing") {
			u.file(w, http.StatusOK, "author_search_turing.json")
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"total": 0, "offset": 0, "data": []}`))
	case path == "/author/2262347":
		u.file(w, http.StatusOK, "author_by_id_fields_name.json")
	case path == "/author/2262347/papers":
		u.slice(w, u.turing, offset, limit, "", false)
	case path == "/author/1723755/papers" && offset == 0 && limit == 100:
		u.file(w, http.StatusOK, "author_papers_offset0.json")
	default:
		u.file(w, http.StatusNotFound, "author_not_found_404.json")
	}
}

// batch answers POST /paper/batch: the recorded answer for the recorded ids, else
// the recorded objects known by id (null for the rest).
func (u *upstream) batch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IDs []string `json:"ids"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error": "Unacceptable request body"}`))
		return
	}
	if strings.Join(body.IDs, ",") == "c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce,cb1ebd913c3724c599f6b276b14b5c6253da68f3,0f40b1f08821e22e859c6050916cec3667778613" {
		u.file(w, http.StatusOK, "paper_batch_post_fields_authors.json")
		return
	}
	out := make([]json.RawMessage, len(body.IDs))
	for i, id := range body.IDs {
		switch {
		case id == "DOI:10.1038/s42256-024-00832-8":
			out[i] = u.read("paper_by_doi_many_fields_s42256-024-00832-8.json")
		case u.byID[id] != nil:
			out[i] = u.byID[id]
		default:
			out[i] = json.RawMessage("null")
		}
	}
	data, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, data)
}

// slice serves items[offset:offset+limit] as a page, each item wrapped under key
// when key is set.
func (u *upstream) slice(w http.ResponseWriter, items []json.RawMessage, offset, limit int, key string, withTotal bool) {
	end := min(offset+limit, len(items))
	page := map[string]any{"offset": offset}
	if withTotal {
		page["total"] = len(items)
	}
	data := []any{}
	if offset < len(items) {
		for _, it := range items[offset:end] {
			if key != "" {
				data = append(data, map[string]json.RawMessage{key: it})
			} else {
				data = append(data, it)
			}
		}
	}
	page["data"] = data
	if end < len(items) {
		page["next"] = end
	}
	body, _ := json.Marshal(page)
	writeJSON(w, http.StatusOK, body)
}

func (u *upstream) file(w http.ResponseWriter, status int, name string) {
	writeJSON(w, status, u.read(name))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
