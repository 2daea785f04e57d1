package web

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// newAPIProxy forwards the browser's /api/* requests to the API at target. The
// browser's Host is kept, so the API's cross-origin check compares like with like,
// and the browser's peer address is appended to the X-Forwarded-For the request came
// with, as any reverse proxy does: behind another proxy, the API (trusting both)
// still finds the real browser, and a browser's forged entries stay left of an
// address the API does not trust. Event streams are flushed as they come.
func newAPIProxy(target *url.URL, rt http.RoundTripper, log *slog.Logger) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			setForwarded(pr.Out, pr.In)
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the browser went away
			}
			log.WarnContext(r.Context(), "dashboard: API unreachable", "path", r.URL.Path, "error", err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_ = json.NewEncoder(w).Encode(map[string]string{
				"code":   "api_unreachable",
				"detail": "The dashboard could not reach the Lectern API. Check that it is running, then try again.",
			})
		},
	}
}
