package enrich

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
)

// The DOI and arXiv id of "Augmenting large language models with chemistry tools"
// as Crossref and Semantic Scholar recorded them.
const (
	chemDOI   = "10.1038/s42256-024-00832-8"
	chemArxiv = "2304.05376"
	chemTitle = "Augmenting large language models with chemistry tools"
)

// chemPDF is a first page that prints the paper's title, one of its six authors
// (what a heuristic might get) and its DOI; body tells two copies apart.
func chemPDF(body string) []byte {
	return pdftexttest.Front(pdftexttest.FrontConfig{Title: chemTitle, Authors: "Andres M. Bran",
		Stamps: []string{"https://doi.org/" + chemDOI}, Body: body})
}

// TestEnrichAgainstRecordedSources runs the real Crossref, Semantic Scholar,
// OpenAlex and arXiv plugins against replays of their recorded APIs.
func TestEnrichAgainstRecordedSources(t *testing.T) {
	rec := startRecorded(t)
	t.Run("answers", func(t *testing.T) {
		t.Run("a DOI the sources know", func(t *testing.T) { t.Parallel(); testByDOI(t, rec) })
		t.Run("an arXiv id the sources know", func(t *testing.T) { t.Parallel(); testByArxiv(t, rec) })
		t.Run("an exact title and first author", func(t *testing.T) { t.Parallel(); testByTitle(t, rec) })
		t.Run("another user's private copy", func(t *testing.T) { t.Parallel(); testOthersPrivateCopy(t, rec) })
		t.Run("a private upload of a shared work", func(t *testing.T) { t.Parallel(); testPrivateUploadOfSharedWork(t, rec) })
		t.Run("two copies of one user merge", func(t *testing.T) { t.Parallel(); testOwnCopiesMerge(t, rec) })
		t.Run("a failed merge leaves nothing half-done", func(t *testing.T) { t.Parallel(); testFailedMerge(t, rec) })
		t.Run("two shared rows merge per user", func(t *testing.T) { t.Parallel(); testSharedRowsMerge(t, rec) })
	})
	// Taking the replays down affects every source, so this runs alone.
	t.Run("sources down", func(t *testing.T) { testSourcesDown(t, rec) })
}

// An upload whose PDF prints a DOI gets, through the job ingest enqueues, the
// record the sources keep for it: Crossref's authors (with ORCID iDs), venue,
// abstract and date, Semantic Scholar's arXiv id, open-access link and higher
// citation count. Each field names its source; the text stays the PDF's and the
// paper stays private.
func testByDOI(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{auto: true})
	id := b.upload(t, b.ann, "chem.pdf", chemPDF(""))
	state, output := b.waitJob(t, b.enrichJob(t, id))
	require.Equal(t, "completed", state, output)
	require.Contains(t, output, `"outcome": "found"`)

	it := b.item(t, b.ann, id)
	require.Equal(t, []string{"Andres M. Bran", "Sam Cox", "Oliver Schilter", "Carlo Baldassari", "Andrew D. White", "Philippe Schwaller"}, names(it.Authors))
	require.Equal(t, "0000-0003-0310-0851", it.Authors[2].ORCID, "authors come with their ids")
	require.Equal(t, "Nature Machine Intelligence", it.Venue)
	require.NotEmpty(t, it.Abstract)
	require.Equal(t, 2024, it.PublicationDate.Year())
	require.Equal(t, chemDOI, it.DOI)
	require.Equal(t, chemArxiv, it.ArxivID)
	require.Equal(t, "https://www.nature.com/articles/s42256-024-00832-8.pdf", it.PDFURL)
	require.Equal(t, 500, *it.CitationCount, "the higher count of the two sources")
	require.Empty(t, it.Unverified, "every field was checked against a source")
	for field, want := range map[string]string{
		papers.FieldTitle: "crossref", papers.FieldAuthors: "crossref", papers.FieldAbstract: "crossref",
		papers.FieldVenue: "crossref", papers.FieldYear: "crossref", papers.FieldDOI: "crossref",
		papers.FieldPDFURL: "crossref", papers.FieldArxivID: "semanticscholar", papers.FieldCitationCount: "semanticscholar",
	} {
		require.Equal(t, want, it.Provenance[field], field)
	}
	var vis string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT visibility FROM papers WHERE id = $1`, id).Scan(&vis))
	require.Equal(t, "private", vis)
	_, err := papers.New(b.pool).Get(context.Background(), b.bob, id)
	require.ErrorIs(t, err, papers.ErrNotFound, "still nobody else's to read")
}

// An upload whose PDF prints an arXiv id gets arXiv's record: all 34 authors of
// the proceedings, not the two the heuristic read, and arXiv's abstract.
func testByArxiv(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	id := b.upload(t, b.ann, "aew.pdf", pdftexttest.Front(pdftexttest.FrontConfig{
		Title:   "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications",
		Authors: "Kees A. Schouhamer Immink, Stan Baggen", Stamps: []string{"arXiv:1707.08567v1 [cs.IT] 26 Jul 2017"},
		Abstract: "A short abstract the heuristic reads from the page."}))
	before := b.item(t, b.ann, id)
	require.Equal(t, []string{"Kees A. Schouhamer Immink", "Stan Baggen"}, names(before.Authors), "the PDF's heuristics first")
	require.Contains(t, before.Unverified, papers.FieldAuthors)
	text := b.text(t, id)
	out, err := b.svc.Enrich(context.Background(), b.ann, id)
	require.NoError(t, err)
	require.Equal(t, OutcomeFound, out.Outcome)
	require.Equal(t, "arxiv_id", out.By)
	it := b.item(t, b.ann, id)
	require.Len(t, it.Authors, 34)
	require.Equal(t, "Kees A. Schouhamer Immink", it.Authors[0].Name)
	require.True(t, strings.HasPrefix(it.Abstract, `The 10th Asia-Europe workshop in "Concepts in Information Theory`), it.Abstract)
	require.Equal(t, "arxiv", it.Provenance[papers.FieldAuthors])
	require.Equal(t, "arxiv", it.Provenance[papers.FieldAbstract])
	require.Empty(t, it.Unverified)
	require.Equal(t, text, b.text(t, id), "the text stays the PDF's")
}

// A PDF that prints no identifier is found by its exact title and first author:
// Crossref's record of the JCTC perspective gives the authors and a DOI; it has
// no abstract, so the PDF's abstract stays, marked unverified.
func testByTitle(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	id := b.upload(t, b.ann, "jctc.pdf", fixturetest.Read(t, "pdfs/jctc2022_perspective_xai_molecular.pdf"))
	pdfAbstract := b.item(t, b.ann, id).Abstract
	require.NotEmpty(t, pdfAbstract)

	out, err := b.svc.Enrich(context.Background(), b.ann, id)
	require.NoError(t, err)
	require.Equal(t, "title", out.By)
	it := b.item(t, b.ann, id)
	require.Equal(t, []string{"Geemi P. Wellawatte", "Heta A. Gandhi", "Aditi Seshadri", "Andrew D. White"}, names(it.Authors))
	require.Equal(t, "crossref", it.Provenance[papers.FieldAuthors])
	require.Equal(t, "10.26434/chemrxiv-2022-qfv02", it.DOI)
	require.Equal(t, pdfAbstract, it.Abstract)
	require.Equal(t, []string{papers.FieldAbstract}, it.Unverified, "from the PDF, not yet checked against a source")
}

// Bob's private upload of the same work is never read, linked or merged: Ann's
// upload gets the record (its DOI too: an identifier is unique per owner among
// private rows), Bob's row does not change, and each stays private to its owner.
func testOthersPrivateCopy(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	ctx := context.Background()
	bobs := b.upload(t, b.bob, "chem-bob.pdf", chemPDF("Bob's own copy of the paper, set differently."))
	anns := b.upload(t, b.ann, "chem-ann.pdf", chemPDF(""))
	bobRow := b.row(t, bobs)

	out, err := b.svc.Enrich(ctx, b.ann, anns)
	require.NoError(t, err)
	require.Equal(t, anns, out.PaperID)
	require.Empty(t, out.Merged)
	require.Nil(t, out.LinkedTo)
	require.Equal(t, bobRow, b.row(t, bobs), "Bob's row is untouched")
	it := b.item(t, b.ann, anns)
	require.Len(t, it.Authors, 6)
	require.Equal(t, "10.1038/s42256-024-00832-8", it.DOI, "each user's private copy may carry the work's DOI")
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM papers WHERE id IN ($1, $2) AND visibility = 'private'`, anns, bobs).Scan(&n))
	require.Equal(t, 2, n)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM user_library WHERE user_id = $1`, b.bob).Scan(&n))
	require.Equal(t, 1, n)
	_, err = papers.New(b.pool).Get(ctx, b.ann, bobs)
	require.ErrorIs(t, err, papers.ErrNotFound)

	// Bob's own enrichment likewise leaves Ann's row alone, though it now holds
	// the arXiv id.
	annRow := b.row(t, anns)
	_, err = b.svc.Enrich(ctx, b.bob, bobs)
	require.NoError(t, err)
	require.Equal(t, annRow, b.row(t, anns))
}

// When the shared corpus already has the work, the user's private upload stays
// (it holds their PDF's text) and becomes their private version of the shared
// row, with the record's fields; the shared row and what Bob reads do not change.
func testPrivateUploadOfSharedWork(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	ctx := context.Background()
	shared := b.shared(t, papers.Input{Title: chemTitle, DOI: chemDOI, Source: "crossref"})
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		return papers.AddToLibraryTx(ctx, tx, b.bob, shared, "search_save")
	}))
	sharedRow, bobView := b.row(t, shared), b.item(t, b.bob, shared)
	anns := b.upload(t, b.ann, "chem.pdf", chemPDF(""))

	out, err := b.svc.Enrich(ctx, b.ann, anns)
	require.NoError(t, err)
	require.NotNil(t, out.LinkedTo)
	require.Equal(t, shared, *out.LinkedTo)
	require.Equal(t, anns, out.PaperID)
	it := b.item(t, b.ann, anns)
	require.Equal(t, shared.String(), it.Metadata["version_of"])
	require.Len(t, it.Authors, 6)
	require.Empty(t, it.DOI)
	require.Equal(t, sharedRow, b.row(t, shared), "the shared row is untouched")
	require.Equal(t, bobView, b.item(t, b.bob, shared), "Bob reads what he read")
	var vis string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT visibility FROM papers WHERE id = $1`, anns).Scan(&vis))
	require.Equal(t, "private", vis)
}

// copies is Ann's two uploads of one work, each with her state, notes, a
// project link, and (on the second) a card and an extraction.
type copies struct {
	first, second, project, card, extraction uuid.UUID
	secondAdded                              time.Time
}

func twoCopies(t *testing.T, b *bundle) copies {
	t.Helper()
	ctx := context.Background()
	var c copies
	c.first = b.upload(t, b.ann, "chem.pdf", chemPDF(""))
	c.second = b.upload(t, b.ann, "chem-again.pdf", chemPDF("A second copy of the same article, with other words."))
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := b.pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	exec(`UPDATE user_library SET added_at = now() - interval '2 days' WHERE paper_id = $1`, c.second)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT added_at FROM user_library WHERE paper_id = $1`, c.second).Scan(&c.secondAdded))
	exec(`INSERT INTO paper_user_state (user_id, paper_id, state, notes) VALUES ($1, $2, 'to_read', 'first note')`, b.ann, c.first)
	exec(`INSERT INTO paper_user_state (user_id, paper_id, state, starred, rating, notes) VALUES ($1, $2, 'reading', true, 4, 'second note')`, b.ann, c.second)
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO projects (user_id, name) VALUES ($1, 'Agents') RETURNING id`, b.ann).Scan(&c.project))
	exec(`INSERT INTO project_papers (project_id, paper_id, user_id) VALUES ($1, $2, $3), ($1, $4, $3)`, c.project, c.first, b.ann, c.second)
	var deck uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO decks (user_id, name) VALUES ($1, 'Chemistry') RETURNING id`, b.ann).Scan(&deck))
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO cards (user_id, deck_id, paper_id, front, back) VALUES ($1, $2, $3, 'What does ChemCrow add?', 'Tools') RETURNING id`,
		b.ann, deck, c.second).Scan(&c.card))
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO paper_extractions (user_id, paper_id, model, prompt_version) VALUES ($1, $2, 'extractive', 'v1') RETURNING id`,
		b.ann, c.second).Scan(&c.extraction))
	exec(`INSERT INTO paper_extraction_items (extraction_id, user_id, item_type, content, quote, verification_status, char_start, char_end)
	      VALUES ($1, $2, 'claim', 'It uses tools', 'uses tools', 'verified', 10, 20)`, c.extraction, b.ann)
	return c
}

// Two uploads of one work by one user become one paper in one transaction: the
// older (both have text) survives; the library row keeps the earlier date, the
// state the further one, stars, rating and both notes; the project link, the card
// and the extraction move, the extraction's quotes unverified; the duplicate's
// PDF file is released.
func testOwnCopiesMerge(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	ctx := context.Background()
	c := twoCopies(t, b)
	var secondSum string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT metadata->'upload'->>'sha256' FROM papers WHERE id = $1`, c.second).Scan(&secondSum))
	require.FileExists(t, b.svc.PDFs.Path(secondSum))

	out, err := b.svc.Enrich(ctx, b.ann, c.second)
	require.NoError(t, err)
	require.Equal(t, c.first, out.PaperID, "the older copy survives")
	require.Equal(t, []uuid.UUID{c.second}, out.Merged)

	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM papers WHERE id = $1`, c.second).Scan(&n))
	require.Zero(t, n, "the duplicate is gone")
	st := papers.New(b.pool)
	to, err := st.MergedInto(ctx, b.ann, c.second)
	require.NoError(t, err)
	require.Equal(t, c.first, to, "Ann's old links to the duplicate lead to the survivor")
	_, err = st.MergedInto(ctx, b.bob, c.second)
	require.ErrorIs(t, err, papers.ErrNotFound, "for Bob, who may not see Ann's paper, it is not found")
	var added time.Time
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT added_at FROM user_library WHERE user_id = $1 AND paper_id = $2`, b.ann, c.first).Scan(&added))
	require.WithinDuration(t, c.secondAdded, added, time.Millisecond, "the earlier added date")
	it := b.item(t, b.ann, c.first)
	require.Equal(t, "reading", it.Overlay.State, "the state further along")
	require.True(t, it.Overlay.Starred)
	require.Equal(t, 4, *it.Overlay.Rating)
	require.Equal(t, "first note\n\nsecond note", it.Overlay.Notes)
	require.Len(t, it.Authors, 6, "the survivor has the record")
	require.Equal(t, chemDOI, it.DOI)

	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT paper_id FROM cards WHERE id = $1`, c.card).Scan(&paper))
	require.Equal(t, c.first, paper)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM project_papers WHERE project_id = $1`, c.project).Scan(&n))
	require.Equal(t, 1, n, "one link per project")
	var status string
	var start *int
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT e.paper_id, i.verification_status, i.char_start FROM paper_extractions e
		  JOIN paper_extraction_items i ON i.extraction_id = e.id WHERE e.id = $1`, c.extraction).Scan(&paper, &status, &start))
	require.Equal(t, c.first, paper)
	require.Equal(t, "unverified", status, "its quote pointed into the duplicate's text")
	require.Nil(t, start)
	_, err = os.Stat(b.svc.PDFs.Path(secondSum))
	require.ErrorIs(t, err, os.ErrNotExist, "the duplicate's PDF is released")
}

// A merge that fails halfway (here a last move step refuses) leaves both papers
// and every row on them as they were.
func testFailedMerge(t *testing.T, rec *recorded) {
	refused := errors.New("refused for the test")
	fail := func(context.Context, pgx.Tx, uuid.UUID, uuid.UUID) error { return refused }
	b := setup(t, rec, setupOpts{moves: append(append([]MoveFunc{}, Moves...), fail)})
	ctx := context.Background()
	c := twoCopies(t, b)
	snapshot := func() string {
		var s string
		require.NoError(t, b.pool.QueryRow(ctx, `
			SELECT jsonb_build_array(
			  (SELECT jsonb_agg(to_jsonb(p) - 'search_vector' ORDER BY id) FROM papers p),
			  (SELECT jsonb_agg(to_jsonb(l) ORDER BY paper_id) FROM user_library l),
			  (SELECT jsonb_agg(to_jsonb(s) ORDER BY paper_id) FROM paper_user_state s),
			  (SELECT jsonb_agg(to_jsonb(pp) ORDER BY paper_id) FROM project_papers pp),
			  (SELECT jsonb_agg(jsonb_build_array(id, paper_id)) FROM cards),
			  (SELECT jsonb_agg(jsonb_build_array(id, paper_id)) FROM paper_extractions),
			  (SELECT jsonb_agg(to_jsonb(i) ORDER BY id) FROM paper_extraction_items i))::text`).Scan(&s))
		return s
	}
	before := snapshot()
	_, err := b.svc.Enrich(ctx, b.ann, c.second)
	require.ErrorIs(t, err, refused)
	require.Equal(t, before, snapshot(), "nothing of the merge stays")
}

// Two shared rows of one work (one known by DOI, one by arXiv id) merge when the
// record shows they are one: every user's library rows and states move to the
// survivor, each user's own; a user with both keeps the state further along.
func testSharedRowsMerge(t *testing.T, rec *recorded) {
	b := setup(t, rec, setupOpts{})
	ctx := context.Background()
	byDOI := b.shared(t, papers.Input{Title: chemTitle, DOI: chemDOI, Source: "crossref"})
	byArxiv := b.shared(t, papers.Input{Title: chemTitle, ArxivID: chemArxiv, Source: "arxiv"})
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := b.pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	exec(`INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'search_save'), ($1, $3, 'search_save'), ($4, $3, 'search_save')`,
		b.ann, byDOI, byArxiv, b.bob)
	exec(`INSERT INTO paper_user_state (user_id, paper_id, state) VALUES ($1, $2, 'done'), ($1, $3, 'to_read')`, b.ann, byDOI, byArxiv)
	exec(`INSERT INTO paper_user_state (user_id, paper_id, state, notes) VALUES ($1, $2, 'reading', 'Bob''s note')`, b.bob, byArxiv)

	out, err := b.svc.Enrich(ctx, b.ann, byDOI)
	require.NoError(t, err)
	require.Equal(t, byDOI, out.PaperID, "the older row survives")
	require.Equal(t, []uuid.UUID{byArxiv}, out.Merged)

	ann, bob := b.item(t, b.ann, byDOI), b.item(t, b.bob, byDOI)
	require.Equal(t, "done", ann.Overlay.State)
	require.True(t, bob.Overlay.InLibrary, "Bob's library row moved")
	require.Equal(t, "reading", bob.Overlay.State)
	require.Equal(t, "Bob's note", bob.Overlay.Notes)
	require.Equal(t, chemArxiv, ann.ArxivID)
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM user_library WHERE paper_id = $1`, byDOI).Scan(&n))
	require.Equal(t, 2, n)
	var vis string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT visibility FROM papers WHERE id = $1`, byDOI).Scan(&vis))
	require.Equal(t, "public", vis)
}

// With every source failing, the PDF's fields stand, marked unverified; the job
// tries again a bounded number of times without an error and then ends well,
// saying the sources could not be reached.
func testSourcesDown(t *testing.T, rec *recorded) {
	rec.setDown(true)
	defer rec.setDown(false)
	b := setup(t, rec, setupOpts{auto: true, retries: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}})
	id := b.upload(t, b.ann, "chem.pdf", chemPDF(""))
	job := b.enrichJob(t, id)
	state, output := b.waitJob(t, job)
	require.Equal(t, "completed", state, output)
	require.Contains(t, output, `"outcome": "unreachable"`)
	var errs int
	var snoozed int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT coalesce(array_length(errors, 1), 0), coalesce((metadata->>'snoozes')::int, 0) FROM river_job WHERE id = $1`, job).Scan(&errs, &snoozed))
	require.Zero(t, errs, "waiting for the sources is not an error")
	require.Equal(t, 3, snoozed, "three more tries, then it stops")

	it := b.item(t, b.ann, id)
	require.Equal(t, []string{"Andres M. Bran"}, names(it.Authors))
	require.Equal(t, chemTitle, it.Title)
	require.ElementsMatch(t, []string{papers.FieldTitle, papers.FieldAuthors, papers.FieldDOI}, it.Unverified)
	enrichment, _ := it.Metadata["enrichment"].(map[string]any)
	require.Equal(t, OutcomeUnreachable, enrichment["outcome"])
}
