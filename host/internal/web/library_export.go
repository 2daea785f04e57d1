package web

import (
	"io"
	"net/http"
	"net/url"
)

// exportFormats are the formats the library's export offers, as the API names them.
var exportFormats = []feedSort{{"bibtex", "BibTeX"}, {"ris", "RIS"}, {"csljson", "CSL-JSON"}}

// libraryExport answers the library's export form (a GET, so it works without
// JavaScript and a browser saves the answer as a file): the rows ticked (id), all
// rows of the page (page=all, with their ids in on_page), or with which=matching
// every paper the page's scope, view, sort and text select. The API's file is
// passed through as it comes, with its name; the API leaves out any id the caller
// may not see.
func (h *handler) libraryExport(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	qv := r.URL.Query()
	api := url.Values{"format": {qv.Get("format")}}
	if qv.Get("which") == "matching" {
		for _, k := range []string{"scope", "view", "sort", "q"} {
			if x := qv.Get(k); x != "" {
				api.Set(k, x)
			}
		}
	} else {
		ids := qv["id"]
		if qv.Get("page") == "all" {
			ids = qv["on_page"]
		}
		if len(ids) == 0 {
			h.exportFailed(w, r, s, v, &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
				Detail: "Tick the papers to export, or export all that match.",
				Fields: []fieldError{{Field: "id", Message: "choose at least one paper"}}})
			return
		}
		api["id"] = ids
	}
	resp, err := s.c.download("/api/library/export?" + api.Encode())
	if err != nil {
		h.exportFailed(w, r, s, v, err)
		return
	}
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type", "Content-Disposition"} {
		if x := resp.Header.Get(k); x != "" {
			w.Header().Set(k, x)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, resp.Body); err != nil {
		h.log.WarnContext(r.Context(), "dashboard: export cut short", "error", err)
	}
}

// exportFailed shows the library again, as the export form's filter selects it,
// with the error; the rows' forms come back to the library, not to the export.
func (h *handler) exportFailed(w http.ResponseWriter, r *http.Request, s *session, v *view, err error) {
	qv := r.URL.Query()
	v.Path = "/library" + q("scope", qv.Get("scope"), "view", qv.Get("view"), "sort", qv.Get("sort"), "q", qv.Get("q"))
	h.fail(w, r, s, v, err, h.libraryPage, nil)
}
