package web

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// Config is what New needs.
type Config struct {
	// APIURL is the API's base URL, such as http://127.0.0.1:3001. Required.
	APIURL *url.URL
	// API, when set, is the API's own handler in this process: the dashboard calls
	// it directly, passing the browser's address as the peer address, and serves
	// /api/*, /healthz, /readyz and /metrics with it. Nil reaches APIURL over the
	// network and forwards /api/* there with a reverse proxy.
	API http.Handler
	// Transport reaches APIURL when API is nil; default http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives the dashboard's log lines; default: discarded.
	Logger *slog.Logger
}

// Server is the dashboard: an http.Handler serving the pages, the static files and
// the API behind them.
type Server struct {
	mux      *chi.Mux
	api      http.Handler
	apiPaths []string
	routes   []Route
}

// handler holds what every page handler shares.
type handler struct {
	api  *apiClient
	view *renderer
	log  *slog.Logger
}

// New builds the dashboard.
func New(cfg Config) (*Server, error) {
	if cfg.APIURL == nil {
		return nil, errors.New("web: Config.APIURL is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	base := *cfg.APIURL
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	rt := cfg.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if cfg.API != nil {
		rt = handlerTransport{handler: cfg.API}
	}
	rd, err := newRenderer(cfg.Logger)
	if err != nil {
		return nil, err
	}
	h := &handler{api: newAPIClient(&base, rt), view: rd, log: cfg.Logger}
	s := &Server{routes: h.routes()}

	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	// The API's own paths go to the API untouched, before the pages' router: its
	// handler in process, else the reverse proxy.
	s.api = cfg.API
	s.apiPaths = []string{"/healthz", "/readyz", "/metrics"}
	if s.api == nil {
		s.api = newAPIProxy(&base, rt, cfg.Logger)
		s.apiPaths = nil
	}
	m := chi.NewRouter()
	m.Use(pageHeaders, h.logRequests, recoverPanics(cfg.Logger), crossOriginProtection())
	if cfg.API == nil {
		m.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
		})
	}
	m.Handle("/static/*", http.StripPrefix("/static/", staticFiles(static)))
	m.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.view.render(w, r, http.StatusNotFound, "error", &view{Title: "Page not found",
			Err: &uiError{What: "There is no page at this address.", Do: "Use the navigation to find what you were looking for."}})
	})
	for _, rt := range s.routes {
		m.Method(rt.Method, rt.Pattern, rt.Handler)
	}
	s.mux = m
	return s, nil
}

// ServeHTTP serves the dashboard, and /api/* (with the health and metrics paths
// in process) from the API; a browser opening a mailed sign-in link gets a page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isLinkVisit(r) {
		s.mux.ServeHTTP(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/") || slices.Contains(s.apiPaths, r.URL.Path) {
		s.api.ServeHTTP(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Routes returns the dashboard's route table (the cross-tenant test walks it).
func (s *Server) Routes() []Route { return s.routes }

// staticFiles serves the embedded assets; they change with the binary, so they are
// cached briefly and revalidated.
func staticFiles(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		files.ServeHTTP(w, r)
	})
}

// pageHeaders sets the security headers of every page: scripts and styles only from
// the dashboard itself, no framing, no referrer. pdf.js's files (the reader's
// worker, whose policy is the one its own script arrives with) may also compile
// WebAssembly, the image decoders pdf.js ships; never JavaScript from strings.
func pageHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		script := "script-src 'self'; "
		if strings.HasPrefix(r.URL.Path, "/static/vendor/pdfjs/") {
			script = "script-src 'self' 'wasm-unsafe-eval'; "
		}
		h.Set("Content-Security-Policy", "default-src 'self'; "+script+"style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// crossOriginProtection refuses form posts a browser sends from another site, as the
// API does for its own routes (Sec-Fetch-Site, else Origin against Host).
func crossOriginProtection() func(http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	return p.Handler
}

func (h *handler) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "dashboard request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					log.ErrorContext(r.Context(), "dashboard: panic", "path", r.URL.Path, "panic", fmt.Sprint(p))
					http.Error(w, "Something went wrong in the dashboard. Reload the page.", http.StatusInternalServerError)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
