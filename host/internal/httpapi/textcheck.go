package httpapi

import (
	"net/http"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// refuseUnstorableText answers 400 for a path or query parameter holding a NUL or
// bytes that are not UTF-8, naming the parameter, before any handler passes it to
// PostgreSQL (which refuses such text with an error that would otherwise be a 500).
func refuseUnstorableText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := httpx.CheckRequest(r); err != nil {
			httpx.Err(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
