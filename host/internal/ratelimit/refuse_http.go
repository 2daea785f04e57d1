package ratelimit

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// Refuse writes the 429 error body with a Retry-After header in whole seconds.
func (l *Limiter) Refuse(w http.ResponseWriter, r *http.Request, retryAfter time.Duration) {
	secs := int(math.Ceil(retryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	httpx.Err(w, r, &httpx.Error{Status: http.StatusTooManyRequests, Code: "rate_limited",
		Detail: "Too many " + l.name + " requests. Try again in " + strconv.Itoa(secs) + " seconds."})
}
