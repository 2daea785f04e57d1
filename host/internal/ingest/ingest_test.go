package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

type bundle struct {
	pool  *pgxpool.Pool
	api   *API
	queue *jobs.Service
	// worker is the ingest.pdf worker the queue runs.
	worker *Worker
	ann    uuid.UUID
	bob    uuid.UUID
	// passages is the hybrid retriever over the vectors the worker writes.
	passages *retrieve.Retriever
}

// setup starts a database and the job queue with an ingest worker; opts adjust
// the worker.
func setup(t testing.TB, opts ...func(*Worker)) *bundle {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewDB(t)
	b := &bundle{pool: pool}
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&b.ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&b.bob))
	store := NewStore(filepath.Join(t.TempDir(), "pdfs"))
	logger := slog.New(slog.DiscardHandler)
	reg := jobs.NewRegistry()
	vectors := embedded.New(pool)
	b.passages = retrieve.New(pool, lexical, vectors)
	b.worker = &Worker{Pool: pool, Store: store, Logger: logger, Embedder: lexical, Vectors: vectors}
	for _, o := range opts {
		o(b.worker)
	}
	require.NoError(t, RegisterJobs(reg, b.worker))
	queue, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: logger, Registry: reg})
	require.NoError(t, err)
	require.NoError(t, queue.Start(ctx))
	t.Cleanup(func() { _ = queue.Stop(context.Background()) })
	b.queue, b.api = queue, NewAPI(pool, store, queue, NewFetcher(netguard.PublicOnly))
	return b
}

func (b *bundle) upload(t testing.TB, user uuid.UUID, name string, content []byte) (*httptest.ResponseRecorder, UploadResult) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	r := httptest.NewRequest(http.MethodPost, "/api/papers/upload", &buf)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r = r.WithContext(auth.WithCaller(r.Context(), auth.Caller{UserID: user, Role: "user"}))
	rec := httptest.NewRecorder()
	b.api.Upload(rec, r)
	var res UploadResult
	if rec.Code == http.StatusAccepted || rec.Code == http.StatusOK {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	}
	return rec, res
}

// waitJob polls the job until it ends and returns River's state and its output.
func (b *bundle) waitJob(t *testing.T, id int64) (string, string) {
	t.Helper()
	var state, output string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		require.NoError(t, b.pool.QueryRow(context.Background(),
			`SELECT state, coalesce(metadata->>'output', '') FROM river_job WHERE id = $1`, id).Scan(&state, &output))
		if state == "completed" || state == "discarded" || state == "cancelled" {
			return state, output
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %d still %s after a minute", id, state)
	return "", ""
}

func TestUploadIngestAndFindAPassageOnItsPage(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	b := setup(t)
	ctx := context.Background()

	rec, res := b.upload(t, b.ann, "rrp paper.pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, jobs.StateQueued, res.Job.State)
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)

	// A phrase from the body of page 3, taken from the extraction itself.
	doc, err := pdftext.Extract(ctx, bytes.NewReader(pdf), int64(len(pdf)), nil)
	require.NoError(t, err)
	words := strings.Fields(doc.Pages[2].Text)
	require.Greater(t, len(words), 200)
	var phrase []string
	for _, w := range words[120:] {
		if w = strings.Trim(w, ".,;:()[]"); len(w) > 4 && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
			phrase = append(phrase, w)
		}
		if len(phrase) == 6 {
			break
		}
	}
	found, err := b.passages.Search(ctx, b.ann, strings.Join(phrase, " "), nil, 5)
	require.NoError(t, err)
	require.NotEmpty(t, found, "phrase %q", phrase)
	top := found[0]
	require.Equal(t, res.PaperID, top.PaperID)
	require.LessOrEqual(t, top.PageStart, 3)
	require.GreaterOrEqual(t, top.PageEnd, 3, "the passage is cited with its page")

	var title string
	var pages, chunks, libraries int
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT p.title, t.page_count, (SELECT count(*) FROM paper_chunks WHERE paper_id = p.id),
		       (SELECT count(*) FROM user_library WHERE paper_id = p.id)
		  FROM papers p JOIN paper_texts t ON t.paper_id = p.id WHERE p.id = $1`, res.PaperID).Scan(&title, &pages, &chunks, &libraries))
	require.Equal(t, doc.Title, title, "the title detected in the PDF replaces the file name")
	require.Equal(t, len(doc.Pages), pages)
	require.Positive(t, chunks)
	require.Equal(t, 1, libraries, "the upload is in the uploader's library only")
	require.Equal(t, title, top.Title, "a result names its paper")
	require.NotEmpty(t, top.Snippet)

	bobFinds, err := b.passages.Search(ctx, b.bob, strings.Join(phrase, " "), nil, 5)
	require.NoError(t, err)
	require.Empty(t, bobFinds, "another user does not find a private upload's passages")

	// Every passage has its vector, and vector similarity finds the passage where the
	// words alone do not: a word the paper never uses empties the full-text match.
	var vectors int
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT count(*) FROM chunk_embeddings e JOIN paper_chunks c ON c.id = e.chunk_id
		 WHERE c.paper_id = $1 AND e.model = $2 AND e.dimension = $3`,
		res.PaperID, lexical.Name, 384).Scan(&vectors))
	require.Equal(t, chunks, vectors)
	noisy := strings.Join(phrase, " ") + " zqxjvw"
	lexical, err := retrieve.Lexical(ctx, b.pool, b.ann, noisy, nil, 5)
	require.NoError(t, err)
	require.Empty(t, lexical)
	found, err = b.passages.Search(ctx, b.ann, noisy, nil, 5)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	var ids []uuid.UUID
	for _, p := range found {
		ids = append(ids, p.ChunkID)
	}
	require.Contains(t, ids[:min(3, len(ids))], top.ChunkID, "the vector ranking finds the same passage")
	require.LessOrEqual(t, found[0].PageStart, 3)
	require.GreaterOrEqual(t, found[0].PageEnd, 3, "an overlapping passage of the same page may rank first")
	require.Equal(t, title, found[0].Title, "a passage found by its vector alone is read in full too")
	require.NotEmpty(t, found[0].Snippet)
	bobFinds, err = b.passages.Search(ctx, b.bob, noisy, nil, 5)
	require.NoError(t, err)
	require.Empty(t, bobFinds, "vector hits are filtered by ownership too")
}

func TestATruncatedPDFFailsAndLeavesNothing(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	b := setup(t)
	rec, res := b.upload(t, b.ann, "cut.pdf", pdf[:len(pdf)/3])
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "discarded", state, "a failed job")
	require.Contains(t, output, "pdf_malformed")
	require.Contains(t, output, "damaged or cut short")

	var papers, chunks, libraries, texts int
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM paper_chunks),
		       (SELECT count(*) FROM user_library), (SELECT count(*) FROM paper_texts)`).Scan(&papers, &chunks, &libraries, &texts))
	require.Zero(t, papers+chunks+libraries+texts, "no paper, chunk, text or library row is left")
	entries, err := os.ReadDir(b.api.store.dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the unreadable PDF's file goes with its paper")
}

// requireNothingLeft checks that no paper, chunk, text or library row exists.
func (b *bundle) requireNothingLeft(t *testing.T) {
	t.Helper()
	var papers, chunks, libraries, texts int
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM paper_chunks),
		       (SELECT count(*) FROM user_library), (SELECT count(*) FROM paper_texts)`).Scan(&papers, &chunks, &libraries, &texts))
	require.Zero(t, papers+chunks+libraries+texts, "no paper, chunk, text or library row is left")
}

// The test case: about 0.5 MB of PDF whose 300 pages expand to 14.6 MB of
// text, past the 8 MiB text cap (pdftext's TestExtractDensePDFStaysUnderTheMemoryBound
// measures the memory this takes).
func TestAPDFThatExpandsPastTheTextCapFailsAndLeavesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, res := b.upload(t, b.ann, "dense.pdf", pdftexttest.Dense(pdftexttest.DenseConfig{}))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "discarded", state, "a failed job")
	require.Contains(t, output, "pdf_too_much_text")
	require.Contains(t, output, "The PDF holds more text than Lectern reads from one paper (8 MB); split it or upload the article alone.")
	b.requireNothingLeft(t)
}

func TestAPDFOverThePassageCapFailsAndLeavesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w *Worker) { w.MaxPassages = 3 })
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "discarded", state, "a failed job")
	require.Contains(t, output, "pdf_too_many_passages")
	require.Contains(t, output, "The PDF makes more than 3 passages, more than Lectern keeps for one paper; split it or upload the article alone.")
	b.requireNothingLeft(t)
}

func TestUploadRefusesWhatIsNotAPDF(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, _ := b.upload(t, b.ann, "looks.pdf", []byte("<html>not a pdf at all</html>"))
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code)
	require.Contains(t, rec.Body.String(), "not_a_pdf")
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM papers`).Scan(&n))
	require.Zero(t, n)
	entries, err := os.ReadDir(b.api.store.dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is kept of a refused upload")
}

// lexical is the builtin plugin's embedding, in process.
var lexical = embedding.Provider{P: extractive.New(nil), Name: "lectern-lexical-v2-384"}

// renamed is the lexical embedding under another model name: a model change.
type renamed struct{ embedding.Embedder }

func (r renamed) Embed(ctx context.Context, texts []string) (embedding.Result, error) {
	res, err := r.Embedder.Embed(ctx, texts)
	res.Model = "lexical-renamed"
	return res, err
}

func TestReembedMovesEveryPassageToTheNewModel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	count := func(model string) (n int) {
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM chunk_embeddings WHERE model = $1`, model).Scan(&n))
		return n
	}
	var chunks int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM paper_chunks`).Scan(&chunks))
	require.Equal(t, chunks, count(lexical.Name))

	w := &ReembedWorker{Pool: b.pool, Embedder: renamed{lexical}, Vectors: embedded.New(b.pool)}
	out, err := w.Reembed(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(chunks), out.Embedded)
	require.Equal(t, int64(chunks), out.Dropped)
	require.Equal(t, chunks, count("lexical-renamed"))
	require.Zero(t, count(lexical.Name), "the old model's vectors are gone")

	out, err = w.Reembed(ctx)
	require.NoError(t, err)
	require.Zero(t, out.Embedded, "a second run finds nothing left to do")
}
