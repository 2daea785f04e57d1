package retrieve

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// API serves GET /api/search/chunks.
type API struct{ r *Retriever }

// NewAPI returns the passage search API.
func NewAPI(r *Retriever) *API { return &API{r: r} }

// SearchChunks answers GET /api/search/chunks?q=&paper_ids=a,b&limit=1..100 (default
// 20): passages with their paper, section, pages and a highlighted snippet.
func (a *API) SearchChunks(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	q := strings.TrimSpace(qs.Get("q"))
	var fields []httpx.FieldError
	if q == "" || len(q) > 1000 {
		fields = append(fields, httpx.FieldError{Field: "q", Message: "must be 1 to 1000 characters"})
	}
	limit := 20
	if s := qs.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			fields = append(fields, httpx.FieldError{Field: "limit", Message: "must be from 1 to 100"})
		}
		limit = n
	}
	var ids []uuid.UUID
	for _, s := range strings.Split(qs.Get("paper_ids"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := uuid.Parse(s)
		if err != nil {
			fields = append(fields, httpx.FieldError{Field: "paper_ids", Message: "must be paper ids separated by commas"})
			break
		}
		ids = append(ids, id)
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The search is not valid.", fields...))
		return
	}
	out, err := a.r.Search(r.Context(), auth.CallerFrom(r.Context()).UserID, q, ids, limit)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": out})
}
