package web

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// newAPIProxy forwards the browser's /api/* requests to the API at target. The
// browser's Host is kept, so the API's cross-origin check compares like with like,
// and the browser's peer address is appended to the X-Forwarded-For the request came
// with, as any reverse proxy does: behind another proxy, the API (trusting both)
// still finds the real browser, and a browser's forged entries stay left of an
// address the API does not trust. Event streams are flushed as they come.
func newAPIProxy(target *url.URL, rt http.RoundTripper, log *slog.Logger) http.Handler {
	return liftDeadlines(&httputil.ReverseProxy{
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
	})
}

// longCall bounds a forwarded upload and the gaps between a stream's writes, in
// place of the server's ReadTimeout and WriteTimeout, which they would outlast.
const longCall = 10 * time.Minute

// liftDeadlines gives a forwarded upload (a multipart body, or one over 1 MB) time
// to arrive and be answered, and an event stream a write deadline renewed on
// every write; other requests keep the server's bounds.
func liftDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 1<<20 || strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(longCall))
			_ = rc.SetWriteDeadline(time.Now().Add(longCall))
		}
		next.ServeHTTP(&renewingWriter{ResponseWriter: w, rc: http.NewResponseController(w)}, r)
	})
}

// renewingWriter renews the write deadline before each write, so a stream lives as
// long as it keeps sending.
type renewingWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (w *renewingWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(longCall))
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *renewingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
