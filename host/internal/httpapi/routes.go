package httpapi

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/backup"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/refsync"
)

// Route is one entry of the route table: every route declares exactly one resolver.
type Route struct {
	Method   string
	Pattern  string
	Resolver auth.Resolver
	Handler  http.Handler
}

// bodyLimits are the routes ("METHOD pattern") whose request body may be larger
// than MaxRouteBody (1 MB), which bounds every other route; a larger body gets
// 413 (bodylimit.go). TestBodyLimitsNameRoutes keeps the keys in step with the
// table.
var bodyLimits = map[string]int64{
	"POST /api/papers/upload":     maxUploadBody,
	"POST /api/library/import":    papers.MaxImportBytes,
	"POST /api/decks/{id}/import": maxDeckImportBody,
	"POST /api/reviews/batch":     maxReviewBatchBody,
}

// bodyLimitDetails say, for a route whose body is one thing a person chose, what
// was too large in their words; other routes name the limit.
var bodyLimitDetails = map[string]string{
	"POST /api/papers/upload": fmt.Sprintf("The PDF is larger than %d MB.", ingest.MaxUploadBytes>>20),
}

// maxBody is the body limit of rt.
func maxBody(rt Route) int64 {
	if n, ok := bodyLimits[rt.Method+" "+rt.Pattern]; ok {
		return n
	}
	return MaxRouteBody
}

// Body limits of the routes that take more than MaxRouteBody.
const (
	// maxUploadBody is a PDF of ingest.MaxUploadBytes plus room for the multipart
	// envelope.
	maxUploadBody = ingest.MaxUploadBytes + 1<<20
	// maxDeckImportBody is a deck's CSV file (learning reads up to 10 MB).
	maxDeckImportBody = 10 << 20
	// maxReviewBatchBody is an offline batch of up to 1,000 reviews (learning
	// reads up to 2 MB).
	maxReviewBatchBody = 2 << 20
)

// routes is the whole route table of the host. Every route added here must also be
// described in openapi.json (TestOpenAPICoversEveryRoute) and listed in the
// cross-tenant test (host/internal/app, TestCrossTenantIsolation).
func (h *handler) routes(reg *prometheus.Registry) []Route {
	a, adm, cfg, pp, pj := h.Auth, h.Admin, h.Settings, h.Papers, h.Projects
	pluginList, pluginUpdate := unavailable("The plugin host is not running."), unavailable("The plugin host is not running.")
	if h.Plugins != nil {
		pluginList, pluginUpdate = h.Plugins.List, h.Plugins.Update
	}
	noQueue := unavailable("The job queue is not running.")
	jobCreate, jobList, jobGet, jobCancel, jobStream := noQueue, noQueue, noQueue, noQueue, noQueue
	upload, ingestURL := unavailable("The job queue is not running, so PDFs cannot be read."), unavailable("The job queue is not running, so PDFs cannot be read.")
	paperPDF := unavailable("The PDF store is not open.")
	if h.Upload != nil {
		upload, ingestURL, paperPDF = h.Upload.Upload, h.Upload.IngestURL, h.Upload.PDF
	}
	enrichPaper := unavailable("Checking papers against the sources is not running on this host.")
	if h.Enrich != nil {
		enrichPaper = h.Enrich.Enrich
	}
	infraIngest := unavailable("Infrastructure events are not taken on this host.")
	if h.InfraEvents != nil {
		infraIngest = h.InfraEvents.Ingest
	}
	if h.Jobs != nil {
		jobCreate, jobList, jobGet, jobCancel, jobStream = h.Jobs.Create, h.Jobs.List, h.Jobs.Get, h.Jobs.Cancel, h.Jobs.Stream
	}
	f := func(fn http.HandlerFunc) http.Handler { return fn }
	return append([]Route{
		// Health and description.
		{http.MethodGet, "/healthz", auth.Public, f(h.healthz)},
		{http.MethodGet, "/readyz", auth.Public, f(h.readyz)},
		{http.MethodGet, "/api/openapi.json", auth.Public, f(serveOpenAPI)},
		{http.MethodGet, "/metrics", auth.OpsKey, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})},

		// Infrastructure log events from a log-shipping sidecar (key and CIDR).
		{http.MethodPost, "/infra-events", auth.InfraKey, f(infraIngest)},

		// Sign-in.
		{http.MethodPost, "/api/auth/magic-link", auth.Public, f(a.HandleMagicLinkRequest)},
		{http.MethodGet, "/api/auth/verify", auth.Public, f(a.HandleVerify)},
		{http.MethodPost, "/api/auth/logout", auth.Strict, f(a.HandleLogout)},
		{http.MethodPost, "/api/auth/api-key-login", auth.Public, f(a.HandleAPIKeyLogin)},
		{http.MethodGet, "/api/onboarding", auth.Public, f(a.HandleOnboardingStatus)},
		{http.MethodPost, "/api/onboarding/admin", auth.Public, f(a.HandleOnboardingAdmin)},
		{http.MethodGet, "/api/me", auth.StrictWithOwnerOverride, f(a.HandleMe)},
		{http.MethodPatch, "/api/me", auth.Strict, f(a.HandleUpdateMe)},

		// Pairing a messenger chat (Settings → Integrations): the dashboard
		// issues the token; the bot consumes it (users.Pair).
		{http.MethodGet, "/api/me/messenger", auth.Strict, f(a.HandleMessengerStatus)},
		{http.MethodPost, "/api/me/messenger/pairing-token", auth.Strict, f(a.HandlePairingToken)},
		{http.MethodDelete, "/api/me/messenger", auth.Strict, f(a.HandleUnpairMessenger)},

		// Jobs: one envelope for all long-running work. The handlers refuse an
		// anonymous caller and scope every job to its owner.
		{http.MethodPost, "/api/jobs", auth.WithOwnerOverride, f(jobCreate)},
		{http.MethodGet, "/api/jobs", auth.WithOwnerOverride, f(jobList)},
		{http.MethodGet, "/api/jobs/{id}", auth.WithOwnerOverride, f(jobGet)},
		{http.MethodPost, "/api/jobs/{id}/cancel", auth.WithOwnerOverride, f(jobCancel)},
		{http.MethodGet, "/api/jobs/{id}/stream", auth.WithOwnerOverride, f(jobStream)},

		// Per-user settings.
		{http.MethodGet, "/api/settings/config", auth.Strict, f(cfg.List)},
		{http.MethodGet, "/api/settings/config/{key}", auth.Strict, f(cfg.Get)},
		{http.MethodPut, "/api/settings/config/{key}", auth.Strict, f(cfg.Put)},
		{http.MethodDelete, "/api/settings/config/{key}", auth.Strict, f(cfg.Delete)},

		// Papers: the feed, the caller's overlay, library membership.
		{http.MethodGet, "/api/papers", auth.StrictWithOwnerOverride, f(pp.Feed)},
		{http.MethodGet, "/api/papers/{id}", auth.StrictWithOwnerOverride, f(pp.Get)},
		{http.MethodPatch, "/api/papers/{id}/state", auth.StrictWithOwnerOverride, f(pp.SetState)},
		{http.MethodPost, "/api/library", auth.StrictWithOwnerOverride, f(pp.AddToLibrary)},
		{http.MethodDelete, "/api/library/{paper_id}", auth.StrictWithOwnerOverride, f(pp.RemoveFromLibrary)},
		{http.MethodPost, "/api/library/import", auth.Strict, f(pp.Import)},
		{http.MethodGet, "/api/search", auth.StrictWithOwnerOverride, f(h.Search.Search)},
		{http.MethodPost, "/api/papers/upload", auth.StrictWithOwnerOverride, f(upload)},
		{http.MethodPost, "/api/papers/{id}/ingest", auth.StrictWithOwnerOverride, f(ingestURL)},
		{http.MethodGet, "/api/papers/{id}/pdf", auth.StrictWithOwnerOverride, f(paperPDF)},
		{http.MethodPost, "/api/papers/{id}/enrich", auth.StrictWithOwnerOverride, f(enrichPaper)},
		{http.MethodGet, "/api/papers/{id}/passages", auth.StrictWithOwnerOverride, f(pp.Outline)},
		{http.MethodGet, "/api/papers/{id}/passages/{chunk_id}", auth.StrictWithOwnerOverride, f(pp.Passage)},
		{http.MethodGet, "/api/search/chunks", auth.StrictWithOwnerOverride, f(h.Passages.SearchChunks)},
		{http.MethodGet, "/api/library/export", auth.Strict, f(pp.Export)},

		// Answers, summaries and extractions from the papers' text.
		{http.MethodPost, "/api/rag/ask", auth.StrictWithOwnerOverride, f(h.RAG.Ask)},
		{http.MethodGet, "/api/papers/{id}/summary", auth.StrictWithOwnerOverride, f(h.RAG.GetSummary)},
		{http.MethodPost, "/api/papers/{id}/summary", auth.StrictWithOwnerOverride, f(h.RAG.Summarize)},
		{http.MethodGet, "/api/papers/{id}/extractions", auth.StrictWithOwnerOverride, f(h.RAG.GetExtractions)},
		{http.MethodPost, "/api/papers/{id}/extract", auth.StrictWithOwnerOverride, f(h.RAG.Extract)},

		// Projects, tasks, milestones and project papers.
		{http.MethodGet, "/api/projects", auth.StrictWithOwnerOverride, f(pj.ListProjects)},
		{http.MethodPost, "/api/projects", auth.StrictWithOwnerOverride, f(pj.CreateProject)},
		{http.MethodGet, "/api/projects/{id}", auth.StrictWithOwnerOverride, f(pj.GetProject)},
		{http.MethodPatch, "/api/projects/{id}", auth.StrictWithOwnerOverride, f(pj.UpdateProject)},
		{http.MethodDelete, "/api/projects/{id}", auth.StrictWithOwnerOverride, f(pj.DeleteProject)},
		{http.MethodGet, "/api/projects/{id}/tasks", auth.StrictWithOwnerOverride, f(pj.ListTasks)},
		{http.MethodPost, "/api/projects/{id}/tasks", auth.StrictWithOwnerOverride, f(pj.CreateTask)},
		{http.MethodGet, "/api/tasks/{id}", auth.StrictWithOwnerOverride, f(pj.GetTask)},
		{http.MethodPatch, "/api/tasks/{id}", auth.StrictWithOwnerOverride, f(pj.UpdateTask)},
		{http.MethodDelete, "/api/tasks/{id}", auth.StrictWithOwnerOverride, f(pj.DeleteTask)},
		{http.MethodGet, "/api/projects/{id}/milestones", auth.StrictWithOwnerOverride, f(pj.ListMilestones)},
		{http.MethodPost, "/api/projects/{id}/milestones", auth.StrictWithOwnerOverride, f(pj.CreateMilestone)},
		{http.MethodGet, "/api/milestones/{id}", auth.StrictWithOwnerOverride, f(pj.GetMilestone)},
		{http.MethodPatch, "/api/milestones/{id}", auth.StrictWithOwnerOverride, f(pj.UpdateMilestone)},
		{http.MethodDelete, "/api/milestones/{id}", auth.StrictWithOwnerOverride, f(pj.DeleteMilestone)},
		{http.MethodGet, "/api/projects/{id}/papers", auth.StrictWithOwnerOverride, f(pj.ListPapers)},
		{http.MethodPost, "/api/projects/{id}/papers", auth.StrictWithOwnerOverride, f(pj.LinkPaper)},
		{http.MethodDelete, "/api/projects/{id}/papers/{paper_id}", auth.StrictWithOwnerOverride, f(pj.UnlinkPaper)},

		// Spaced repetition.
		{http.MethodGet, "/api/decks", auth.StrictWithOwnerOverride, f(h.Learning.ListDecks)},
		{http.MethodPost, "/api/decks", auth.StrictWithOwnerOverride, f(h.Learning.CreateDeck)},
		{http.MethodGet, "/api/decks/{id}/export", auth.Strict, f(h.Learning.ExportDeck)},
		{http.MethodPost, "/api/decks/{id}/import", auth.Strict, f(h.Learning.ImportDeck)},
		{http.MethodGet, "/api/cards", auth.StrictWithOwnerOverride, f(h.Learning.ListCards)},
		{http.MethodPost, "/api/cards", auth.StrictWithOwnerOverride, f(h.Learning.CreateCard)},
		{http.MethodGet, "/api/cards/{id}", auth.StrictWithOwnerOverride, f(h.Learning.GetCard)},
		{http.MethodPatch, "/api/cards/{id}", auth.StrictWithOwnerOverride, f(h.Learning.UpdateCard)},
		{http.MethodDelete, "/api/cards/{id}", auth.StrictWithOwnerOverride, f(h.Learning.DeleteCard)},
		{http.MethodGet, "/api/reviews/due", auth.StrictWithOwnerOverride, f(h.Learning.Due)},
		{http.MethodPost, "/api/reviews", auth.StrictWithOwnerOverride, f(h.Learning.Review)},
		{http.MethodPost, "/api/reviews/batch", auth.StrictWithOwnerOverride, f(h.Learning.Batch)},
		{http.MethodPost, "/api/reviews/{id}/undo", auth.StrictWithOwnerOverride, f(h.Learning.UndoReview)},
		{http.MethodGet, "/api/analytics", auth.StrictWithOwnerOverride, f(h.Learning.Analytics)},

		// Administration: operations, not data.
		{http.MethodGet, "/api/admin/users", auth.AdminSession, f(adm.ListUsers)},
		{http.MethodPost, "/api/admin/users", auth.AdminSession, f(adm.InviteUser)},
		{http.MethodPatch, "/api/admin/users/{id}/role", auth.AdminSession, f(adm.SetRole)},
		{http.MethodDelete, "/api/admin/users/{id}", auth.AdminSession, f(adm.DeleteUser)},
		{http.MethodPost, "/api/admin/users/{id}/send-link", auth.AdminSession, f(adm.SendLink)},
		{http.MethodGet, "/api/admin/audit-log", auth.AdminSession, f(adm.AuditLog)},
		{http.MethodGet, "/api/admin/messenger", auth.AdminSession, f(cfg.MessengerSettings)},
		{http.MethodPut, "/api/admin/messenger", auth.AdminSession, f(cfg.PutMessengerSettings)},
		{http.MethodGet, "/api/admin/plugins", auth.AdminSession, f(pluginList)},
		{http.MethodGet, "/api/admin/llm", auth.AdminSession, f(h.LLM.Get)},
		{http.MethodPut, "/api/admin/llm/providers/{provider}", auth.AdminSession, f(h.LLM.PutProvider)},
		{http.MethodPost, "/api/admin/llm/providers/{provider}/test", auth.AdminSession, f(h.LLM.ProbeProvider)},
		{http.MethodPut, "/api/admin/llm/roles/{role}", auth.AdminSession, f(h.LLM.PutRole)},
		{http.MethodPatch, "/api/admin/plugins/{name}", auth.AdminSession, f(pluginUpdate)},
	}, slices.Concat(h.pulseRoutes(), h.zoteroRoutes(), h.backupRoutes())...)
}

// backupRoutes are the admin backups panel: the restore points, back up now,
// restore (typed RESTORE) and the restore's status. An admin's browser session
// only: the ops key gets 401 (SPEC "Restore security"). Without the panel (a
// host built without it) they answer 503.
func (h *handler) backupRoutes() []Route {
	b := h.Backups
	route := func(method, pattern string, fn func(*backup.API) http.HandlerFunc) Route {
		if b == nil {
			return Route{method, pattern, auth.AdminSession, unavailable("Backups are not set up on this host.")}
		}
		return Route{method, pattern, auth.AdminSession, fn(b)}
	}
	return []Route{
		route(http.MethodGet, "/api/admin/backups", func(a *backup.API) http.HandlerFunc { return a.List }),
		route(http.MethodGet, "/api/admin/backups/status", func(a *backup.API) http.HandlerFunc { return a.Status }),
		route(http.MethodPost, "/api/admin/backups/now", func(a *backup.API) http.HandlerFunc { return a.BackupNow }),
		route(http.MethodPost, "/api/admin/backups/restore", func(a *backup.API) http.HandlerFunc { return a.Restore }),
	}
}

// zoteroRoutes are the caller's Zotero integration: the sync's status, a check
// of their key, and "sync now". Without the sync (a host built without it) they
// answer 503.
func (h *handler) zoteroRoutes() []Route {
	z := h.Zotero
	route := func(method, pattern string, fn func(*refsync.API) http.HandlerFunc) Route {
		if z == nil {
			return Route{method, pattern, auth.StrictWithOwnerOverride, unavailable("The Zotero integration is not running on this host.")}
		}
		return Route{method, pattern, auth.StrictWithOwnerOverride, fn(z)}
	}
	return append([]Route{
		route(http.MethodGet, "/api/integrations/zotero", func(a *refsync.API) http.HandlerFunc { return a.Status }),
		route(http.MethodPost, "/api/integrations/zotero/test", func(a *refsync.API) http.HandlerFunc { return a.Test }),
		route(http.MethodPost, "/api/integrations/zotero/sync", func(a *refsync.API) http.HandlerFunc { return a.Sync }),
	}, h.zoteroInstanceRoutes()...)
}

// zoteroInstanceRoutes are the admin's setup of the group libraries the whole
// instance syncs.
func (h *handler) zoteroInstanceRoutes() []Route {
	var z *refsync.InstanceAPI
	if h.Zotero != nil {
		z = h.Zotero.Instance
	}
	route := func(method, pattern string, fn func(*refsync.InstanceAPI) http.HandlerFunc) Route {
		if z == nil {
			return Route{method, pattern, auth.AdminSession, unavailable("The Zotero integration is not running on this host.")}
		}
		return Route{method, pattern, auth.AdminSession, fn(z)}
	}
	return []Route{
		route(http.MethodGet, "/api/admin/zotero", func(a *refsync.InstanceAPI) http.HandlerFunc { return a.Get }),
		route(http.MethodPut, "/api/admin/zotero", func(a *refsync.InstanceAPI) http.HandlerFunc { return a.Put }),
		route(http.MethodPost, "/api/admin/zotero/sync", func(a *refsync.InstanceAPI) http.HandlerFunc { return a.Sync }),
	}
}

func unavailable(detail string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		httpx.Err(w, r, httpx.Unavailable(detail, nil))
	}
}

// pulseRoutes are Pulse's routes: the caller's morning deck, its ratings and
// settings, what they follow, and the recommendations. Without Pulse (a host
// built without it) each answers 503.
func (h *handler) pulseRoutes() []Route {
	pu := h.Pulse
	route := func(method, pattern string, fn func(*pulse.API) http.HandlerFunc) Route {
		if pu == nil {
			return Route{method, pattern, auth.StrictWithOwnerOverride, unavailable("Pulse is not running on this host.")}
		}
		return Route{method, pattern, auth.StrictWithOwnerOverride, fn(pu)}
	}
	return []Route{
		route(http.MethodGet, "/api/pulse/today", func(a *pulse.API) http.HandlerFunc { return a.Today }),
		route(http.MethodPost, "/api/pulse/generate", func(a *pulse.API) http.HandlerFunc { return a.Generate }),
		route(http.MethodPost, "/api/pulse/rate", func(a *pulse.API) http.HandlerFunc { return a.Rate }),
		route(http.MethodGet, "/api/pulse/explain/{paper_id}", func(a *pulse.API) http.HandlerFunc { return a.Explain }),
		route(http.MethodGet, "/api/pulse/weights", func(a *pulse.API) http.HandlerFunc { return a.Weights }),
		route(http.MethodPut, "/api/pulse/weights", func(a *pulse.API) http.HandlerFunc { return a.PutWeights }),
		route(http.MethodGet, "/api/pulse/source-health", func(a *pulse.API) http.HandlerFunc { return a.SourceHealth }),
		route(http.MethodGet, "/api/pulse/topics", func(a *pulse.API) http.HandlerFunc { return a.Topics }),
		route(http.MethodPost, "/api/pulse/topics", func(a *pulse.API) http.HandlerFunc { return a.AddTopic }),
		route(http.MethodDelete, "/api/pulse/topics/{id}", func(a *pulse.API) http.HandlerFunc { return a.DeleteTopic }),
		route(http.MethodGet, "/api/pulse/authors", func(a *pulse.API) http.HandlerFunc { return a.Authors }),
		route(http.MethodPost, "/api/pulse/authors", func(a *pulse.API) http.HandlerFunc { return a.FollowAuthor }),
		route(http.MethodDelete, "/api/pulse/authors/{id}", func(a *pulse.API) http.HandlerFunc { return a.UnfollowAuthor }),
		// The cold start: a new user's first batch to rate (steps 1-2 are the
		// topics and authors routes above).
		route(http.MethodGet, "/api/pulse/onboarding", func(a *pulse.API) http.HandlerFunc { return a.Onboarding }),
		route(http.MethodPost, "/api/pulse/onboarding/rate", func(a *pulse.API) http.HandlerFunc { return a.RateOnboarding }),
		route(http.MethodPost, "/api/pulse/onboarding/discover", func(a *pulse.API) http.HandlerFunc { return a.DiscoverOnboarding }),
		route(http.MethodGet, "/api/recommendations", func(a *pulse.API) http.HandlerFunc { return a.Recommendations }),
		h.digestRoute(),
	}
}

// digestRoute is the Weekly Summary's route; 503 without it.
func (h *handler) digestRoute() Route {
	if h.Digest == nil {
		return Route{http.MethodGet, "/api/digest/weekly", auth.StrictWithOwnerOverride, unavailable("The Weekly Summary is not running on this host.")}
	}
	return Route{http.MethodGet, "/api/digest/weekly", auth.StrictWithOwnerOverride, http.HandlerFunc(h.Digest.Weekly)}
}
