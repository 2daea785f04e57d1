package search

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// API serves GET /api/search.
type API struct{ svc *Service }

// NewAPI returns the search API.
func NewAPI(svc *Service) *API { return &API{svc: svc} }

// Search answers GET /api/search?q=&sources=a,b&limit=: merged results with partial
// results and a report per source.
func (a *API) Search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := Params{Query: strings.TrimSpace(q.Get("q"))}
	var fields []httpx.FieldError
	if p.Query == "" || len(p.Query) > 500 {
		fields = append(fields, httpx.FieldError{Field: "q", Message: "must be 1 to 500 characters"})
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			fields = append(fields, httpx.FieldError{Field: "limit", Message: "must be from 1 to 100"})
		}
		p.Limit = n
	}
	for _, s := range strings.Split(q.Get("sources"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			p.Sources = append(p.Sources, s)
		}
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The search is not valid.", fields...))
		return
	}
	resp, err := a.svc.Search(r.Context(), auth.CallerFrom(r.Context()).UserID, p)
	switch {
	case errors.Is(err, ErrNoSources):
		httpx.Err(w, r, httpx.Unavailable("No paper source is running. An admin can enable sources in plugins.toml or the admin plugins page.", err))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		httpx.JSON(w, http.StatusOK, resp)
	}
}
