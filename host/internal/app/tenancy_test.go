package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpapi"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

// tenant is one user with a row in every per-user table.
type tenant struct {
	user    uuid.UUID
	email   string
	cookie  string
	ids     map[string]string // table -> id of the row seeded there
	markers []string          // strings that appear only in this user's rows
}

// seedTenant gives u one row in every per-user table, each carrying a marker
// string unique to the user, so a leak shows up in any response body.
func seedTenant(t testing.TB, b *testBundle, email string) *tenant {
	t.Helper()
	ctx := context.Background()
	u := b.user(t, email, "user")
	tn := &tenant{user: u.ID, email: email, ids: map[string]string{}}
	mark := "mark-" + strings.Split(email, "@")[0] + "-" + uuid.NewString()[:8]
	tn.markers = []string{u.ID.String(), email, mark}

	var paper string
	require.NoError(t, b.pool.QueryRow(ctx,
		`INSERT INTO papers (title, source, discovered_by) VALUES ($1, 'upload', $2) RETURNING id`, mark+" paper", u.ID).Scan(&paper))
	var chunk string
	require.NoError(t, b.pool.QueryRow(ctx, `
		INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		VALUES ($1, 0, 'text', 1, 1, 0, 4, 1) RETURNING id`, paper).Scan(&chunk))
	_, err := b.pool.Exec(ctx, `INSERT INTO paper_summaries (paper_id, model, prompt_version, method, source, tldr, summary, confidence)
		VALUES ($1, 'builtin/extractive', 'summary-v1', 'extractive', 'full_text', $2, $2, 'HIGH')`, paper, mark)
	require.NoError(t, err)
	var entity string
	require.NoError(t, b.pool.QueryRow(ctx,
		`INSERT INTO entities (entity_type, canonical_name) VALUES ('method', $1) RETURNING id`, mark).Scan(&entity))

	one := func(table, sql string, args ...any) string {
		var id string
		require.NoError(t, b.pool.QueryRow(ctx, sql, args...).Scan(&id), table)
		tn.ids[table] = id
		return id
	}
	uid := u.ID
	one("user_config", `INSERT INTO user_config (user_id, key, value) VALUES ($1, 'notes.marker', to_jsonb($2::text)) RETURNING id::text`, uid, mark)
	one("user_library", `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload') RETURNING paper_id::text`, uid, paper)
	one("paper_user_state", `INSERT INTO paper_user_state (user_id, paper_id, state, notes, rating) VALUES ($1, $2, 'reading', $3, 4) RETURNING paper_id::text`, uid, paper, mark)
	one("paper_recommendations", `INSERT INTO paper_recommendations (user_id, paper_id, score, explanation) VALUES ($1, $2, 0.9, $3) RETURNING id::text`, uid, paper, mark)
	one("recommendation_feedback", `INSERT INTO recommendation_feedback (user_id, paper_id, signal, source, reason) VALUES ($1, $2, 'positive', 'feed_thumbs', $3) RETURNING id::text`, uid, paper, mark)
	one("paper_notes", `INSERT INTO paper_notes (user_id, paper_id, body) VALUES ($1, $2, $3) RETURNING id::text`, uid, paper, mark)
	extraction := one("paper_extractions", `INSERT INTO paper_extractions (user_id, paper_id, model, prompt_version) VALUES ($1, $2, 'builtin', 'v1') RETURNING id::text`, uid, paper)
	one("paper_extraction_items", `INSERT INTO paper_extraction_items (extraction_id, user_id, item_type, content) VALUES ($1, $2, 'claim', $3) RETURNING id::text`, extraction, uid, mark)
	one("paper_entities", `INSERT INTO paper_entities (user_id, paper_id, entity_id, quote) VALUES ($1, $2, $3, $4) RETURNING id::text`, uid, paper, entity, mark)
	project := one("projects", `INSERT INTO projects (user_id, name, description) VALUES ($1, $2, $3) RETURNING id::text`, uid, mark, mark)
	one("tasks", `INSERT INTO tasks (user_id, project_id, title) VALUES ($1, $2, $3) RETURNING id::text`, uid, project, mark)
	one("milestones", `INSERT INTO milestones (user_id, project_id, title, due_date) VALUES ($1, $2, $3, current_date + 7) RETURNING id::text`, uid, project, mark)
	one("project_papers", `INSERT INTO project_papers (user_id, project_id, paper_id) VALUES ($1, $2, $3) RETURNING project_id::text`, uid, project, paper)
	one("daily_log", `INSERT INTO daily_log (user_id, log_date, intent) VALUES ($1, current_date, $2) RETURNING user_id::text`, uid, mark)
	deck := one("decks", `INSERT INTO decks (user_id, name) VALUES ($1, $2) RETURNING id::text`, uid, mark)
	card := one("cards", `INSERT INTO cards (user_id, deck_id, paper_id, chunk_id, front, back) VALUES ($1, $2, $3, $4, $5, 'back') RETURNING id::text`, uid, deck, paper, chunk, mark)
	one("review_logs", `
		INSERT INTO review_logs (user_id, card_id, rating, reviewed_at, state_before, state_after, stability_after, difficulty_after, elapsed_days, scheduled_days, client_id)
		VALUES ($1, $2, 3, now(), 0, 1, 2.3, 5.1, 0, 1, $3) RETURNING id::text`, uid, card, mark)
	one("pulse_source_health", `INSERT INTO pulse_source_health (user_id, source, last_error) VALUES ($1, 'arxiv', $2) RETURNING user_id::text`, uid, mark)
	one("pulse_models", `INSERT INTO pulse_models (user_id, blob, hmac, sample_count) VALUES ($1, convert_to($2, 'UTF8'), sha256('x'), 30) RETURNING id::text`, uid, mark)
	one("pulse_topics", `INSERT INTO pulse_topics (user_id, name, query) VALUES ($1, $2, $2) RETURNING id::text`, uid, mark)
	one("pulse_authors", `INSERT INTO pulse_authors (user_id, name) VALUES ($1, $2) RETURNING id::text`, uid, mark)
	pulseDeck := one("pulse_decks", `INSERT INTO pulse_decks (user_id, deck_date, card_count, stats) VALUES ($1, current_date, 1, jsonb_build_object('quiet', $2::text)) RETURNING id::text`, uid, mark)
	one("pulse_cards", `INSERT INTO pulse_cards (deck_id, user_id, paper_id, rank, score, why) VALUES ($1, $2, $3, 1, 0.9, $4) RETURNING id::text`, pulseDeck, uid, paper, mark)
	one("pulse_runs", `INSERT INTO pulse_runs (user_id, detail) VALUES ($1, jsonb_build_object('mark', $2::text)) RETURNING id::text`, uid, mark)
	one("refmanager_links", `INSERT INTO refmanager_links (user_id, library_id, item_key, paper_id, origin, brought) VALUES ($1, 'users/1', $2, $3, 'pull', true) RETURNING item_key`, uid, mark, paper)
	one("refmanager_sync_state", `INSERT INTO refmanager_sync_state (user_id, library_id, version, last_error) VALUES ($1, 'users/1', 7, $2) RETURNING library_id`, uid, mark)
	one("system_events", `INSERT INTO system_events (user_id, level, category, source, message) VALUES ($1, 'info', 'job', 'test', $2) RETURNING id::text`, uid, mark)
	one("messenger_pairing_tokens", `INSERT INTO messenger_pairing_tokens (token_hash, user_id, expires_at) VALUES (sha256(convert_to($2, 'UTF8')), $1, now() + interval '15 minutes') RETURNING user_id::text`, uid, mark)
	one("messenger_user_pairings", `INSERT INTO messenger_user_pairings (user_id, chat_id) VALUES ($1, $2) RETURNING user_id::text`, uid, mark)
	one("messenger_deliveries", `INSERT INTO messenger_deliveries (user_id, kind, local_date, ref, chat_id, sent_at) VALUES ($1, 'briefing', current_date, $2, $2, now()) RETURNING user_id::text`, uid, mark)
	one("magic_link_tokens", `INSERT INTO magic_link_tokens (token_hash, user_id, expires_at) VALUES (sha256(convert_to($2, 'UTF8')), $1, now() + interval '15 minutes') RETURNING user_id::text`, uid, mark)

	tn.cookie = b.insertSession(t, uid, timeIn(24))
	tn.ids["user_sessions"] = tn.cookie
	return tn
}

// TestEveryPerUserTableIsSeeded keeps seedTenant honest: a new table with a user_id
// column must get a row there, so the cross-tenant test covers it.
func TestEveryPerUserTableIsSeeded(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	tn := seedTenant(t, b, "ann@example.org")
	rows, err := b.pool.Query(context.Background(), `
		SELECT table_name FROM information_schema.columns
		 WHERE table_schema = 'public' AND column_name = 'user_id' AND table_name <> 'audit_log'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	sort.Strings(tables)
	for _, table := range tables {
		require.Contains(t, tn.ids, table, "seedTenant must put a row into %s", table)
	}
}

// tenancyCheck is how one route is tested across tenants: Bob calls it with Alice's
// ids and must get 404 (or only his own rows), and Alice's rows must survive.
type tenancyCheck func(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant)

// tenancyKind says how a route relates to per-user data.
type tenancyKind int

const (
	// noUserData routes touch no per-user rows (health, sign-in, the description).
	noUserData tenancyKind = iota + 1
	// adminOnly routes refuse a non-admin user (403).
	adminOnly
	// perUser routes act on the caller's own rows: the check runs.
	perUser
)

type tenancyCase struct {
	kind  tenancyKind
	check tenancyCheck
}

// tenancyCases lists every route of the route table. A route missing here fails
// TestCrossTenantIsolation: each new route joins the test with its own check.
var tenancyCases = map[string]tenancyCase{
	"GET /healthz":                 {kind: noUserData},
	"GET /readyz":                  {kind: noUserData},
	"GET /api/openapi.json":        {kind: noUserData},
	"GET /metrics":                 {kind: noUserData},
	"POST /infra-events":           {kind: noUserData},
	"POST /api/auth/magic-link":    {kind: noUserData},
	"GET /api/auth/verify":         {kind: noUserData},
	"POST /api/auth/api-key-login": {kind: noUserData},
	"GET /api/onboarding":          {kind: noUserData},
	"PATCH /api/me": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPatch, path: "/api/me", cookie: bob.cookie, body: map[string]any{"display_name": "Bob B", "timezone": "Europe/Berlin"}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), bob.user.String(), "Bob changes his own profile")
		require.Equal(t, before, aliceSnapshot(t, b, alice))
		var tz string
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT timezone FROM users WHERE id = $1`, alice.user).Scan(&tz))
		require.Equal(t, "UTC", tz, "Alice's account is untouched")
	}},
	"POST /api/onboarding/admin":              {kind: noUserData},
	"GET /api/admin/users":                    {kind: adminOnly},
	"POST /api/admin/users":                   {kind: adminOnly},
	"PATCH /api/admin/users/{id}/role":        {kind: adminOnly},
	"DELETE /api/admin/users/{id}":            {kind: adminOnly},
	"POST /api/admin/users/{id}/send-link":    {kind: adminOnly},
	"GET /api/admin/audit-log":                {kind: adminOnly},
	"GET /api/admin/plugins":                  {kind: adminOnly},
	"PUT /api/admin/llm/roles/{role}":         {kind: adminOnly},
	"GET /api/admin/llm":                      {kind: adminOnly},
	"PUT /api/admin/llm/providers/{provider}": {kind: adminOnly},
	"PATCH /api/admin/plugins/{name}":         {kind: adminOnly},
	"GET /api/admin/messenger":                {kind: adminOnly},
	"PUT /api/admin/messenger":                {kind: adminOnly},
	"GET /api/admin/zotero":                   {kind: adminOnly},
	"PUT /api/admin/zotero":                   {kind: adminOnly},
	"POST /api/admin/zotero/sync":             {kind: adminOnly},

	// The backups panel: operations, an admin's session only (the ops key is
	// refused in host/internal/backup's tests).
	"GET /api/admin/backups":          {kind: adminOnly},
	"GET /api/admin/backups/status":   {kind: adminOnly},
	"POST /api/admin/backups/now":     {kind: adminOnly},
	"POST /api/admin/backups/restore": {kind: adminOnly},

	// Testing an endpoint makes the host connect out: admins only (llmgw.Probe).
	"POST /api/admin/llm/providers/{provider}/test": {kind: adminOnly},
	"GET /api/search": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		// Alice searched before; her per-source health is hers alone.
		rec := b.do(t, req{method: http.MethodGet, path: "/api/search?q=" + url.QueryEscape("attention transformers"), cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		var errText string
		require.NoError(t, b.pool.QueryRow(context.Background(),
			`SELECT last_error FROM pulse_source_health WHERE user_id = $1 AND source = 'arxiv'`, alice.user).Scan(&errText))
		require.Equal(t, alice.markers[2], errText, "Bob's search leaves Alice's source health alone")
	}},

	// Messenger pairing: Bob sees, replaces and removes only his own pairing
	// and tokens.
	"GET /api/me/messenger": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/me/messenger", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), bob.markers[2], "Bob sees his own chat")
	}},
	"POST /api/me/messenger/pairing-token": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := alicePairingRows(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/me/messenger/pairing-token", cookie: bob.cookie})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, alicePairingRows(t, b, alice), "Alice's token and pairing are untouched")
	}},
	"DELETE /api/me/messenger": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := alicePairingRows(t, b, alice)
		for range 2 {
			rec := b.do(t, req{method: http.MethodDelete, path: "/api/me/messenger", cookie: bob.cookie})
			require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
		}
		require.Equal(t, before, alicePairingRows(t, b, alice), "Alice's token and pairing are untouched")
		var n int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM messenger_user_pairings WHERE user_id = $1`, bob.user).Scan(&n))
		require.Zero(t, n, "Bob's own chat is unpaired")
	}},
	"GET /api/me": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/me", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), bob.email)
	}},
	"POST /api/auth/logout": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		extra := b.insertSession(t, bob.user, timeIn(24))
		rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/logout", cookie: extra})
		require.Equal(t, http.StatusNoContent, rec.Code)
		rec = b.do(t, req{method: http.MethodGet, path: "/api/me", cookie: alice.cookie})
		require.Equal(t, http.StatusOK, rec.Code, "Bob signing out leaves Alice signed in")
	}},
	"GET /api/papers": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		for _, scope := range []string{"library", "corpus"} {
			for _, view := range []string{"inbox", "library", "reading_list", "reading", "done", "starred", "trash", "active", "kept", "all_non_trash"} {
				rec := b.do(t, req{method: http.MethodGet, path: "/api/papers?scope=" + scope + "&view=" + view, cookie: bob.cookie})
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				requireNoLeak(t, rec.Body.String(), alice)
			}
		}
	}},
	"GET /api/papers/{id}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/papers/" + alice.ids["user_library"], cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code, "Alice's private paper does not exist for Bob")
		requireNoLeak(t, rec.Body.String(), alice)
	}},
	"PATCH /api/papers/{id}/state": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPatch, path: "/api/papers/" + alice.ids["user_library"] + "/state", cookie: bob.cookie,
			body: map[string]any{"state": "trash", "rating": 1}})
		require.Equal(t, http.StatusNotFound, rec.Code)
		var state string
		var rating int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT state, rating FROM paper_user_state WHERE user_id = $1`, alice.user).Scan(&state, &rating))
		require.Equal(t, "reading", state)
		require.Equal(t, 4, rating)
	}},
	"POST /api/library": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: bob.cookie, body: map[string]any{"paper_id": alice.ids["user_library"]}})
		require.Equal(t, http.StatusNotFound, rec.Code, "Bob cannot pull Alice's private paper into his library")
		var n int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM user_library WHERE user_id = $1 AND paper_id = $2`, bob.user, alice.ids["user_library"]).Scan(&n))
		require.Zero(t, n)
	}},
	"DELETE /api/library/{paper_id}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodDelete, path: "/api/library/" + alice.ids["user_library"], cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code)
		var n int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM user_library WHERE user_id = $1`, alice.user).Scan(&n))
		require.Equal(t, 1, n, "Alice's library is intact")
	}},
	"POST /api/library/import": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		_, err := b.pool.Exec(context.Background(), `UPDATE papers SET doi = '10.5555/alice.private' WHERE id = $1`, alice.ids["user_library"])
		require.NoError(t, err)
		bib := "@article{x, title = {Bob's copy}, doi = {10.5555/alice.private}}"
		rec := b.do(t, req{method: http.MethodPost, path: "/api/library/import?format=bibtex", cookie: bob.cookie, body: bib})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		var linked int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM user_library WHERE user_id = $1 AND paper_id = $2`,
			bob.user, alice.ids["user_library"]).Scan(&linked))
		require.Zero(t, linked, "a DOI in Bob's file never links him onto Alice's private paper")
	}},
	"GET /api/library/export": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		for _, format := range []string{"bibtex", "ris", "csljson"} {
			rec := b.do(t, req{method: http.MethodGet, path: "/api/library/export?format=" + format, cookie: bob.cookie})
			require.Equal(t, http.StatusOK, rec.Code)
			requireNoLeak(t, rec.Body.String(), alice)
			require.Contains(t, rec.Body.String(), bob.markers[2], "Bob's own paper is there")
			// Naming Alice's private paper, or filtering for her words, finds nothing of hers.
			sel := "&id=" + alice.ids["user_library"] + "&id=" + bob.ids["user_library"]
			rec = b.do(t, req{method: http.MethodGet, path: "/api/library/export?format=" + format + sel, cookie: bob.cookie})
			require.Equal(t, http.StatusOK, rec.Code)
			requireNoLeak(t, rec.Body.String(), alice)
			require.Contains(t, rec.Body.String(), bob.markers[2], "Bob's own paper is there")
			rec = b.do(t, req{method: http.MethodGet, path: "/api/library/export?scope=corpus&q=" + url.QueryEscape(alice.markers[2]) + "&format=" + format, cookie: bob.cookie})
			require.Equal(t, http.StatusOK, rec.Code)
			requireNoLeak(t, rec.Body.String(), alice)
		}
	}},
	"GET /api/projects": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/projects", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), bob.markers[2])
	}},
	"POST /api/projects": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/projects", cookie: bob.cookie, body: map[string]any{"name": "Bob's new"}})
		require.Equal(t, http.StatusCreated, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
		requireAliceRows(t, b, alice)
	}},
	"GET /api/projects/{id}":                      {kind: perUser, check: foreignID("projects", nil)},
	"PATCH /api/projects/{id}":                    {kind: perUser, check: foreignID("projects", map[string]any{"name": "stolen", "status": "archived"})},
	"DELETE /api/projects/{id}":                   {kind: perUser, check: foreignID("projects", nil)},
	"GET /api/projects/{id}/tasks":                {kind: perUser, check: foreignID("projects", nil)},
	"POST /api/projects/{id}/tasks":               {kind: perUser, check: foreignID("projects", map[string]any{"title": "planted"})},
	"GET /api/tasks/{id}":                         {kind: perUser, check: foreignID("tasks", nil)},
	"PATCH /api/tasks/{id}":                       {kind: perUser, check: foreignID("tasks", map[string]any{"status": "done"})},
	"DELETE /api/tasks/{id}":                      {kind: perUser, check: foreignID("tasks", nil)},
	"GET /api/projects/{id}/milestones":           {kind: perUser, check: foreignID("projects", nil)},
	"POST /api/projects/{id}/milestones":          {kind: perUser, check: foreignID("projects", map[string]any{"title": "planted", "due_date": "2030-01-01"})},
	"GET /api/milestones/{id}":                    {kind: perUser, check: foreignID("milestones", nil)},
	"PATCH /api/milestones/{id}":                  {kind: perUser, check: foreignID("milestones", map[string]any{"completed": true})},
	"DELETE /api/milestones/{id}":                 {kind: perUser, check: foreignID("milestones", nil)},
	"GET /api/projects/{id}/papers":               {kind: perUser, check: foreignID("projects", nil)},
	"POST /api/projects/{id}/papers":              {kind: perUser, check: foreignID("projects", map[string]any{"paper_id": "@bobpaper"})},
	"DELETE /api/projects/{id}/papers/{paper_id}": {kind: perUser, check: foreignID("projects", nil)},
	"POST /api/jobs": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		// Bob may retrain his own classifier; the job is his, and Alice cannot
		// even see it.
		rec := b.do(t, req{method: http.MethodPost, path: "/api/jobs", cookie: bob.cookie, body: map[string]any{"kind": "pulse.train_classifier"}})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		var env struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
		rec = b.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/jobs/%d", env.ID), cookie: alice.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code)
	}},
	"GET /api/jobs": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		job := aliceJob(t, b, alice)
		rec := b.do(t, req{method: http.MethodGet, path: "/api/jobs", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NotContains(t, rec.Body.String(), fmt.Sprintf(`"id":%d`, job), "Bob's list never shows Alice's job")
	}},
	"GET /api/jobs/{id}":         {kind: perUser, check: foreignJob},
	"POST /api/jobs/{id}/cancel": {kind: perUser, check: foreignJob},
	"GET /api/jobs/{id}/stream":  {kind: perUser, check: foreignJob},
	"GET /api/decks":             {kind: perUser, check: listNoLeak("/api/decks")},

	// Pulse: Bob's deck, thumbs, settings and follows are his; Alice's deck
	// paper is not in his deck, and her topics and authors are not his to drop.
	"GET /api/pulse/today":              {kind: perUser, check: listNoLeak("/api/pulse/today")},
	"GET /api/pulse/weights":            {kind: perUser, check: listNoLeak("/api/pulse/weights")},
	"GET /api/pulse/source-health":      {kind: perUser, check: listNoLeak("/api/pulse/source-health")},
	"GET /api/pulse/topics":             {kind: perUser, check: listNoLeak("/api/pulse/topics")},
	"GET /api/pulse/authors":            {kind: perUser, check: listNoLeak("/api/pulse/authors")},
	"GET /api/recommendations":          {kind: perUser, check: listNoLeak("/api/recommendations")},
	"GET /api/digest/weekly":            {kind: perUser, check: listNoLeak("/api/digest/weekly?days=30")},
	"GET /api/pulse/explain/{paper_id}": {kind: perUser, check: foreignID("pulse_cards", nil)},
	"DELETE /api/pulse/topics/{id}":     {kind: perUser, check: foreignID("pulse_topics", nil)},
	"DELETE /api/pulse/authors/{id}":    {kind: perUser, check: foreignID("pulse_authors", nil)},
	// The cold start: Bob's batch never offers Alice's private paper, even when
	// his words match it; he cannot rate it; his discovery leaves her rows alone.
	"GET /api/pulse/onboarding": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/topics", cookie: bob.cookie, body: map[string]any{"name": "bob words", "query": alice.markers[2]}})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		rec = b.do(t, req{method: http.MethodGet, path: "/api/pulse/onboarding", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), `"candidates":[]`)
	}},
	"POST /api/pulse/onboarding/rate": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		for _, rating := range []string{"up", "down", "skip"} {
			before := aliceSnapshot(t, b, alice)
			rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/rate", cookie: bob.cookie,
				body: map[string]any{"paper_id": alice.ids["user_library"], "rating": rating}})
			require.Equal(t, http.StatusNotFound, rec.Code, "%s on Alice's private paper: %s", rating, rec.Body.String())
			requireNoLeak(t, rec.Body.String(), alice)
			require.Equal(t, before, aliceSnapshot(t, b, alice))
		}
		var n int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM pulse_cards WHERE paper_id = $1 AND user_id = $2`,
			alice.ids["user_library"], bob.user).Scan(&n))
		require.Zero(t, n, "nor does Bob keep a card of it")
	}},
	"POST /api/pulse/onboarding/discover": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/onboarding/discover", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
		var errText string
		require.NoError(t, b.pool.QueryRow(context.Background(),
			`SELECT last_error FROM pulse_source_health WHERE user_id = $1 AND source = 'arxiv'`, alice.user).Scan(&errText))
		require.Equal(t, alice.markers[2], errText, "Bob's discovery leaves Alice's source health alone")
	}},
	"POST /api/pulse/rate": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		for _, action := range []string{"open", "save", "up", "down", "dismiss"} {
			before := aliceSnapshot(t, b, alice)
			rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/rate", cookie: bob.cookie,
				body: map[string]any{"paper_id": alice.ids["user_library"], "action": action}})
			require.Equal(t, http.StatusNotFound, rec.Code, "%s on a paper of Alice's deck: %s", action, rec.Body.String())
			requireNoLeak(t, rec.Body.String(), alice)
			require.Equal(t, before, aliceSnapshot(t, b, alice))
		}
	}},
	"PUT /api/pulse/weights": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPut, path: "/api/pulse/weights", cookie: bob.cookie, body: map[string]any{
			"embedding": 1, "topic": 1, "llm_relevance": 0, "llm_novelty": 0, "author_bonus": 0, "recency": 1}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, before, aliceSnapshot(t, b, alice), "Bob's weights are his")
	}},
	"POST /api/pulse/topics": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		// The same name as Alice's topic: still Bob's own row.
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/topics", cookie: bob.cookie, body: map[string]any{"name": alice.markers[2], "query": "bob"}})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/pulse/authors": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/authors", cookie: bob.cookie, body: map[string]any{"name": alice.markers[2]}})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/pulse/generate": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/pulse/generate", cookie: bob.cookie})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
		rec = b.do(t, req{method: http.MethodPost, path: "/api/pulse/generate", cookie: bob.cookie})
		require.Equal(t, http.StatusConflict, rec.Code, "one deck in the making at a time: %s", rec.Body.String())
		rec = b.do(t, req{method: http.MethodPost, path: "/api/pulse/generate", cookie: alice.cookie})
		require.Equal(t, http.StatusAccepted, rec.Code, "Bob's job does not block Alice's: %s", rec.Body.String())
	}},
	"GET /api/integrations/zotero": {kind: perUser, check: listNoLeak("/api/integrations/zotero")},
	"POST /api/integrations/zotero/test": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/test", cookie: bob.cookie})
		require.Equal(t, http.StatusConflict, rec.Code, "Bob has no key of his own; Alice's is never used: %s", rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/integrations/zotero/sync": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/integrations/zotero/sync", cookie: bob.cookie})
		require.Equal(t, http.StatusConflict, rec.Code, "Bob has no key of his own: %s", rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/decks": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/decks", cookie: bob.cookie, body: map[string]any{"name": alice.markers[2]}})
		require.Equal(t, http.StatusCreated, rec.Code, "deck names are unique per user, not across users")
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"GET /api/cards":             {kind: perUser, check: listNoLeak("/api/cards")},
	"GET /api/decks/{id}/export": {kind: perUser, check: foreignID("decks", nil)},
	"POST /api/decks/{id}/import": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/decks/" + alice.ids["decks"] + "/import", cookie: bob.cookie, body: "front,back\nplanted,card\n"})
		require.Equal(t, http.StatusNotFound, rec.Code)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"GET /api/reviews/due": {kind: perUser, check: listNoLeak("/api/reviews/due")},
	"GET /api/analytics": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/analytics", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), `"total_reviews":1`, "only Bob's own review counts")
	}},
	"POST /api/cards": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: bob.cookie,
			body: map[string]any{"deck_id": alice.ids["decks"], "front": "planted"}})
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "Alice's deck is not Bob's to fill")
		rec = b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: bob.cookie,
			body: map[string]any{"deck_id": bob.ids["decks"], "front": "cites her paper", "paper_id": alice.ids["user_library"]}})
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "nor her private paper his to cite")
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"GET /api/cards/{id}":    {kind: perUser, check: foreignID("cards", nil)},
	"PATCH /api/cards/{id}":  {kind: perUser, check: foreignID("cards", map[string]any{"front": "stolen", "status": "suspended"})},
	"DELETE /api/cards/{id}": {kind: perUser, check: foreignID("cards", nil)},
	"POST /api/reviews": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/reviews", cookie: bob.cookie,
			body: map[string]any{"card_id": alice.ids["cards"], "rating": 1}})
		require.Equal(t, http.StatusNotFound, rec.Code)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/reviews/{id}/undo": {kind: perUser, check: foreignID("review_logs", nil)},
	"POST /api/reviews/batch": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/reviews/batch", cookie: bob.cookie,
			body: map[string]any{"reviews": []map[string]any{{"card_id": alice.ids["cards"], "rating": 1, "client_id": "x1",
				"reviewed_at": time.Now().Add(-time.Minute).Format(time.RFC3339)}}}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"status":"rejected"`)
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/papers/upload": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/papers/upload", cookie: bob.cookie,
			body: upload{name: "bob.pdf", content: []byte("%PDF-1.4\n% a tiny stand-in; the queue is not started here\n")}})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"GET /api/papers/{id}/summary":     {kind: perUser, check: foreignID("user_library", nil)},
	"POST /api/papers/{id}/summary":    {kind: perUser, check: foreignID("user_library", map[string]any{"force": true})},
	"GET /api/papers/{id}/extractions": {kind: perUser, check: foreignID("user_library", nil)},
	"POST /api/papers/{id}/extract":    {kind: perUser, check: foreignID("user_library", nil)},
	"POST /api/rag/ask": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: bob.cookie,
			body: map[string]any{"question": "What does the text say?", "paper_ids": []string{alice.ids["user_library"]}}})
		require.Equal(t, http.StatusNotFound, rec.Code, "naming Alice's paper grants nothing")
		requireNoLeak(t, rec.Body.String(), alice)
		rec = b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: bob.cookie,
			body: map[string]any{"question": "What does the text say?", "scope": "corpus"}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"POST /api/papers/{id}/enrich": {kind: perUser, check: func(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant) {
		foreignID("user_library", nil)(t, b, rt, alice, bob)
		rec := b.do(t, req{method: http.MethodPost, path: "/api/papers/" + bob.ids["user_library"] + "/enrich", cookie: bob.cookie})
		require.Equal(t, http.StatusAccepted, rec.Code, "Bob updates his own paper: %s", rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
	}},
	"POST /api/papers/{id}/ingest": {kind: perUser, check: foreignID("user_library", map[string]any{"url": "https://example.org/paper.pdf"})},
	"GET /api/papers/{id}/pdf": {kind: perUser, check: func(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/papers/upload", cookie: alice.cookie,
			body: upload{name: "alice.pdf", content: []byte("%PDF-1.4\n% " + alice.markers[2] + "\n")}})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		var up struct {
			PaperID string `json:"paper_id"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &up))
		rec = b.do(t, req{method: http.MethodGet, path: "/api/papers/" + up.PaperID + "/pdf", cookie: alice.cookie})
		require.Equal(t, http.StatusOK, rec.Code, "Alice reads her own upload's PDF")
		rec = b.do(t, req{method: http.MethodGet, path: "/api/papers/" + up.PaperID + "/pdf", cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code, "Alice's private upload's PDF does not exist for Bob")
		requireNoLeak(t, rec.Body.String(), alice)
		foreignID("user_library", nil)(t, b, rt, alice, bob)
	}},
	"GET /api/papers/{id}/passages": {kind: perUser, check: func(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/papers/" + alice.ids["user_library"] + "/passages", cookie: alice.cookie})
		require.Equal(t, http.StatusOK, rec.Code, "Alice reads her own paper's outline")
		require.Contains(t, rec.Body.String(), `"chunk_id"`)
		foreignID("user_library", nil)(t, b, rt, alice, bob)
	}},
	"GET /api/papers/{id}/passages/{chunk_id}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		chunkOf := func(tn *tenant) string {
			var id string
			require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT id::text FROM paper_chunks WHERE paper_id = $1`, tn.ids["user_library"]).Scan(&id))
			return id
		}
		alicePassage := "/api/papers/" + alice.ids["user_library"] + "/passages/" + chunkOf(alice)
		rec := b.do(t, req{method: http.MethodGet, path: alicePassage, cookie: alice.cookie})
		require.Equal(t, http.StatusOK, rec.Code, "Alice reads her own passage")
		before := aliceSnapshot(t, b, alice)
		rec = b.do(t, req{method: http.MethodGet, path: alicePassage, cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code, "Alice's passage does not exist for Bob")
		requireNoLeak(t, rec.Body.String(), alice)
		rec = b.do(t, req{method: http.MethodGet, path: "/api/papers/" + bob.ids["user_library"] + "/passages/" + chunkOf(alice), cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code, "naming his own paper with Alice's passage grants nothing")
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice))
	}},
	"GET /api/search/chunks": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/search/chunks?q=text", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Contains(t, rec.Body.String(), bob.ids["user_library"], "Bob finds his own paper's passage")
		rec = b.do(t, req{method: http.MethodGet, path: "/api/search/chunks?q=text&paper_ids=" + alice.ids["user_library"], cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code)
		require.Contains(t, rec.Body.String(), `"items":[]`, "naming Alice's paper grants nothing")
	}},
	"GET /api/settings/config": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/settings/config", cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
	}},
	"GET /api/settings/config/{key}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		_, err := b.pool.Exec(context.Background(), `DELETE FROM user_config WHERE user_id = $1 AND key = 'notes.marker'`, bob.user)
		require.NoError(t, err)
		rec := b.do(t, req{method: http.MethodGet, path: "/api/settings/config/notes.marker", cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code, "Alice's key is not found for Bob")
		requireNoLeak(t, rec.Body.String(), alice)
	}},
	"PUT /api/settings/config/{key}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodPut, path: "/api/settings/config/notes.marker", cookie: bob.cookie, body: map[string]any{"value": "bob's"}})
		require.Equal(t, http.StatusOK, rec.Code)
		requireNoLeak(t, rec.Body.String(), alice)
		requireAliceConfigIntact(t, b, alice)
	}},
	"DELETE /api/settings/config/{key}": {kind: perUser, check: func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		b.do(t, req{method: http.MethodDelete, path: "/api/settings/config/notes.marker", cookie: bob.cookie})
		rec := b.do(t, req{method: http.MethodDelete, path: "/api/settings/config/notes.marker", cookie: bob.cookie})
		require.Equal(t, http.StatusNotFound, rec.Code)
		requireAliceConfigIntact(t, b, alice)
	}},
}

func requireNoLeak(t *testing.T, body string, alice *tenant) {
	t.Helper()
	for _, m := range alice.markers {
		require.NotContains(t, body, m, "Bob's answer shows Alice's data")
	}
}

func requireAliceConfigIntact(t *testing.T, b *testBundle, alice *tenant) {
	t.Helper()
	var v string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT value #>> '{}' FROM user_config WHERE user_id = $1 AND key = 'notes.marker'`, alice.user).Scan(&v))
	require.Equal(t, alice.markers[2], v, "Alice's row survives Bob's call")
}

// TestCrossTenantIsolation runs, for every route of the route table, the check its
// tenancy case names, with two users who each have a row in every per-user table.
func TestCrossTenantIsolation(t *testing.T) {
	t.Parallel()
	for _, rt := range setup(t, nil).app.Routes {
		key := rt.Method + " " + rt.Pattern
		tc, ok := tenancyCases[key]
		require.True(t, ok, "route %s is missing from tenancyCases: add its cross-tenant check", key)
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			switch tc.kind {
			case noUserData:
				require.Contains(t, []auth.Resolver{auth.Public, auth.OpsKey, auth.InfraKey}, rt.Resolver,
					"a route marked as holding no user data must not need a user")
			case adminOnly:
				require.Equal(t, auth.AdminSession, rt.Resolver)
				b := setup(t, nil)
				alice, bob := seedTenant(t, b, "alice@example.org"), seedTenant(t, b, "bob@example.org")
				path := strings.ReplaceAll(rt.Pattern, "{id}", alice.user.String())
				rec := b.do(t, req{method: rt.Method, path: path, cookie: bob.cookie, body: map[string]any{}})
				require.Equal(t, http.StatusForbidden, rec.Code, "a non-admin is refused")
				requireNoLeak(t, rec.Body.String(), alice)
			case perUser:
				require.NotContains(t, []auth.Resolver{auth.Public, auth.OpsKey, auth.InfraKey}, rt.Resolver)
				b := setup(t, nil)
				alice, bob := seedTenant(t, b, "alice@example.org"), seedTenant(t, b, "bob@example.org")
				tc.check(t, b, rt, alice, bob)
			default:
				t.Fatalf("route %s has no tenancy kind", key)
			}
		})
	}
}

func timeIn(hours int) time.Time { return time.Now().Add(time.Duration(hours) * time.Hour) }

// foreignID is the check of a route addressed by one of Alice's ids: Bob gets 404,
// learns nothing, and Alice's rows stay exactly as they were. In body, "@bobpaper"
// stands for a paper of Bob's own.
func foreignID(table string, body map[string]any) tenancyCheck {
	return func(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant) {
		path := strings.ReplaceAll(rt.Pattern, "{id}", alice.ids[table])
		path = strings.ReplaceAll(path, "{paper_id}", alice.ids["user_library"])
		var payload any
		if body != nil {
			m := map[string]any{}
			for k, v := range body {
				if v == "@bobpaper" {
					v = bob.ids["user_library"]
				}
				m[k] = v
			}
			payload = m
		}
		before := aliceSnapshot(t, b, alice)
		rec := b.do(t, req{method: rt.Method, path: path, cookie: bob.cookie, body: payload})
		require.Equal(t, http.StatusNotFound, rec.Code, "%s %s with Alice's id: %s", rt.Method, path, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
		require.Equal(t, before, aliceSnapshot(t, b, alice), "Alice's rows are untouched")
	}
}

// alicePairingRows renders Alice's pairing and pairing tokens as text.
func alicePairingRows(t *testing.T, b *testBundle, alice *tenant) string {
	t.Helper()
	var out string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT coalesce((SELECT string_agg(t::text, ';') FROM messenger_pairing_tokens t WHERE user_id = $1), '') || ' | ' ||
		       coalesce((SELECT string_agg(p::text, ';') FROM messenger_user_pairings p WHERE user_id = $1), '')`, alice.user).Scan(&out))
	require.Contains(t, out, alice.markers[2], "Alice is paired")
	return out
}

// aliceSnapshot renders every per-user row of Alice's as text.
func aliceSnapshot(t *testing.T, b *testBundle, alice *tenant) string {
	t.Helper()
	var out strings.Builder
	for _, table := range []string{"projects", "tasks", "milestones", "project_papers", "user_library", "paper_user_state", "user_config",
		"decks", "cards", "review_logs", "daily_log", "pulse_topics", "pulse_authors", "pulse_decks", "pulse_cards", "recommendation_feedback",
		"refmanager_links", "refmanager_sync_state"} {
		rows, err := b.pool.Query(context.Background(),
			`SELECT t::text FROM `+table+` t WHERE user_id = $1 ORDER BY 1`, alice.user)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		out.WriteString(table + ": " + strings.Join(lines, "; ") + "\n")
	}
	return out.String()
}

func requireAliceRows(t *testing.T, b *testBundle, alice *tenant) {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM projects WHERE user_id = $1`, alice.user).Scan(&n))
	require.Equal(t, 1, n)
}

// aliceJob queues a job owned by Alice and returns its id.
func aliceJob(t *testing.T, b *testBundle, alice *tenant) int64 {
	t.Helper()
	env, err := b.jobs.Enqueue(context.Background(), alice.user, jobs.TrainClassifierArgs{})
	require.NoError(t, err)
	return env.ID
}

// foreignJob: Bob addresses Alice's job by id and gets 404; the job stays queued.
func foreignJob(t *testing.T, b *testBundle, rt httpapi.Route, alice, bob *tenant) {
	job := aliceJob(t, b, alice)
	path := strings.ReplaceAll(rt.Pattern, "{id}", fmt.Sprint(job))
	rec := b.do(t, req{method: rt.Method, path: path, cookie: bob.cookie})
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	rec = b.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/jobs/%d", job), cookie: alice.cookie})
	require.Equal(t, http.StatusOK, rec.Code, "Alice still sees her job")
	require.Contains(t, rec.Body.String(), `"state":"queued"`, "and Bob did not cancel it")
}

// listNoLeak: Bob lists and sees none of Alice's rows.
func listNoLeak(path string) tenancyCheck {
	return func(t *testing.T, b *testBundle, _ httpapi.Route, alice, bob *tenant) {
		rec := b.do(t, req{method: http.MethodGet, path: path, cookie: bob.cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireNoLeak(t, rec.Body.String(), alice)
	}
}
