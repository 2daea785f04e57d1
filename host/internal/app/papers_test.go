package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"sort"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
	"github.com/lectern-research/lectern/host/internal/papers"
)

type corpusFixture struct {
	b        *testBundle
	ann, bob string // session cookies
	annID    uuid.UUID
	bobID    uuid.UUID
	ids      map[string]uuid.UUID // title -> paper id
}

// newCorpus builds a small corpus: six public papers and Ann's private upload, with
// Ann's and Bob's libraries and states in every state the views tell apart.
func newCorpus(t *testing.T) *corpusFixture {
	t.Helper()
	b := setup(t, nil)
	ctx := context.Background()
	ann, bob := b.user(t, "ann@example.org", "user"), b.user(t, "bob@example.org", "user")
	f := &corpusFixture{b: b, annID: ann.ID, bobID: bob.ID, ids: map[string]uuid.UUID{}}
	paper := func(title string, discoveredBy any, visibility string) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, b.pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, discovered_by, visibility) VALUES ($1, 'arxiv', $2, $3) RETURNING id`,
			title, discoveredBy, visibility).Scan(&id))
		f.ids[title] = id
		return id
	}
	for _, title := range []string{"P1", "P2", "P3", "P4", "P5", "P6"} {
		paper(title, nil, "public")
	}
	paper("U", ann.ID, "private")

	lib := func(user uuid.UUID, title string) {
		require.NoError(t, papers.AddToLibraryTx(ctx, b.pool, user, f.ids[title], "manual_save"))
	}
	state := func(user uuid.UUID, title, st string, starred bool) {
		_, err := b.pool.Exec(ctx, `INSERT INTO paper_user_state (user_id, paper_id, state, starred) VALUES ($1, $2, $3, $4)`,
			user, f.ids[title], st, starred)
		require.NoError(t, err)
	}
	for _, title := range []string{"P1", "P2", "P3", "P4", "P5", "U"} {
		lib(ann.ID, title)
	}
	state(ann.ID, "P1", "to_read", false)
	state(ann.ID, "P2", "reading", false)
	state(ann.ID, "P3", "done", true)
	state(ann.ID, "P4", "trash", true)
	lib(bob.ID, "P1")
	state(bob.ID, "P1", "done", false)

	f.ann = b.insertSession(t, ann.ID, timeIn(24))
	f.bob = b.insertSession(t, bob.ID, timeIn(24))
	return f
}

type feedItem struct {
	ID      uuid.UUID `json:"id"`
	Title   string    `json:"title"`
	Overlay struct {
		InLibrary bool   `json:"in_library"`
		State     string `json:"state"`
		Starred   bool   `json:"starred"`
		Rating    *int   `json:"rating"`
	} `json:"overlay"`
}

// feed follows every page of a view and returns the titles, sorted.
func (f *corpusFixture) feed(t *testing.T, cookie, scope, view string) ([]string, map[string]feedItem) {
	t.Helper()
	var titles []string
	items := map[string]feedItem{}
	cursor := ""
	for range 50 {
		q := url.Values{"scope": {scope}, "view": {view}, "limit": {"2"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		rec := f.b.do(t, req{method: http.MethodGet, path: "/api/papers?" + q.Encode(), cookie: cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var page struct {
			Items      []feedItem `json:"items"`
			NextCursor string     `json:"next_cursor"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		for _, it := range page.Items {
			require.NotContains(t, items, it.Title, "no paper twice across pages")
			items[it.Title] = it
			titles = append(titles, it.Title)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	sort.Strings(titles)
	if titles == nil {
		titles = []string{}
	}
	return titles, items
}

func TestFeedViews(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	library := map[string][]string{
		"inbox":         {"P5", "U"},
		"library":       {"P1", "P2", "P3"},
		"reading_list":  {"P1"},
		"reading":       {"P2"},
		"done":          {"P3"},
		"starred":       {"P3"},
		"trash":         {"P4"},
		"active":        {"P1", "P2", "P5", "U"},
		"kept":          {"P1", "P2", "P3"},
		"all_non_trash": {"P1", "P2", "P3", "P5", "U"},
	}
	for view, want := range library {
		got, _ := f.feed(t, f.ann, "library", view)
		require.Equal(t, want, got, "library scope, view %s", view)
	}
	got, _ := f.feed(t, f.ann, "library", "")
	require.Equal(t, library["all_non_trash"], got, "the default view")

	got, items := f.feed(t, f.ann, "corpus", "library")
	require.Equal(t, []string{"P1", "P2", "P3", "P5", "P6", "U"}, got, "corpus scope: the Library surface is all_non_trash")
	require.False(t, items["P6"].Overlay.InLibrary)
	require.Equal(t, "inbox", items["P6"].Overlay.State)
	got, _ = f.feed(t, f.ann, "corpus", "inbox")
	require.Equal(t, []string{"P5", "P6", "U"}, got)
}

func TestFeedOverlaysStayPerUser(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	got, items := f.feed(t, f.bob, "corpus", "all_non_trash")
	require.Equal(t, []string{"P1", "P2", "P3", "P4", "P5", "P6"}, got, "Bob sees the public corpus, not Ann's upload, and not Ann's trash")
	require.Equal(t, "done", items["P1"].Overlay.State, "his own state")
	require.Equal(t, "inbox", items["P2"].Overlay.State, "not Ann's reading")
	require.False(t, items["P3"].Overlay.Starred, "not Ann's star")

	got, _ = f.feed(t, f.bob, "library", "all_non_trash")
	require.Equal(t, []string{"P1"}, got)

	rec := f.b.do(t, req{method: http.MethodGet, path: "/api/papers/" + f.ids["U"].String(), cookie: f.bob})
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/papers/" + f.ids["U"].String(), cookie: f.ann})
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestFeedRejectsUnknownViewsAndScopes(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	rec := f.b.do(t, req{method: http.MethodGet, path: "/api/papers?view=favourites", cookie: f.ann})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "all_non_trash, done, inbox, kept, library, reading, reading_list, starred, trash")
	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/papers?scope=everyone", cookie: f.ann})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "corpus, library")
	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/papers?cursor=bogus", cookie: f.ann})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

func TestPaperStateChanges(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	path := "/api/papers/" + f.ids["P2"].String() + "/state"
	patch := func(body map[string]any) feedItem {
		rec := f.b.do(t, req{method: http.MethodPatch, path: path, cookie: f.ann, body: body})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var it feedItem
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &it))
		return it
	}
	it := patch(map[string]any{"state": "trash", "rating": 5, "starred": true})
	require.Equal(t, "trash", it.Overlay.State)
	require.Equal(t, 5, *it.Overlay.Rating)
	var before *string
	require.NoError(t, f.b.pool.QueryRow(context.Background(),
		`SELECT state_before_trash FROM paper_user_state WHERE user_id = $1 AND paper_id = $2`, f.annID, f.ids["P2"]).Scan(&before))
	require.Equal(t, "reading", *before, "trash remembers where the paper was")

	it = patch(map[string]any{"state": "reading", "rating": nil})
	require.Equal(t, "reading", it.Overlay.State)
	require.Nil(t, it.Overlay.Rating, "null clears the rating")
	require.True(t, it.Overlay.Starred, "fields not sent stay")

	rec := f.b.do(t, req{method: http.MethodPatch, path: path, cookie: f.ann, body: map[string]any{"state": "archived", "rating": 9}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `"field":"state"`)
	require.Contains(t, rec.Body.String(), `"field":"rating"`)

	// Bob marking a public paper changes only his overlay.
	rec = f.b.do(t, req{method: http.MethodPatch, path: path, cookie: f.bob, body: map[string]any{"state": "done"}})
	require.Equal(t, http.StatusOK, rec.Code)
	_, items := f.feed(t, f.ann, "library", "reading")
	require.Contains(t, items, "P2")
}

func TestLibraryMembership(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	ctx := context.Background()
	_, err := f.b.pool.Exec(ctx, `UPDATE papers SET doi = '10.1234/p6.example', arxiv_id = '2104.12255' WHERE id = $1`, f.ids["P6"])
	require.NoError(t, err)
	_, err = f.b.pool.Exec(ctx, `UPDATE papers SET doi = '10.1234/private.upload' WHERE id = $1`, f.ids["U"])
	require.NoError(t, err)

	rec := f.b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: f.bob, body: map[string]any{"doi": "https://doi.org/10.1234/P6.example"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = f.b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: f.bob, body: map[string]any{"arxiv_id": "arXiv:2104.12255v1"}})
	require.Equal(t, http.StatusCreated, rec.Code, "adding twice is fine")
	got, _ := f.feed(t, f.bob, "library", "all_non_trash")
	require.Equal(t, []string{"P1", "P6"}, got)

	rec = f.b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: f.bob, body: map[string]any{"doi": "10.1234/private.upload"}})
	require.Equal(t, http.StatusNotFound, rec.Code, "a DOI never links Bob onto Ann's private upload")
	rec = f.b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: f.bob, body: map[string]any{"doi": "not-a-doi"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	rec = f.b.do(t, req{method: http.MethodDelete, path: "/api/library/" + f.ids["P1"].String(), cookie: f.bob})
	require.Equal(t, http.StatusNoContent, rec.Code)
	rec = f.b.do(t, req{method: http.MethodDelete, path: "/api/library/" + f.ids["P1"].String(), cookie: f.bob})
	require.Equal(t, http.StatusNotFound, rec.Code)
	var state string
	require.NoError(t, f.b.pool.QueryRow(ctx, `SELECT state FROM paper_user_state WHERE user_id = $1 AND paper_id = $2`, f.bobID, f.ids["P1"]).Scan(&state))
	require.Equal(t, "done", state, "the overlay outlives library membership")
}

// TestExclusionPredicate checks the one canonical exclusion Pulse and the
// recommender use: never trash or done, nor negative feedback in the last 60 days.
func TestExclusionPredicate(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	ctx := context.Background()
	_, err := f.b.pool.Exec(ctx, `
		INSERT INTO recommendation_feedback (user_id, paper_id, signal, source, created_at) VALUES
		($1, $2, 'negative', 'feed_thumbs', now() - interval '10 days'),
		($1, $3, 'negative', 'pulse_thumbs', now() - interval '70 days'),
		($1, $4, 'positive', 'pulse_thumbs', now())`, f.annID, f.ids["P6"], f.ids["P5"], f.ids["P1"])
	require.NoError(t, err)
	rows, err := f.b.pool.Query(ctx, `
		SELECT p.title FROM papers p
		  LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id
		 WHERE p.visibility = 'public' AND `+papers.ExclusionPredicate+` ORDER BY p.title`, f.annID)
	require.NoError(t, err)
	titles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"P1", "P2", "P5"}, titles, "P3 done, P4 trash, P6 thumbed down 10 days ago; P5's thumbs-down is 70 days old")
}

func TestImportAndExport(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	ctx := context.Background()
	_, err := f.b.pool.Exec(ctx, `UPDATE papers SET doi = '10.1002/andp.19263840404' WHERE id = $1`, f.ids["P6"])
	require.NoError(t, err)

	src, err := os.ReadFile("../bibio/testdata/tricky.bib")
	require.NoError(t, err)
	rec := f.b.do(t, req{method: http.MethodPost, path: "/api/library/import", cookie: f.bob, body: string(src)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var res struct {
		Format   string `json:"format"`
		Imported int    `json:"imported"`
		Existing int    `json:"already_in_library"`
		Failed   int    `json:"failed"`
		Errors   []struct {
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	require.Equal(t, "bibtex", res.Format, "detected from the content")
	require.Equal(t, 3, res.Imported)
	require.Equal(t, 2, res.Failed)
	require.Equal(t, 25, res.Errors[0].Line)

	got, items := f.feed(t, f.bob, "library", "all_non_trash")
	require.Contains(t, got, "P6", "the entry whose DOI names a public paper links to it")
	require.Contains(t, got, "The book")
	require.Equal(t, "inbox", items["P6"].Overlay.State)
	var title string
	require.NoError(t, f.b.pool.QueryRow(ctx, `SELECT title FROM papers WHERE id = $1`, f.ids["P6"]).Scan(&title))
	require.Equal(t, "P6", title, "a user's file never rewrites a public row")

	rec = f.b.do(t, req{method: http.MethodPost, path: "/api/library/import", cookie: f.bob, body: string(src)})
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	require.Equal(t, 0, res.Imported)
	require.Equal(t, 3, res.Existing, "importing again adds nothing")

	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/library/export?format=bibtex", cookie: f.bob})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/x-bibtex; charset=utf-8", rec.Header().Get("Content-Type"))
	entries, errs := bibio.ParseBibTeX(rec.Body.String())
	require.Empty(t, errs, rec.Body.String())
	titles := map[string]bibio.Entry{}
	for _, e := range entries {
		titles[e.Title] = e
	}
	g := titles["Learning with Étale cohomology (a survey)"]
	require.Equal(t, []string{"Gómez, José", "Müller, François", "Team, The Lectern"}, g.Authors)
	require.Equal(t, "2104.12255", g.ArxivID)
	require.Equal(t, 2020, g.Year)
	require.Equal(t, "inproceedings", g.Type)

	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/library/export?format=ris", cookie: f.bob})
	require.Equal(t, http.StatusOK, rec.Code)
	risEntries, errs := bibio.ParseRIS(rec.Body.String())
	require.Empty(t, errs)
	require.Len(t, risEntries, len(entries))

	rec = f.b.do(t, req{method: http.MethodGet, path: "/api/library/export?format=pdf", cookie: f.bob})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	rec = f.b.do(t, req{method: http.MethodPost, path: "/api/library/import?format=endnote", cookie: f.bob, body: "x"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}
