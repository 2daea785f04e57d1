// Package httpapi is Lectern's HTTP surface: the chi router and its one route table,
// middleware (request ids, logs, panic recovery, CORS, metrics), the ops-key gate,
// health and readiness, Prometheus metrics and the OpenAPI document.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern-research/lectern/host/internal/admin"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/backup"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/digest"
	"github.com/lectern-research/lectern/host/internal/enrich"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/infraevents"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmsettings"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/projects"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/refsync"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

// Deps are what the HTTP surface needs from the rest of the host.
type Deps struct {
	Config   *config.Config
	Logger   *slog.Logger
	Pool     *pgxpool.Pool
	Migrator *store.Migrator
	Version  string

	Auth     *auth.Service
	Admin    *admin.API
	Settings *userconfig.API
	Papers   *papers.API
	Projects *projects.API
	Search   *search.API
	Learning *learning.API
	// Upload is the PDF upload; nil answers 503 (no job queue).
	Upload   *ingest.API
	Passages *retrieve.API
	LLM      *llmsettings.API
	// RAG answers questions, summarises and extracts.
	RAG *rag.API
	// Plugins is the plugin administration; nil when the host runs without a plugin
	// host, and then its routes answer 503.
	Plugins *pluginhost.AdminAPI
	// Jobs is the jobs API; nil answers 503 on its routes.
	Jobs *jobs.API
	// Enrich checks a paper against the sources; nil answers 503.
	Enrich *enrich.API
	// Pulse serves the morning deck, its ratings and settings, and the
	// recommendations.
	Pulse *pulse.API
	// Digest serves the Weekly Summary.
	Digest *digest.API
	// Zotero serves the caller's Zotero sync: status, key check, sync now.
	Zotero *refsync.API
	// Backups is the admin backups panel; nil answers 503 on its routes.
	Backups *backup.API
	// BackupView says when the host is in maintenance after a failed restore
	// (every route but sign-in, health and the panel answers 503); nil never.
	BackupView *backup.View
	// InfraEvents takes POST /infra-events; nil answers 503.
	InfraEvents *infraevents.API
}

// handler holds the dependencies every route handler shares.
type handler struct {
	Deps
	metrics *metrics
}

// NewHandler builds the router with every route of the route table mounted, and
// returns the table too (the tenancy and OpenAPI tests walk it).
func NewHandler(deps Deps) (*chi.Mux, []Route) {
	reg := prometheus.NewRegistry()
	h := &handler{Deps: deps, metrics: newMetrics(reg, deps.Pool)}
	routes := h.routes(reg)

	r := chi.NewRouter()
	r.Use(
		requestID,
		withDebug(deps.Config.DevErrorDetail),
		observe(deps.Logger, h.metrics),
		recoverPanics(deps.Logger),
		securityHeaders(deps.Config),
		corsMiddleware(deps.Config),
		crossOriginProtection(deps.Config),
		refuseUnstorableText,
		backup.MaintenanceGate(deps.BackupView, backup.MaintenanceOpen),
	)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		httpx.Err(w, r, httpx.NotFound("no route for "+r.Method+" "+r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
			Detail: r.Method + " is not allowed on " + r.URL.Path})
	})
	for _, rt := range routes {
		r.With(deps.Auth.Resolve(rt.Resolver), limitBody(maxBody(rt), bodyLimitDetails[rt.Method+" "+rt.Pattern])).Method(rt.Method, rt.Pattern, rt.Handler)
	}
	return r, routes
}
