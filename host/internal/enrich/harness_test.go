package enrich

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// replay is a source's upstream API answering from the shared recordings of real
// responses (../shared/fixtures): route names the recording of a request, "" for
// one that was never recorded, which gets the source's recorded "not found".
// While down is set every request gets 503.
type replay struct {
	srv  *httptest.Server
	down atomic.Bool
	hits atomic.Int32
}

// answer is one recorded response.
type answer struct {
	status int
	ctype  string
	file   string // under the fixtures folder
}

func newReplay(t *testing.T, route func(r *http.Request) answer) *replay {
	t.Helper()
	dir := fixturetest.Dir(t)
	rp := &replay{}
	rp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.hits.Add(1)
		if rp.down.Load() {
			http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
			return
		}
		a := route(r)
		body, err := os.ReadFile(filepath.Join(dir, a.file))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(rp.srv.Close)
	return rp
}

// The recordings each source replays, by request.
func crossrefRoute(r *http.Request) answer {
	switch {
	case r.URL.Path == "/works/10.1038/s42256-024-00832-8":
		return answer{200, "application/json", "crossref/works_doi_10.1038_s42256-024-00832-8.json"}
	case r.URL.Path == "/works" && strings.Contains(strings.ToLower(r.URL.Query().Get("query")), "explanations of molecular prediction"):
		return answer{200, "application/json", "crossref/works_query_title_perspective_explanations_molecular.json"}
	case r.URL.Path == "/works":
		return answer{200, "application/json", "crossref/works_query_title_gibberish.json"}
	}
	return answer{404, "text/plain", "crossref/works_doi_arxiv_404_resource_not_found.txt"}
}

func semanticScholarRoute(r *http.Request) answer {
	switch {
	case r.URL.Path == "/paper/DOI:10.1038/s42256-024-00832-8":
		return answer{200, "application/json", "semanticscholar/paper_by_doi_many_fields_s42256-024-00832-8.json"}
	case r.URL.Path == "/paper/search":
		return answer{200, "application/json", "semanticscholar/paper_search_empty.json"}
	}
	return answer{404, "application/json", "semanticscholar/paper_not_found_404.json"}
}

func openAlexRoute(r *http.Request) answer {
	if r.URL.Path == "/works" {
		return answer{200, "application/json", "openalex/works_filter_title_search_paperqa.json"}
	}
	return answer{404, "text/html", "openalex/works_doi_not_found_404.html"}
}

func arxivRoute(r *http.Request) answer {
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/oai2":
		return answer{200, "text/xml", "arxiv/oai_error_idDoesNotExist.xml"}
	case strings.HasPrefix(q.Get("id_list"), "1707.08567"):
		return answer{200, "application/atom+xml", "arxiv/query_id_1707.08567_many_authors.xml"}
	case q.Get("id_list") != "":
		return answer{200, "application/atom+xml", "arxiv/query_empty_result_id_0000.0000.xml"}
	}
	return answer{200, "application/atom+xml", "arxiv/search_all_testing_start0_max10.xml"}
}

// recorded is the real source plugins, built and started against replays of their
// recorded APIs, in plugins.toml's order of preference for lookups here.
type recorded struct {
	host    *pluginhost.Host
	replays map[string]*replay
}

// startRecorded builds crossref, semanticscholar, openalex and arxiv and starts
// them through the plugin host, each pointed at its replay.
func startRecorded(t *testing.T) *recorded {
	t.Helper()
	rec := &recorded{replays: map[string]*replay{
		"crossref": newReplay(t, crossrefRoute), "semanticscholar": newReplay(t, semanticScholarRoute),
		"openalex": newReplay(t, openAlexRoute), "arxiv": newReplay(t, arxivRoute),
	}}
	fast := func(name string) map[string]any {
		base := rec.replays[name].srv.URL
		switch name {
		case "semanticscholar":
			return map[string]any{"base_url": base, "rate_interval": "0s", "backoff": "1ms", "max_backoff": "5ms", "timeout": "5s"}
		case "arxiv":
			return plugintest.FastSettings(base+"/api/query", map[string]any{"oai_base_url": base + "/oai2"})
		}
		return plugintest.FastSettings(base, nil)
	}
	var entries []pluginhost.Entry
	for _, name := range []string{"crossref", "semanticscholar", "openalex", "arxiv"} {
		bin := plugintest.Build(t, "../../../plugins/sources/"+name)
		entries = append(entries, pluginhost.Entry{Name: name, Kind: protocol.KindSource, Path: bin, Enabled: true,
			CallTimeout: 30 * time.Second, MaxConcurrency: 4, Settings: fast(name)})
	}
	rec.host = pluginhost.New(entries, pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, rec.host.Start(context.Background()))
	t.Cleanup(rec.host.Close)
	return rec
}

// sources lists the running plugins for search, in start order.
func (rec *recorded) sources() []search.Named {
	var out []search.Named
	for _, s := range rec.host.Sources() {
		out = append(out, search.Named{Name: s.Name, Searcher: s.Source})
	}
	return out
}

// setDown takes every replay down or brings it back.
func (rec *recorded) setDown(down bool) {
	for _, rp := range rec.replays {
		rp.down.Store(down)
	}
}

// bundle is one database with two users, the ingest pipeline and the enrichment.
type bundle struct {
	pool     *pgxpool.Pool
	ann, bob uuid.UUID
	svc      *Service
	worker   *Worker
	uploads  *ingest.API
	queue    *jobs.Service
}

// setupOpts shape a bundle.
type setupOpts struct {
	// auto registers paper.enrich and lets ingest enqueue it, as the host does;
	// otherwise tests call Service.Enrich themselves.
	auto    bool
	retries []time.Duration
	moves   []MoveFunc
}

func setup(t *testing.T, rec *recorded, o setupOpts) *bundle {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewDB(t)
	b := &bundle{pool: pool}
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&b.ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&b.bob))
	logger := slog.New(slog.DiscardHandler)
	store := ingest.NewStore(filepath.Join(t.TempDir(), "pdfs"))
	b.svc = &Service{Pool: pool, Search: search.New(pool, rec.sources), Logger: logger, PDFs: store, MoveFuncs: o.moves}
	b.worker = &Worker{Service: b.svc, Retries: o.retries}
	reader := &ingest.Worker{Pool: pool, Store: store, Logger: logger}
	reg := jobs.NewRegistry()
	require.NoError(t, ingest.RegisterJobs(reg, reader))
	if o.auto {
		require.NoError(t, RegisterJobs(reg, b.worker))
	}
	queue, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: logger, Registry: reg})
	require.NoError(t, err)
	if o.auto {
		reader.EnrichTxFunc = EnqueueTxFunc(queue)
	}
	require.NoError(t, queue.Start(ctx))
	t.Cleanup(func() { _ = queue.Stop(context.Background()) })
	b.queue, b.uploads = queue, ingest.NewAPI(pool, store, queue, ingest.NewFetcher(netguard.PublicOnly))
	return b
}

// upload sends a PDF as user and waits until its text is read; it returns the
// paper.
func (b *bundle) upload(t *testing.T, user uuid.UUID, name string, pdf []byte) uuid.UUID {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(t, err)
	_, err = fw.Write(pdf)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	r := httptest.NewRequest(http.MethodPost, "/api/papers/upload", &buf)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r = r.WithContext(auth.WithCaller(r.Context(), auth.Caller{UserID: user, Role: "user"}))
	w := httptest.NewRecorder()
	b.uploads.Upload(w, r)
	require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
	var res ingest.UploadResult
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &res))
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	return res.PaperID
}

// waitJob waits until job id ends and returns River's state and the job's output.
func (b *bundle) waitJob(t *testing.T, id int64) (string, string) {
	t.Helper()
	var state, output string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		require.NoError(t, b.pool.QueryRow(context.Background(),
			`SELECT state, coalesce(metadata->>'output', '') FROM river_job WHERE id = $1`, id).Scan(&state, &output))
		if state == "completed" || state == "discarded" || state == "cancelled" {
			return state, output
		}
	}
	t.Fatalf("job %d still %s after a minute", id, state)
	return "", ""
}

// enrichJob is the paper.enrich job of paper.
func (b *bundle) enrichJob(t *testing.T, paper uuid.UUID) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT id FROM river_job WHERE kind = 'paper.enrich' AND args->>'paper_id' = $1`, paper.String()).Scan(&id))
	return id
}

// item is the paper as user reads it through the papers store (the API's answer).
func (b *bundle) item(t *testing.T, user, paper uuid.UUID) papers.Item {
	t.Helper()
	it, err := papers.New(b.pool).Get(context.Background(), user, paper)
	require.NoError(t, err)
	return it
}

// text is the paper's stored text.
func (b *bundle) text(t *testing.T, paper uuid.UUID) string {
	t.Helper()
	var s string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT content FROM paper_texts WHERE paper_id = $1`, paper).Scan(&s))
	return s
}

// row is a paper's whole row as text, to show that nothing in it changed.
func (b *bundle) row(t *testing.T, paper uuid.UUID) string {
	t.Helper()
	var s string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT to_jsonb(p) - 'search_vector' FROM papers p WHERE id = $1`, paper).Scan(&s))
	return s
}

func names(as []papers.Author) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

// shared adds a public record to the corpus, as a search by someone would.
func (b *bundle) shared(t *testing.T, in papers.Input) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	in.Visibility = "public"
	id, _, err := papers.UpsertTx(ctx, tx, in, nil)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return id
}
