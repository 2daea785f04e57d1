package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// The paper page marks each field read from the PDF and not yet checked against a
// source, says how the last check ended, and offers "Update from sources", which
// enqueues the paper's paper.enrich job for the reader.
func TestThePaperPageMarksUnverifiedFields(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, "/onboarding?step=llm", p.url, p.body)
	ctx := context.Background()
	var user, id uuid.UUID
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT id FROM users WHERE email = 'ada@example.org'`).Scan(&user))
	require.NoError(t, s.pool.QueryRow(ctx, `
		INSERT INTO papers (title, authors, venue, source, visibility, discovered_by, provenance, metadata)
		VALUES ('A paper read from its PDF', '[{"name": "Ann Alpha"}]', 'Some Workshop', 'upload', 'private', $1,
		        '{"title": "pdf", "authors": "crossref", "venue": "pdf"}', '{"enrichment": {"outcome": "unreachable"}}')
		RETURNING id`, user).Scan(&id))
	_, err := s.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, user, id)
	require.NoError(t, err)

	p = b.get("/papers/" + id.String())
	require.Equal(t, 2, strings.Count(p.body, `<span class="badge unverified"`), "title and venue, not the checked authors")
	require.Contains(t, p.body, "from the PDF, not yet checked against a source: title, venue.")
	require.Contains(t, p.body, "The sources could not be reached; Lectern tries again later.")
	require.Contains(t, p.body, `action="/papers/`+id.String()+`/enrich"`)

	p = b.post("/papers/"+id.String()+"/enrich", nil)
	require.Contains(t, p.url, "/papers/"+id.String(), p.body)
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'paper.enrich' AND args->>'paper_id' = $1`,
		id.String()).Scan(&n))
	require.Equal(t, 1, n, "the button enqueued the check")
}
