package digest

import (
	"net/http"
	"strconv"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// API serves GET /api/digest/weekly.
type API struct{ svc *Service }

// NewAPI returns the Weekly Summary's API.
func NewAPI(svc *Service) *API { return &API{svc: svc} }

// Weekly answers GET /api/digest/weekly?days= (1-30, default 7): the caller's
// Weekly Summary.
func (a *API) Weekly(w http.ResponseWriter, r *http.Request) {
	days := DefaultDays
	if s := r.URL.Query().Get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxDays {
			httpx.Err(w, r, httpx.Invalid("days must be a number from 1 to 30.", httpx.FieldError{Field: "days", Message: "must be from 1 to 30"}))
			return
		}
		days = n
	}
	out, err := a.svc.Weekly(r.Context(), auth.CallerFrom(r.Context()).UserID, days)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}
