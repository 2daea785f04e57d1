package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/cors"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// HeaderRequestID carries the request id in both directions.
const HeaderRequestID = "X-Request-Id"

// HeaderAPIKey carries the ops key.
const HeaderAPIKey = "X-API-Key"

var safeRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// requestID keeps a well-formed incoming X-Request-Id (so a proxy's id follows the
// request through the logs) and makes a new one otherwise.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderRequestID)
		if !safeRequestID.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set(HeaderRequestID, id)
		next.ServeHTTP(w, r.WithContext(httpx.WithRequestID(r.Context(), id)))
	})
}

func withDebug(on bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(httpx.WithDebug(r.Context(), on)))
		})
	}
}

// observe writes one JSON log line per request and records its metrics, around one
// wrapped writer. It logs the path without the query string, which can carry
// one-time tokens.
func observe(log *slog.Logger, m *metrics) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			elapsed := time.Since(start)
			status := ww.Status()
			switch {
			case httpx.ClientGone(r) && (status == 0 || status >= 500):
				// The client left mid-request: whatever the handler then wrote
				// (or failed to write) is not a server error.
				status = httpx.StatusClientClosedRequest
			case status == 0:
				status = http.StatusOK
			}
			route := routePattern(r)
			m.observe(route, r.Method, status, elapsed)
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			log.LogAttrs(r.Context(), level, "http request",
				slog.String("request_id", httpx.RequestID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("remote", r.RemoteAddr),
			)
		})
	}
}

// routePattern is the matched route ("/api/jobs/{id}"), or "unmatched", so metric
// labels and logs stay bounded whatever paths clients send.
func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}

// recoverPanics turns a handler panic into the 500 error body and a logged stack.
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				rec := recover()
				if rec == nil {
					return
				}
				if rec == http.ErrAbortHandler {
					panic(rec) // the server's own signal to drop the connection
				}
				log.ErrorContext(r.Context(), "panic in handler",
					"request_id", httpx.RequestID(r.Context()), "panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
				httpx.Err(w, r, httpx.Internal(fmt.Errorf("panic: %v", rec)))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// securityHeaders sets the headers every response carries. API answers are private
// to their caller and never cached; HTTPS deployments get HSTS.
func securityHeaders(cfg *config.Config) func(http.Handler) http.Handler {
	hsts := strings.HasPrefix(cfg.PublicBaseURL, "https://")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if strings.HasPrefix(r.URL.Path, "/api/") {
				h.Set("Cache-Control", "no-store")
				h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
			}
			if hsts {
				h.Set("Strict-Transport-Security", "max-age=31536000")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// crossOriginProtection refuses state-changing requests that a browser sends from
// another site (Sec-Fetch-Site, else Origin against Host), so a session cookie cannot
// be ridden from a foreign page; SameSite=Lax covers older browsers. Origins in
// CORS_ORIGINS and PUBLIC_BASE_URL are trusted. Clients that are not browsers send
// neither header and pass; they authenticate with the ops key.
func crossOriginProtection(cfg *config.Config) func(http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	for _, o := range append([]string{publicOrigin(cfg.PublicBaseURL)}, cfg.CORSOrigins...) {
		_ = p.AddTrustedOrigin(o)
	}
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.Err(w, r, httpx.Forbidden("cross_origin_refused",
			"This request came from another site and was refused (cross-site request forgery protection)."))
	}))
	return p.Handler
}

func publicOrigin(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// corsMiddleware allows exactly the CORS_ORIGINS origins, with credentials. Only
// DEV_CORS_OPEN opens it to every origin, and then without credentials, as browsers
// require for "*".
func corsMiddleware(cfg *config.Config) func(http.Handler) http.Handler {
	opts := cors.Options{
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		AllowedHeaders: []string{"Content-Type", HeaderAPIKey, "X-Owner-User-Id", HeaderRequestID, "Last-Event-ID"},
		ExposedHeaders: []string{HeaderRequestID, "Retry-After"},
		MaxAge:         600,
	}
	if cfg.DevCORSOpen {
		opts.AllowedOrigins = []string{"*"}
	} else {
		allowed := make(map[string]bool, len(cfg.CORSOrigins))
		for _, o := range cfg.CORSOrigins {
			allowed[o] = true
		}
		// A func, not AllowedOrigins: the library reads an empty list as "*".
		opts.AllowOriginFunc = func(_ *http.Request, origin string) bool { return allowed[origin] }
		opts.AllowCredentials = true
	}
	return cors.Handler(opts)
}
