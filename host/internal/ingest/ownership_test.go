package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// router serves the ingest route the way the host does: a chi route with its {id},
// behind a middleware that puts the caller on a copy of the request.
func (b *bundle) router(callers map[string]uuid.UUID) http.Handler {
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user := callers[r.Header.Get("X-Test-User")]
			next.ServeHTTP(w, r.WithContext(auth.WithCaller(r.Context(), auth.Caller{UserID: user, Role: "user"})))
		})
	})
	r.Post("/api/papers/{id}/ingest", b.api.IngestURL)
	return r
}

// ingestURL posts {"url": link} (no body when link is empty) as user.
func (b *bundle) ingestURL(t *testing.T, h http.Handler, user string, paper uuid.UUID, link string) (*httptest.ResponseRecorder, UploadResult) {
	t.Helper()
	var body []byte
	if link != "" {
		body, _ = json.Marshal(map[string]string{"url": link})
	}
	r := httptest.NewRequest(http.MethodPost, "/api/papers/"+paper.String()+"/ingest", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Test-User", user)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	var res UploadResult
	if rec.Code < 300 {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), rec.Body.String())
	}
	return rec, res
}

// readable renders everything any reader of the paper gets from it: the row with its
// identifiers and metadata, the text, the passages and their vectors.
func (b *bundle) readable(t *testing.T, paper uuid.UUID) string {
	t.Helper()
	var out string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT row_to_json(x)::text FROM (
		  SELECT p.title, p.doi, p.arxiv_id, p.arxiv_version, p.metadata, p.visibility, p.discovered_by, p.pdf_url,
		         t.content, encode(t.sha256, 'hex') AS sha256, t.page_count, t.page_offsets,
		         (SELECT string_agg(c.id::text || ':' || md5(c.content), ',' ORDER BY c.chunk_index)
		            FROM paper_chunks c WHERE c.paper_id = p.id) AS chunks,
		         (SELECT string_agg(e.chunk_id::text || ':' || md5(e.vector::text), ',' ORDER BY e.chunk_id)
		            FROM chunk_embeddings e JOIN paper_chunks c ON c.id = e.chunk_id WHERE c.paper_id = p.id) AS vectors,
		         (SELECT count(*) FROM paper_citations pc WHERE pc.citing_paper_id = p.id) AS citations
		    FROM papers p LEFT JOIN paper_texts t ON t.paper_id = p.id WHERE p.id = $1) x`, paper).Scan(&out))
	return out
}

// phraseOf takes six plain words from the middle of a PDF's first page with text.
func phraseOf(t *testing.T, pdf []byte) string {
	t.Helper()
	doc, err := pdftext.Extract(context.Background(), bytes.NewReader(pdf), int64(len(pdf)), nil)
	require.NoError(t, err)
	var phrase []string
	for _, w := range strings.Fields(doc.Pages[0].Text)[40:] {
		if w = strings.Trim(w, ".,;:()[]"); len(w) > 4 && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
			phrase = append(phrase, w)
		}
		if len(phrase) == 6 {
			break
		}
	}
	require.Len(t, phrase, 6)
	return strings.Join(phrase, " ")
}

// finds is what a search of the user's for q returns: the passages an answer quotes.
func (b *bundle) finds(t *testing.T, user uuid.UUID, q string) []string {
	t.Helper()
	found, err := b.passages.Search(context.Background(), user, q, nil, 10)
	require.NoError(t, err)
	var out []string
	for _, p := range found {
		out = append(out, p.PaperID.String()+"/"+p.ChunkID.String())
	}
	return out
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestAnotherUsersLinkNeverChangesWhatOthersRead(t *testing.T) {
	t.Parallel()
	shared := fixturetest.Read(t, "pdfs/arxiv_0908.0054v1_ultralight_bosonic_dm_revtex.pdf")
	bobs := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	b := setup(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		if r.URL.Path == "/bob.pdf" {
			_, _ = w.Write(bobs)
			return
		}
		_, _ = w.Write(shared)
	}))
	t.Cleanup(srv.Close)
	b.api.fetcher = NewFetcher(onlyServer(srv))
	h := b.router(map[string]uuid.UUID{"ann": b.ann, "bob": b.bob})

	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility, pdf_url, doi, metadata)
		VALUES ('Ultralight bosonic dark matter', 'arxiv', 'public', $1, '10.1234/shared.paper', '{"source_note": "arxiv"}')
		RETURNING id`, srv.URL+"/0908.0054v1.pdf").Scan(&paper))

	// Ann reads the shared paper from its own pdf_url: the corpus gets its text.
	rec, res := b.ingestURL(t, h, "ann", paper, "")
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, paper, res.PaperID)
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	sharedPhrase, bobPhrase := phraseOf(t, shared), phraseOf(t, bobs)
	before := b.readable(t, paper)
	annFinds := b.finds(t, b.ann, sharedPhrase)
	require.NotEmpty(t, annFinds)
	require.Contains(t, annFinds[0], paper.String())
	annBobFinds := b.finds(t, b.ann, bobPhrase)

	// Bob sends his own link for the same paper: it becomes his private version.
	rec, res = b.ingestURL(t, h, "bob", paper, srv.URL+"/bob.pdf")
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.NotEqual(t, paper, res.PaperID, "Bob's PDF does not go into the shared paper")
	require.Equal(t, &paper, res.VersionOf)
	require.Contains(t, res.Message, "private version")
	state, output = b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	version := res.PaperID

	require.Equal(t, before, b.readable(t, paper), "text, passages, vectors, identifiers and metadata of the shared paper are unchanged")
	require.NotContains(t, before, "bob.pdf", "no caller URL on the shared row")
	require.Equal(t, annFinds, b.finds(t, b.ann, sharedPhrase), "Ann's answers quote the same passages")
	require.Equal(t, annBobFinds, b.finds(t, b.ann, bobPhrase), "Bob's version is his alone: Ann finds what she found before")
	bobFinds := b.finds(t, b.bob, bobPhrase)
	require.NotEmpty(t, bobFinds)
	require.Contains(t, bobFinds[0], version.String())

	var visibility, versionOf, link string
	var owner uuid.UUID
	var doi *string
	var inLibrary bool
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT visibility, discovered_by, doi, metadata->>'version_of', metadata->'download'->>'url',
		       EXISTS (SELECT 1 FROM user_library WHERE user_id = $2 AND paper_id = p.id)
		  FROM papers p WHERE id = $1`, version, b.bob).Scan(&visibility, &owner, &doi, &versionOf, &link, &inLibrary))
	require.Equal(t, "private", visibility)
	require.Equal(t, b.bob, owner)
	require.Nil(t, doi, "identifiers stay with the shared paper")
	require.Equal(t, paper.String(), versionOf)
	require.Equal(t, srv.URL+"/bob.pdf", link, "the link is recorded on Bob's own row")
	require.True(t, inLibrary)

	// The same link again gives Bob the version he has; no link joins the shared
	// paper, which already has text, to his library without a job.
	rec, res = b.ingestURL(t, h, "bob", paper, srv.URL+"/bob.pdf")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, version, res.PaperID)
	require.Nil(t, res.Job)
	rec, res = b.ingestURL(t, h, "bob", paper, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, paper, res.PaperID)
	require.Equal(t, StatusExisting, res.Status)
	require.Nil(t, res.Job)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`,
		b.bob, paper).Scan(&inLibrary))
	require.True(t, inLibrary)

	// The worker refuses too: a job naming the shared paper with Bob's PDF stores nothing.
	_, err := b.worker.Ingest(ctx, Args{PaperID: paper, SHA256: digest(bobs)}, b.bob, func(int, string) {})
	var pub *jobs.PublicError
	require.ErrorAs(t, err, &pub)
	require.Equal(t, "paper_has_text", pub.Code)
	require.Equal(t, before, b.readable(t, paper))
	// A job with the very PDF the paper was read from changes nothing either.
	_, err = b.worker.Ingest(ctx, Args{PaperID: paper, SHA256: digest(shared)}, b.bob, func(int, string) {})
	require.NoError(t, err)
	require.Equal(t, before, b.readable(t, paper))
	require.Equal(t, annFinds, b.finds(t, b.ann, sharedPhrase))
}

func TestALinkOnASharedPaperWithoutTextIsTheCallersOwn(t *testing.T) {
	t.Parallel()
	bobs := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	b := setup(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(bobs) }))
	t.Cleanup(srv.Close)
	b.api.fetcher = NewFetcher(onlyServer(srv))
	h := b.router(map[string]uuid.UUID{"bob": b.bob})
	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('No PDF link', 'openalex', 'public') RETURNING id`).Scan(&paper))
	before := b.readable(t, paper)

	rec, res := b.ingestURL(t, h, "bob", paper, srv.URL+"/any.pdf")
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.NotEqual(t, paper, res.PaperID)
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	require.Equal(t, before, b.readable(t, paper), "a caller's link never fills the shared paper, even without text")
	for _, f := range b.finds(t, b.ann, phraseOf(t, bobs)) {
		require.NotContains(t, f, res.PaperID.String(), "Bob's version is his alone")
	}
}

func TestAnOwnPrivatePaperIsReadAgainFromALink(t *testing.T) {
	t.Parallel()
	first := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	second := fixturetest.Read(t, "pdfs/arxiv_0908.0054v1_ultralight_bosonic_dm_revtex.pdf")
	b := setup(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(second) }))
	t.Cleanup(srv.Close)
	b.api.fetcher = NewFetcher(onlyServer(srv))
	rec, up := b.upload(t, b.ann, "mine.pdf", first)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, up.Job.ID)
	require.Equal(t, "completed", state, output)

	rec, res := b.ingestURL(t, b.router(map[string]uuid.UUID{"ann": b.ann}), "ann", up.PaperID, srv.URL+"/better.pdf")
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, up.PaperID, res.PaperID, "Ann's own upload, held by no one else, is read again in place")
	state, output = b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	var sum string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT encode(sha256, 'hex') FROM paper_texts WHERE paper_id = $1`, up.PaperID).Scan(&sum))
	require.Equal(t, digest(second), sum)
}
