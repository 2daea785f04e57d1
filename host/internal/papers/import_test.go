package papers

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestImportMatchesTitlesThroughAnIndex checks that the title lookup of an import
// reads the index papers_title_key instead of computing the title key of every paper
// in the user's library (issue 14 item 6): without the index the plan scans.
func TestImportMatchesTitlesThroughAnIndex(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	user := annWithALibrary(t, pool, 5000)
	_, err := pool.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	plan := dbtest.Plan(t, pool, libraryTitleMatchSQL, user, "PAPER NUMBER 42.", 2020)
	require.Contains(t, plan, "papers_title_key", "the title lookup reads the index:\n%s", plan)

	var id uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, libraryTitleMatchSQL, user, "PAPER NUMBER 42.", 2020).Scan(&id))
	var title string
	require.NoError(t, pool.QueryRow(ctx, `SELECT title FROM papers WHERE id = $1`, id).Scan(&title))
	require.Equal(t, "Paper number 42", title)
}

// TestImportEntriesMatchesAndCounts pins what an import matches and counts: an
// identifier links the corpus row, a title (in any case and punctuation, same year or
// none) matches only within the importer's own library, and a bad entry fails alone.
func TestImportEntriesMatchesAndCounts(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann, bob uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	var byDOI, annTitle, bobTitle uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility, doi)
		VALUES ('Named by DOI', 'crossref', 'public', '10.1000/doi') RETURNING id`).Scan(&byDOI))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility, publication_date, publication_date_precision)
		VALUES ('Deep Learning: a Survey', 'openalex', 'public', '2019-01-01', 'year') RETURNING id`).Scan(&annTitle))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility)
		VALUES ('Only in Bob''s library', 'openalex', 'public') RETURNING id`).Scan(&bobTitle))
	_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save'), ($3, $4, 'manual_save')`,
		ann, annTitle, bob, bobTitle)
	require.NoError(t, err)

	entries, errs := bibio.ParseBibTeX(`
@article{a, title = {Whatever the file calls it}, doi = {10.1000/DOI}}
@article{b, title = {DEEP LEARNING -- A SURVEY.}, year = 2019}
@article{c, title = {Deep learning: a survey}, year = 2021}
@article{d, title = {Only in Bob's library}}
@article{f, title = {A new work}}
`)
	require.Empty(t, errs)
	require.Len(t, entries, 5)
	// A title of spaces alone (the parser drops empty ones; a non-breaking space
	// gets through it) fails on its own, between good entries.
	entries = append(entries[:4], bibio.Entry{Line: 99, Title: "\u00a0"}, entries[4])
	st := New(pool)
	res, err := st.ImportEntries(ctx, ann, "bibtex", entries)
	require.NoError(t, err)
	require.Equal(t, 1, res.Existing, "the title already in Ann's library, same year")
	require.Equal(t, 4, res.Imported, "the DOI link, the other year, Bob's title and the new work")
	require.Equal(t, 1, res.Failed)
	require.Len(t, res.Errors, 1)
	require.Equal(t, entries[4].Line, res.Errors[0].Line)
	require.Equal(t, "The entry has no title.", res.Errors[0].Message)
	require.Len(t, res.PaperIDs, 5)
	require.Equal(t, byDOI, res.PaperIDs[0], "an identifier links the corpus row")
	require.Equal(t, annTitle, res.PaperIDs[1], "a title in other case and punctuation, same year, is the same work")
	require.NotEqual(t, annTitle, res.PaperIDs[2], "another year is another work")
	require.NotEqual(t, bobTitle, res.PaperIDs[3], "a title in someone else's library never matches")

	again, err := st.ImportEntries(ctx, ann, "bibtex", entries)
	require.NoError(t, err)
	require.Equal(t, 0, again.Imported)
	require.Equal(t, 5, again.Existing, "importing again adds nothing")
	require.Equal(t, res.PaperIDs, again.PaperIDs)

	var bobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM user_library WHERE user_id = $1`, bob).Scan(&bobs))
	require.Equal(t, 1, bobs, "Ann's import leaves Bob's library alone")
}

// annWithALibrary adds ann@example.org and n public papers, "Paper number 1" to
// "Paper number n", all in her library, and returns her id.
func annWithALibrary(t *testing.T, pool *pgxpool.Pool, n int) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var ann uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	_, err := pool.Exec(ctx, `
		INSERT INTO papers (title, source, visibility) SELECT 'Paper number ' || g, 'openalex', 'public'
		  FROM generate_series(1, $1::int) g`, n)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) SELECT $1, id, 'manual_save' FROM papers`, ann)
	require.NoError(t, err)
	return ann
}
