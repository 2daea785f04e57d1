package papers

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// Outline answers GET /api/papers/{id}/passages: the paper's passages in reading
// order with their sections and pages, the reader's table of contents. 404 for a
// paper the caller may not see.
func (a *API) Outline(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	items, err := a.store.Outline(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	switch {
	case errors.Is(err, ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("No such paper."))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		if items == nil {
			items = []OutlineEntry{}
		}
		httpx.JSON(w, http.StatusOK, map[string]any{"items": items})
	}
}

// Passage answers GET /api/papers/{id}/passages/{chunk_id}: one whole passage of a
// paper the caller may see, the text a citation's start and end point into. 404
// for a passage of another paper, or of a paper the caller may not see.
func (a *API) Passage(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	chunkID, err := uuid.Parse(chi.URLParam(r, "chunk_id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("No such passage."))
		return
	}
	p, err := a.store.VisiblePassageText(r.Context(), auth.CallerFrom(r.Context()).UserID, id, chunkID)
	switch {
	case errors.Is(err, ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("No such passage."))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		httpx.JSON(w, http.StatusOK, p)
	}
}
