package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pulse"
)

// idKind says which of Alice's ids stands in a dashboard route's {id}.
type idKind string

const (
	noID          idKind = ""
	paperID       idKind = "paper"
	cardID        idKind = "card"
	jobID         idKind = "job"
	projectID     idKind = "project"
	taskID        idKind = "task"
	milestoneID   idKind = "milestone"
	userID        idKind = "user"
	providerParam idKind = "provider"
	roleParam     idKind = "role"
	pluginParam   idKind = "plugin"
)

// dashboardCases lists every route of the dashboard's route table with the kind of
// id it takes. A route missing here fails TestDashboardCrossTenant: each new page
// joins the cross-tenant check.
var dashboardCases = map[string]idKind{
	"GET /":                                        noID,
	"GET /onboarding":                              noID,
	"POST /onboarding/admin":                       noID,
	"POST /onboarding/llm":                         noID,
	"POST /onboarding/upload":                      noID,
	"GET /signin":                                  noID,
	"POST /signin/link":                            noID,
	"POST /signin/key":                             noID,
	"POST /signout":                                noID,
	"GET /api/auth/verify":                         noID,
	"GET /library":                                 noID,
	"POST /library/add":                            noID,
	"GET /library/export":                          noID,
	"POST /papers/upload":                          noID,
	"GET /papers/{id}":                             paperID,
	"GET /papers/{id}/read":                        paperID,
	"POST /papers/{id}/state":                      paperID,
	"POST /papers/{id}/ingest":                     paperID,
	"POST /papers/{id}/summary":                    paperID,
	"POST /papers/{id}/enrich":                     paperID,
	"POST /papers/{id}/extract":                    paperID,
	"POST /papers/{id}/ask":                        paperID,
	"POST /papers/{id}/cards":                      paperID,
	"POST /papers/{id}/cards/draft":                paperID,
	"POST /cards/{id}/accept":                      cardID,
	"POST /cards/{id}/delete":                      cardID,
	"GET /cards":                                   noID,
	"GET /cards/{id}":                              cardID,
	"POST /cards/{id}":                             cardID,
	"POST /cards/{id}/status":                      cardID,
	"POST /review/undo":                            noID,
	"GET /ask":                                     noID,
	"POST /ask":                                    noID,
	"GET /search":                                  noID,
	"POST /search/add":                             noID,
	"GET /jobs":                                    noID,
	"GET /jobs/{id}":                               jobID,
	"POST /jobs/{id}/cancel":                       jobID,
	"GET /review":                                  noID,
	"POST /review":                                 noID,
	"GET /analytics":                               noID,
	"GET /projects":                                noID,
	"POST /projects":                               noID,
	"GET /projects/{id}":                           projectID,
	"POST /projects/{id}":                          projectID,
	"POST /projects/{id}/delete":                   projectID,
	"POST /projects/{id}/tasks":                    projectID,
	"POST /projects/{id}/milestones":               projectID,
	"POST /projects/{id}/papers":                   projectID,
	"POST /projects/{id}/papers/{paper_id}/unlink": projectID,
	"POST /tasks/{id}":                             taskID,
	"POST /tasks/{id}/delete":                      taskID,
	"POST /milestones/{id}":                        milestoneID,
	"POST /milestones/{id}/delete":                 milestoneID,
	"GET /settings":                                noID,
	"POST /settings/profile":                       noID,
	"POST /settings/config":                        noID,
	"POST /settings/config/delete":                 noID,
	"POST /settings/messenger/token":               noID,
	"POST /settings/messenger/unpair":              noID,
	"POST /settings/zotero/test":                   noID,
	"POST /settings/zotero/sync":                   noID,
	"POST /settings/zotero/instance":               noID,
	"POST /settings/zotero/instance/sync":          noID,
	"GET /settings/llm":                            noID,
	"POST /settings/llm/providers/{provider}":      providerParam,
	"POST /settings/llm/roles/{role}":              roleParam,
	"GET /admin/users":                             noID,
	"POST /admin/users":                            noID,
	"POST /admin/users/{id}/role":                  userID,
	"POST /admin/users/{id}/delete":                userID,
	"POST /admin/users/{id}/send-link":             userID,
	"GET /admin/audit":                             noID,
	"GET /admin/plugins":                           noID,
	"POST /admin/plugins/{name}":                   pluginParam,
	"GET /admin/backups":                           noID,
	"POST /admin/backups/now":                      noID,
	"POST /admin/backups/restore":                  noID,

	// Pulse: the rate form carries Alice's paper (in her deck, not Bob's).
	"GET /today":           noID,
	"POST /today/rate":     noID,
	"POST /today/generate": noID,
	"GET /today/weights":   noID,
	"POST /today/weights":  noID,
	"GET /weekly":          noID,

	// Pulse's cold start: Bob's own topics, authors and ratings; Alice's paper
	// id in his rate form is a 404 page.
	"GET /pulse/start":           noID,
	"POST /pulse/start/topics":   noID,
	"POST /pulse/start/authors":  noID,
	"POST /pulse/start/rate":     noID,
	"POST /pulse/start/discover": noID,
	"POST /pulse/start/generate": noID,

	// Connection tests make the host connect out: the API refuses a non-admin.
	"POST /onboarding/llm/test":                    noID,
	"POST /settings/llm/providers/{provider}/test": providerParam,
}

// tenantData is what Alice owns, and the strings that appear only in it.
type tenantData struct {
	ids     map[idKind]string
	markers []string
}

// signInInvited follows the invitation mailed to addr in a new browser.
func (s *stack) signInInvited(t *testing.T, addr string) *browser {
	t.Helper()
	b := s.browser(t)
	link := s.mail.link(t, addr)
	p := b.get(strings.TrimPrefix(link, s.dash.URL))
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, addr, "signed in by the invitation")
	return b
}

// seedAlice gives Alice a private paper, a job, a project with a task and a
// milestone, a deck with a card and a setting, each carrying a marker.
func seedAlice(t *testing.T, s *stack, alice *browser, aliceUser string) *tenantData {
	t.Helper()
	const mark = "alicemarker7f3"
	d := &tenantData{ids: map[idKind]string{userID: aliceUser, providerParam: "openai", roleParam: "summary", pluginParam: "source.arxiv"},
		markers: []string{mark, "alice@example.org"}}
	p := alice.upload("/papers/upload", "alice.pdf", samplePDF("Private notes "+mark, paperPages))
	require.True(t, strings.HasPrefix(p.url, "/papers/"), p.body)
	d.ids[paperID] = strings.TrimPrefix(strings.SplitN(p.url, "?", 2)[0], "/papers/")
	d.ids[jobID] = strings.TrimPrefix(strings.SplitN(p.url, "?", 2)[1], "job=")
	require.Eventually(t, func() bool {
		return strings.Contains(alice.get(p.url).body, `data-state="succeeded"`)
	}, 60*time.Second, 200*time.Millisecond)

	var proj struct{ ID string }
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": mark + " project"}, &proj))
	d.ids[projectID] = proj.ID
	var tk, ms, deck, cd struct{ ID string }
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/projects/"+proj.ID+"/tasks", map[string]any{"title": mark + " task"}, &tk))
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/projects/"+proj.ID+"/milestones", map[string]any{"title": mark + " milestone", "due_date": "2031-01-01"}, &ms))
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/projects/"+proj.ID+"/papers", map[string]any{"paper_id": d.ids[paperID]}, nil))
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/decks", map[string]any{"name": mark + " deck"}, &deck))
	require.Equal(t, http.StatusCreated, alice.apiJSON(http.MethodPost, "/api/cards", map[string]any{"deck_id": deck.ID, "front": mark + " card", "paper_id": d.ids[paperID]}, &cd))
	require.Equal(t, http.StatusOK, alice.apiJSON(http.MethodPut, "/api/settings/config/zotero.user_id", map[string]any{"value": mark + "-zotero"}, nil))
	d.ids[taskID], d.ids[milestoneID], d.ids[cardID] = tk.ID, ms.ID, cd.ID
	// A Pulse deck whose card is her paper, and weights of her own.
	owner, paperUUID := uuid.MustParse(aliceUser), uuid.MustParse(d.ids[paperID])
	_, err := s.app.PulseGen.Store.SaveDeck(context.Background(), owner, time.Now().UTC().Format(time.DateOnly),
		[]pulse.Card{{PaperID: paperUUID, Rank: 1, Score: 0.5, Signals: map[string]float64{"topic": 1}, Why: mark + " why"}}, pulse.Stats{CardCount: 1})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, alice.apiJSON(http.MethodPut, "/api/pulse/weights", map[string]any{"embedding": 0.7, "topic": 0.7,
		"llm_relevance": 0.7, "llm_novelty": 0.7, "author_bonus": 0.7, "recency": 0.7}, nil))
	return d
}

// snapshot renders Alice's rows as she sees them through the API.
func snapshot(t *testing.T, alice *browser, d *tenantData) string {
	t.Helper()
	var out strings.Builder
	for _, path := range []string{"/api/papers/" + d.ids[paperID], "/api/jobs/" + d.ids[jobID], "/api/projects/" + d.ids[projectID],
		"/api/projects/" + d.ids[projectID] + "/tasks", "/api/projects/" + d.ids[projectID] + "/milestones",
		"/api/projects/" + d.ids[projectID] + "/papers", "/api/cards?limit=500", "/api/settings/config", "/api/me",
		"/api/pulse/today", "/api/pulse/weights", "/api/pulse/explain/" + d.ids[paperID]} {
		var v any
		code := alice.apiJSON(http.MethodGet, path, nil, &v)
		require.Equal(t, http.StatusOK, code, path)
		out.WriteString(path)
		out.WriteString(": ")
		out.WriteString(strings.ReplaceAll(strings.TrimSpace(toJSON(t, v)), "\n", " "))
		out.WriteString("\n")
	}
	return out.String()
}

// TestDashboardCrossTenant calls every dashboard route as Bob, with Alice's ids
// where the route takes one and with forms that would change her rows: no page
// shows Bob anything of Alice's, and her rows stay exactly as they were.
func TestDashboardCrossTenant(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	root := s.browser(t)
	p := root.post("/onboarding/admin", url.Values{"email": {"root@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	var alice, bob struct{ User struct{ ID string } }
	require.Equal(t, http.StatusCreated, root.apiJSON(http.MethodPost, "/api/admin/users", map[string]any{"email": "alice@example.org", "role": "user"}, &alice))
	require.Equal(t, http.StatusCreated, root.apiJSON(http.MethodPost, "/api/admin/users", map[string]any{"email": "bob@example.org", "role": "user"}, &bob))
	ab := s.signInInvited(t, "alice@example.org")
	bb := s.signInInvited(t, "bob@example.org")
	data := seedAlice(t, s, ab, alice.User.ID)
	before := snapshot(t, ab, data)
	// The control: Alice herself sees her markers on these pages.
	for _, path := range []string{"/papers/" + data.ids[paperID], "/projects", "/projects/" + data.ids[projectID], "/settings", "/library"} {
		require.Contains(t, ab.get(path).body, data.markers[0], "Alice sees her own data at %s", path)
	}

	routes := s.web.Routes()
	for _, rt := range routes {
		_, ok := dashboardCases[rt.Method+" "+rt.Pattern]
		require.True(t, ok, "route %s %s is missing from dashboardCases: add it to the cross-tenant test", rt.Method, rt.Pattern)
	}
	// Forms as an attacker would fill them: every field that could change a row.
	form := url.Values{
		"state": {"trash"}, "starred": {"true"}, "rating": {"1"}, "notes": {"stolen"}, "url": {"https://example.org/x.pdf"},
		"question": {"What does the paper say?"}, "scope": {"library"}, "front": {"planted"}, "back": {"planted"},
		"deck_id": {""}, "new_deck": {"Bob's"}, "paper_id": {data.ids[paperID]}, "name": {"stolen"}, "status": {"done"},
		"title": {"planted"}, "due_date": {"2031-02-02"}, "completed": {"true"}, "key": {"zotero.user_id"}, "value": {"bob"},
		"role": {"admin"}, "enabled": {"false"}, "provider": {"openai"}, "model": {"x"}, "api_key": {"not-the-key"},
		"email": {"bob-extra@example.org"}, "identifier": {"10.1234/none"}, "card_id": {data.ids[cardID]}, "back_to": {"/"},
		"action": {"dismiss"}, "embedding": {"0"}, "topic": {"0"}, "llm_relevance": {"0"}, "llm_novelty": {"0"}, "author_bonus": {"0"}, "recency": {"0"},
	}
	var signout *Route
	for i, rt := range routes {
		key := rt.Method + " " + rt.Pattern
		if key == "POST /signout" {
			signout = &routes[i]
			continue
		}
		path := rt.Pattern
		if kind := dashboardCases[key]; kind != noID {
			path = strings.NewReplacer("{id}", data.ids[kind], "{provider}", data.ids[kind], "{role}", data.ids[kind],
				"{name}", data.ids[kind], "{paper_id}", data.ids[paperID]).Replace(path)
		}
		t.Run(key, func(t *testing.T) {
			var pg page
			if rt.Method == http.MethodGet {
				pg = bb.get(path + "?scope=corpus&view=all_non_trash&q=" + url.QueryEscape("Private notes"))
			} else if key == "POST /papers/upload" || key == "POST /onboarding/upload" {
				pg = bb.upload(path, "bob.pdf", samplePDF("Bob's own", paperPages))
			} else {
				pg = bb.post(path, form)
			}
			require.Less(t, pg.status, 500, "%s: %s", key, pg.body)
			if key == "POST /today/rate" {
				require.Equal(t, http.StatusNotFound, pg.status, "a paper of Alice's deck is not in Bob's")
				require.Contains(t, pg.body, "That paper is not in your Pulse deck, so it was not rated.")
			}
			for _, m := range data.markers {
				require.NotContains(t, pg.body, m, "%s shows Bob Alice's data", key)
			}
		})
	}
	require.NotNil(t, signout)
	bb.post(signout.Pattern, nil)
	require.Equal(t, before, snapshot(t, ab, data), "Alice's rows are untouched by everything Bob did")
}
