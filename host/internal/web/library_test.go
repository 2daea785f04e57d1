package web

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
)

// The library reads like a reference manager: each row names the first three
// authors, the year and the venue; a GET form sorts and filters without JavaScript;
// the paper page shows the whole record with its identifiers linking out.
func TestLibraryRowsReadLikeAReferenceManager(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, "/onboarding?step=llm", p.url, p.body)

	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT id FROM users WHERE email = 'ada@example.org'`).Scan(&user))
	add := func(title, authors, date, venue, doi, arxiv string) uuid.UUID {
		var id uuid.UUID
		var d, precision any
		if date != "" {
			d, precision = date, "day"
		}
		require.NoError(t, s.pool.QueryRow(ctx, `
			INSERT INTO papers (title, authors, publication_date, publication_date_precision, venue, doi, arxiv_id, source, visibility)
			VALUES ($1, $2, $3, $4, nullif($5, ''), nullif($6, ''), nullif($7, ''), 'manual', 'public') RETURNING id`,
			title, authors, d, precision, venue, doi, arxiv).Scan(&id))
		_, err := s.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save')`, user, id)
		require.NoError(t, err)
		return id
	}
	many := add("Zebra crossings in the wild",
		`[{"name": "Ann Alpha", "affiliation": "Uni A"}, {"name": "Ben Beta"}, {"name": "Cy Gamma"}, {"name": "Dee Delta"}]`,
		"2023-05-01", "Venue", "10.1234/zebra", "2305.00001")
	add("Aardvark studies", `[{"name": "Eve Epsilon"}]`, "2019-01-01", "", "", "")

	p = b.get("/library")
	require.Contains(t, p.body, "Ann Alpha, Ben Beta, Cy Gamma et al. · 2023 · Venue")
	require.NotContains(t, p.body, "Dee Delta", "a row names three authors")
	require.Contains(t, p.body, `<form method="get" action="/library"`)
	require.Less(t, strings.Index(p.body, "Aardvark studies"), strings.Index(p.body, "Zebra crossings"), "newest added first")

	p = b.get("/library?sort=title")
	require.Contains(t, p.body, `<option value="title" selected>`)
	require.Less(t, strings.Index(p.body, "Aardvark studies"), strings.Index(p.body, "Zebra crossings"))
	p = b.get("/library?sort=year")
	require.Less(t, strings.Index(p.body, "Zebra crossings"), strings.Index(p.body, "Aardvark studies"))

	p = b.get("/library?q=gamma")
	require.Contains(t, p.body, "Zebra crossings")
	require.NotContains(t, p.body, "Aardvark studies")
	require.Contains(t, p.body, `value="gamma"`, "the filter keeps what was typed")
	p = b.get("/library?q=" + url.QueryEscape("nothing like it"))
	require.Contains(t, p.body, "in its title or authors")

	p = b.get("/papers/" + many.String())
	require.Contains(t, p.body, "Ann Alpha (Uni A), Ben Beta, Cy Gamma, Dee Delta")
	require.Contains(t, p.body, `href="https://doi.org/10.1234/zebra"`)
	require.Contains(t, p.body, `href="https://arxiv.org/abs/2305.00001"`)
	require.Contains(t, p.body, "<cite>Venue</cite>")
}

// The library exports a selection without JavaScript: each row has a checkbox of
// the export form, "select all on this page" sends the page's ids, and "all
// matching" follows the filter; the file comes as the API wrote it and reads back.
func TestLibraryExportsTheSelection(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, "/onboarding?step=llm", p.url, p.body)
	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT id FROM users WHERE email = 'ada@example.org'`).Scan(&user))
	ids := map[string]string{}
	for _, title := range []string{"Zebra crossings", "Aardvark studies", "Gamma rays"} {
		var id uuid.UUID
		require.NoError(t, s.pool.QueryRow(ctx, `
			INSERT INTO papers (title, authors, publication_date, publication_date_precision, source, visibility)
			VALUES ($1, '[{"name": "Ann Alpha"}]', '2021-01-01', 'year', 'manual', 'public') RETURNING id`, title).Scan(&id))
		_, err := s.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save')`, user, id)
		require.NoError(t, err)
		ids[title] = id.String()
	}

	p = b.get("/library?q=a")
	require.Contains(t, p.body, `<form method="get" action="/library/export" id="export-form"`)
	require.Contains(t, p.body, `name="id" value="`+ids["Gamma rays"]+`" form="export-form"`)
	require.Contains(t, p.body, `name="on_page" value="`+ids["Zebra crossings"]+`" form="export-form"`)
	require.Contains(t, p.body, `id="select-page" name="page" value="all" form="export-form"`)
	require.Contains(t, p.body, `<input type="hidden" name="q" value="a">`, "all matching keeps the filter")

	p = b.get("/library/export?" + url.Values{"format": {"bibtex"}, "which": {"selected"},
		"id": {ids["Gamma rays"], ids["Zebra crossings"]}}.Encode())
	require.Equal(t, 200, p.status, p.body)
	entries, errs := bibio.ParseBibTeX(p.body)
	require.Empty(t, errs)
	require.Len(t, entries, 2)
	require.Equal(t, "Gamma rays", entries[0].Title)
	require.NotEqual(t, entries[0].Key, entries[1].Key)

	p = b.get("/library/export?" + url.Values{"format": {"ris"}, "which": {"selected"}, "page": {"all"},
		"on_page": {ids["Gamma rays"], ids["Zebra crossings"], ids["Aardvark studies"]}}.Encode())
	require.Equal(t, 200, p.status, p.body)
	records, errs := bibio.ParseRIS(p.body)
	require.Empty(t, errs)
	require.Len(t, records, 3, "all on the page")

	p = b.get("/library/export?" + url.Values{"format": {"csljson"}, "which": {"matching"}, "q": {"zebra"}}.Encode())
	require.Equal(t, 200, p.status, p.body)
	var items []map[string]any
	require.NoError(t, json.Unmarshal([]byte(p.body), &items), p.body)
	require.Len(t, items, 1)
	require.Equal(t, "Zebra crossings", items[0]["title"])

	p = b.get("/library/export?format=bibtex&which=selected&q=a")
	require.Equal(t, 422, p.status)
	require.Contains(t, p.body, "Tick the papers to export, or export all that match.")
	require.Contains(t, p.body, "Gamma rays", "the library is shown again")

	p = b.get("/library/export?format=pdf&which=matching")
	require.Equal(t, 422, p.status)
	require.Contains(t, p.body, "ormat must be bibtex, ris or csljson.")
	require.Contains(t, p.body, `name="back" value="/library"`, "the rows' forms return to the library")
}
