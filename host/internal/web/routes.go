package web

import "net/http"

// Route is one entry of the dashboard's route table.
type Route struct {
	Method  string
	Pattern string
	// Access says who may open it; the handler enforces it.
	Access  access
	Handler http.Handler
}

// routes is the dashboard's whole route table. Every route added here must also be
// listed in the dashboard's cross-tenant test (tenancy_test.go, dashboardCases).
func (h *handler) routes() []Route {
	u := func(p pageFunc) http.Handler { return h.withSession(signedIn, p) }
	a := func(p pageFunc) http.Handler { return h.withSession(adminOnly, p) }
	f := func(fn http.HandlerFunc) http.Handler { return fn }
	get, post := http.MethodGet, http.MethodPost
	return []Route{
		// Arriving, onboarding and signing in.
		{get, "/", public, f(h.home)},
		{get, "/onboarding", public, f(h.onboarding)},
		{post, "/onboarding/admin", public, f(h.onboardingAdmin)},
		{post, "/onboarding/llm", signedIn, u(h.onboardingLLM)},
		{post, "/onboarding/llm/test", signedIn, u(h.onboardingLLMTest)},
		{post, "/onboarding/upload", signedIn, u(h.onboardingUpload)},
		{get, "/signin", public, f(h.signIn)},
		{post, "/signin/link", public, f(h.signInLink)},
		{post, "/signin/key", public, f(h.signInKey)},
		{post, "/signout", signedIn, u(h.signOut)},
		// A mailed sign-in link opened in a browser (Server.ServeHTTP sends only
		// those here; API clients reach the API).
		{get, verifyPath, public, f(h.verifyLink)},

		// Library and feed, papers.
		{get, "/library", signedIn, u(h.libraryPage)},
		{post, "/library/add", signedIn, u(h.libraryAdd)},
		{get, "/library/export", signedIn, u(h.libraryExport)},
		{post, "/papers/upload", signedIn, u(h.paperUpload)},
		{get, "/papers/{id}", signedIn, u(h.paperPage)},
		{get, "/papers/{id}/read", signedIn, u(h.readerPage)},
		{post, "/papers/{id}/state", signedIn, u(h.paperState)},
		{post, "/papers/{id}/ingest", signedIn, u(h.paperIngest)},
		{post, "/papers/{id}/summary", signedIn, u(h.paperSummarize)},
		{post, "/papers/{id}/extract", signedIn, u(h.paperExtract)},
		{post, "/papers/{id}/enrich", signedIn, u(h.paperEnrich)},
		{post, "/papers/{id}/ask", signedIn, u(h.paperAsk)},
		{post, "/papers/{id}/cards", signedIn, u(h.paperCardCreate)},
		{post, "/papers/{id}/cards/draft", signedIn, u(h.paperCardDraft)},
		{post, "/cards/{id}/accept", signedIn, u(h.cardAccept)},
		{post, "/cards/{id}/delete", signedIn, u(h.cardDelete)},
		{get, "/cards", signedIn, u(h.cardsPage)},
		{get, "/cards/{id}", signedIn, u(h.cardPage)},
		{post, "/cards/{id}", signedIn, u(h.cardUpdate)},
		{post, "/cards/{id}/status", signedIn, u(h.cardStatus)},
		{get, "/ask", signedIn, u(h.askPage)},
		{post, "/ask", signedIn, u(h.askPost)},

		// Pulse: today's deck, its weights, the weekly summary.
		{get, "/today", signedIn, u(h.todayPage)},
		{post, "/today/rate", signedIn, u(h.todayRate)},
		{post, "/today/generate", signedIn, u(h.todayGenerate)},
		{get, "/today/weights", signedIn, u(h.weightsPage)},
		{post, "/today/weights", signedIn, u(h.weightsSave)},
		{get, "/weekly", signedIn, u(h.weeklyPage)},

		// Search across sources.
		{get, "/search", signedIn, u(h.searchPage)},
		{post, "/search/add", signedIn, u(h.searchAdd)},

		// Jobs.
		{get, "/jobs", signedIn, u(h.jobsPage)},
		{get, "/jobs/{id}", signedIn, u(h.jobPage)},
		{post, "/jobs/{id}/cancel", signedIn, u(h.jobCancel)},

		// Learning.
		{get, "/review", signedIn, u(h.reviewPage)},
		{post, "/review", signedIn, u(h.reviewPost)},
		{post, "/review/undo", signedIn, u(h.reviewUndo)},
		{get, "/analytics", signedIn, u(h.analyticsPage)},

		// Projects, tasks and milestones.
		{get, "/projects", signedIn, u(h.projectsPage)},
		{post, "/projects", signedIn, u(h.projectCreate)},
		{get, "/projects/{id}", signedIn, u(h.projectPage)},
		{post, "/projects/{id}", signedIn, u(h.projectUpdate)},
		{post, "/projects/{id}/delete", signedIn, u(h.projectDelete)},
		{post, "/projects/{id}/tasks", signedIn, u(h.taskCreate)},
		{post, "/projects/{id}/milestones", signedIn, u(h.milestoneCreate)},
		{post, "/projects/{id}/papers", signedIn, u(h.projectLinkPaper)},
		{post, "/projects/{id}/papers/{paper_id}/unlink", signedIn, u(h.projectUnlinkPaper)},
		{post, "/tasks/{id}", signedIn, u(h.taskUpdate)},
		{post, "/tasks/{id}/delete", signedIn, u(h.taskDelete)},
		{post, "/milestones/{id}", signedIn, u(h.milestoneUpdate)},
		{post, "/milestones/{id}/delete", signedIn, u(h.milestoneDelete)},

		// Pulse's cold start: topics, authors, a first batch to rate.
		{get, "/pulse/start", signedIn, u(h.pulseStartPage)},
		{post, "/pulse/start/topics", signedIn, u(h.pulseStartTopics)},
		{post, "/pulse/start/authors", signedIn, u(h.pulseStartAuthors)},
		{post, "/pulse/start/rate", signedIn, u(h.pulseStartRate)},
		{post, "/pulse/start/discover", signedIn, u(h.pulseStartDiscover)},
		{post, "/pulse/start/generate", signedIn, u(h.pulseStartGenerate)},

		// Settings.
		{get, "/settings", signedIn, u(h.settingsPage)},
		{post, "/settings/profile", signedIn, u(h.profilePut)},
		{post, "/settings/config", signedIn, u(h.settingsPut)},
		{post, "/settings/config/delete", signedIn, u(h.settingsDelete)},
		{post, "/settings/messenger/token", signedIn, u(h.messengerToken)},
		{post, "/settings/messenger/unpair", signedIn, u(h.messengerUnpair)},
		{post, "/settings/zotero/test", signedIn, u(h.zoteroTest)},
		{post, "/settings/zotero/sync", signedIn, u(h.zoteroSync)},
		{post, "/settings/zotero/instance", adminOnly, a(h.zoteroInstancePut)},
		{post, "/settings/zotero/instance/sync", adminOnly, a(h.zoteroInstanceSync)},
		{get, "/settings/llm", adminOnly, a(h.llmPage)},
		{post, "/settings/llm/providers/{provider}", adminOnly, a(h.llmProviderPut)},
		{post, "/settings/llm/providers/{provider}/test", adminOnly, a(h.llmProviderTest)},
		{post, "/settings/llm/roles/{role}", adminOnly, a(h.llmRolePut)},

		// Administration.
		{get, "/admin/users", adminOnly, a(h.usersPage)},
		{post, "/admin/users", adminOnly, a(h.userInvite)},
		{post, "/admin/users/{id}/role", adminOnly, a(h.userRole)},
		{post, "/admin/users/{id}/delete", adminOnly, a(h.userDelete)},
		{post, "/admin/users/{id}/send-link", adminOnly, a(h.userSendLink)},
		{get, "/admin/audit", adminOnly, a(h.auditPage)},
		{get, "/admin/plugins", adminOnly, a(h.pluginsPage)},
		{post, "/admin/plugins/{name}", adminOnly, a(h.pluginUpdate)},
		{get, "/admin/backups", adminOnly, a(h.backupsPage)},
		{post, "/admin/backups/now", adminOnly, a(h.backupNow)},
		{post, "/admin/backups/restore", adminOnly, a(h.backupRestore)},
	}
}
