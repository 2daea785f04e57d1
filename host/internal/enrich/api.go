package enrich

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// API serves POST /api/papers/{id}/enrich.
type API struct {
	svc   *Service
	queue Enqueuer
}

// NewAPI returns the enrichment API; queue nil answers 503.
func NewAPI(svc *Service, queue Enqueuer) *API { return &API{svc: svc, queue: queue} }

// Enrich answers POST /api/papers/{id}/enrich ("Update from sources"): 202 with
// the paper.enrich job, which checks the paper against the sources for the
// caller. A paper the caller may not see, or a private paper that is not theirs
// alone, is 404. A job already waiting for the same paper and caller is answered
// instead of a second one.
func (a *API) Enrich(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("Paper not found."))
		return
	}
	user := auth.CallerFrom(r.Context()).UserID
	if _, err := papers.EnrichTargetTx(r.Context(), a.svc.Pool, user, id, false); errors.Is(err, papers.ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("Paper not found."))
		return
	} else if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if a.queue == nil {
		httpx.Err(w, r, httpx.Unavailable("The job queue is not running on this host.", nil))
		return
	}
	env, err := a.queue.Enqueue(r.Context(), user, Args{PaperID: id, UserID: user})
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusAccepted, map[string]any{"paper_id": id, "job": env})
}
