package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/sdk/llm"
)

// customModel is the name vectors of the custom endpoint's model are stored under.
const customModel = "custom_compatible/nomic-embed-text"

// reassigning is a gateway's builtin provider that, once its embedding call number
// at has answered, reassigns the embed role to the custom endpoint: an admin
// changing the model while a job embeds.
type reassigning struct {
	llm.Provider
	gw    *llmgw.Gateway
	at    int32
	calls atomic.Int32
}

func (r *reassigning) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	resp, err := r.Provider.Embed(ctx, req)
	if r.calls.Add(1) == r.at {
		if _, aerr := r.gw.Assign(ctx, llmgw.RoleEmbed, llmgw.CustomCompatible, "nomic-embed-text"); aerr != nil {
			return nil, aerr
		}
	}
	return resp, err
}

// reassigningEmbedder is the embed role behind a gateway whose role changes after
// embedding call number at. The custom endpoint's model is the lexical embedding
// under another name.
func reassigningEmbedder(t *testing.T, w *Worker, at int32) llmgw.Embedder {
	t.Helper()
	keys, err := secrets.NewKeyring("a7c1e9f3b5d2a8c4e6f0b1d9c3a5e7f2b4d6c8e0", "")
	require.NoError(t, err)
	settings := userconfig.New(w.Pool, keys)
	v, _ := json.Marshal("http://127.0.0.1:11434/v1")
	_, err = settings.PutSystem(context.Background(), llmgw.BaseURLKey, v)
	require.NoError(t, err)
	builtin := &reassigning{Provider: lexical.P, at: at}
	builtin.gw = llmgw.New(llmgw.Config{Settings: settings, Builtin: builtin,
		Plugins: func(name string) (llm.Provider, error) {
			if name != "openai" {
				return nil, errors.New("not running")
			}
			return otherName{lexical.P}, nil
		}})
	return llmgw.Embedder{G: builtin.gw}
}

// otherName is the custom endpoint's plugin: it serves the lexical embedding under
// any model name.
type otherName struct{ llm.Provider }

func (o otherName) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	r := *req
	r.Model = lexical.Name
	return o.Provider.Embed(ctx, &r)
}

func (b *bundle) vectorsByModel(t *testing.T) map[string]int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT model, count(*) FROM chunk_embeddings GROUP BY model`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var model string
		var n int
		require.NoError(t, rows.Scan(&model, &n))
		out[model] = n
	}
	require.NoError(t, rows.Err())
	return out
}

func TestARoleChangeBetweenBatchesStoresThePaperUnderTheNewModel(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w *Worker) { w.Embedder, w.EmbedBatch = reassigningEmbedder(t, w, 1), 8 })
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	var chunks int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM paper_chunks`).Scan(&chunks))
	require.Greater(t, chunks, b.worker.EmbedBatch, "the paper is embedded in more than one batch")
	// The first batch was the builtin model's; the rest came from the custom model.
	// Nothing of the first is left, and no vector is stored under a model that did
	// not make it.
	require.Equal(t, map[string]int{customModel: chunks}, b.vectorsByModel(t))
}

func TestARoleChangeDuringReembedStoresNothingUnderTheWrongModel(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w *Worker) { w.Embedder = nil })
	ctx := context.Background()
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	var chunks int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM paper_chunks`).Scan(&chunks))
	require.Empty(t, b.vectorsByModel(t))

	// The run learns the builtin model from its probe; the role then changes and
	// the first round comes back from the custom model.
	w := &ReembedWorker{Pool: b.pool, Embedder: reassigningEmbedder(t, b.worker, 1), Vectors: embedded.New(b.pool)}
	_, err := w.Reembed(ctx)
	require.ErrorIs(t, err, ErrModelChanged)
	require.ErrorContains(t, err, "from lectern-lexical-v2-384 to "+customModel)
	require.Empty(t, b.vectorsByModel(t), "the custom model's vectors were not stored under the builtin name")

	// The next attempt works for the new model.
	out, err := w.Reembed(ctx)
	require.NoError(t, err)
	require.Equal(t, customModel, out.Model)
	require.Equal(t, int64(chunks), out.Embedded)
	require.Equal(t, map[string]int{customModel: chunks}, b.vectorsByModel(t))
}

// signalling is an embedder that calls called before each embedding.
type signalling struct {
	embedding.Embedder
	called func()
}

func (s signalling) Embed(ctx context.Context, texts []string) (embedding.Result, error) {
	s.called()
	return s.Embedder.Embed(ctx, texts)
}

// The passages are embedded while PostgreSQL stores them, not after: with the
// paper's row locked by another transaction, so that the job's save waits, the
// embedder is called all the same; the vectors are written once the text is.
func TestPassagesAreEmbeddedWhileTheirTextIsStored(t *testing.T) {
	t.Parallel()
	called := make(chan struct{})
	var once sync.Once
	b := setup(t, func(w *Worker) {
		w.Embedder = signalling{Embedder: lexical, called: func() { once.Do(func() { close(called) }) }}
	})
	ctx := context.Background()
	rec, res := b.upload(t, b.ann, "rrp.pdf", fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	// Taken while the job still extracts the PDF (a hundred milliseconds or more).
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM papers WHERE id = $1 FOR UPDATE`, res.PaperID)
	require.NoError(t, err)
	select {
	case <-called:
	case <-time.After(time.Minute):
		t.Fatal("nothing was embedded while the text waited to be stored")
	}
	var stored int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM paper_chunks WHERE paper_id = $1`, res.PaperID).Scan(&stored))
	require.Zero(t, stored, "the text is not stored yet")
	require.Empty(t, b.vectorsByModel(t), "nor any vector")
	require.NoError(t, tx.Rollback(ctx))

	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM paper_chunks WHERE paper_id = $1`, res.PaperID).Scan(&stored))
	require.Positive(t, stored)
	require.Equal(t, map[string]int{lexical.Name: stored}, b.vectorsByModel(t))
}
