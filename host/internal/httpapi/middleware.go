package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/cors"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/httpapi/respond"
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
		next.ServeHTTP(w, r.WithContext(respond.WithRequestID(r.Context(), id)))
	})
}

func withDebug(on bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(respond.WithDebug(r.Context(), on)))
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
			if status == 0 {
				status = http.StatusOK
			}
			route := routePattern(r)
			m.observe(route, r.Method, status, elapsed)
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			log.LogAttrs(r.Context(), level, "http request",
				slog.String("request_id", respond.RequestID(r.Context())),
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
					"request_id", respond.RequestID(r.Context()), "panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
				respond.Err(w, r, respond.Internal(fmt.Errorf("panic: %v", rec)))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
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

// gate applies a route's Access before its handler.
func (h *handler) gate(a Access) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch a {
			case AccessPublic:
			case AccessOps:
				if err := h.checkOpsKey(r); err != nil {
					respond.Err(w, r, err)
					return
				}
			default:
				// A route without a declared access never runs.
				respond.Err(w, r, respond.Internal(fmt.Errorf("route %s has no declared access", routePattern(r))))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// checkOpsKey verifies X-API-Key against SERVICE_API_KEY in constant time. With no
// key configured, only DEV_AUTH_BYPASS lets the request through.
func (h *handler) checkOpsKey(r *http.Request) *respond.Error {
	key := h.Config.ServiceAPIKey
	if !key.IsSet() {
		if h.Config.DevAuthBypass {
			return nil
		}
		return respond.Unauthorized("ops_key_not_configured", "SERVICE_API_KEY is not configured on this host")
	}
	given := r.Header.Get(HeaderAPIKey)
	if given == "" {
		return respond.Unauthorized("missing_api_key", "this route needs the ops key in X-API-Key")
	}
	if !keysEqual(given, key.Value()) {
		return respond.Unauthorized("invalid_api_key", "the X-API-Key value is not valid")
	}
	return nil
}

// keysEqual compares digests so that neither the content nor the length of the key
// leaks through timing.
func keysEqual(given, want string) bool {
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
