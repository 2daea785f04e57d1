package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
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
