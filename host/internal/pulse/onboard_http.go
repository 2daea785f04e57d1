package pulse

import (
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// Onboarding answers GET /api/pulse/onboarding: the caller's cold-start state and
// up to 10 papers to rate.
func (a *API) Onboarding(w http.ResponseWriter, r *http.Request) {
	o, err := a.gen.Onboarding(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, o)
}

var onboardingRatings = []string{RatingUp, RatingDown, RatingSkip}

type onboardingRateBody struct {
	PaperID string `json:"paper_id"`
	Rating  string `json:"rating"`
}

// RateOnboarding answers POST /api/pulse/onboarding/rate {paper_id, rating: up,
// down or skip}: the thumb a deck rating gives. A paper the caller cannot see is
// 404 and nothing is written.
func (a *API) RateOnboarding(w http.ResponseWriter, r *http.Request) {
	var body onboardingRateBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	var fields []httpx.FieldError
	id, err := uuid.Parse(body.PaperID)
	if err != nil {
		fields = append(fields, httpx.FieldError{Field: "paper_id", Message: "must be a paper id"})
	}
	if !slices.Contains(onboardingRatings, body.Rating) {
		fields = append(fields, httpx.FieldError{Field: "rating", Message: "must be up, down or skip"})
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The rating is not valid.", fields...))
		return
	}
	res, err := a.gen.RateOnboarding(r.Context(), auth.CallerFrom(r.Context()).UserID, id, body.Rating)
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("No such paper."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, res)
}

// DiscoverOnboarding answers POST /api/pulse/onboarding/discover: fetch recent
// papers on what the caller follows through the paper sources, now. Sources that
// fail are said so in the answer (200); following nothing is 409.
func (a *API) DiscoverOnboarding(w http.ResponseWriter, r *http.Request) {
	d, err := a.gen.DiscoverForOnboarding(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if errors.Is(err, ErrNothingToFollow) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "nothing_to_follow",
			Detail: "Follow a topic or an author first: discovery looks for recent papers on them."})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, d)
}
