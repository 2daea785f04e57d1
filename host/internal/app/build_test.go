package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/qdrant"
)

// The ingest worker writes to the vector store the API searches: a passage is
// found by its vector at once, not only after the embedded store's next refresh
// (RefreshEvery), as it was when lectern serve gave the worker a store of its own
// and app.New made another for the API.
func TestIngestWritesTheVectorStoreTheAPISearches(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	b := setup(t, map[string]string{"LECTERN_DATA_DIR": dataDir})
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	// One word the paper never uses empties the full-text match (its words are
	// AND-ed): only the vector ranking can find passages for this query.
	path := "/api/search/chunks?q=" + url.QueryEscape("participants motivated exercise programme qzxvjwk")
	search := func() []retrieve.Passage {
		t.Helper()
		rec := b.do(t, req{method: http.MethodGet, path: path, cookie: ann})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var res struct{ Items []retrieve.Passage }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
		return res.Items
	}
	require.Empty(t, search(), "nothing is ingested yet; the search loads the model's vectors")

	paperID := b.uploadAndIngest(t, ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	found := search()
	require.NotEmpty(t, found, "the vectors the worker wrote are the ones the API searches")
	require.Equal(t, paperID, found[0].PaperID)
	require.DirExists(t, filepath.Join(dataDir, "vectors"), "the embedded store keeps its files of exact vectors under LECTERN_DATA_DIR")
}

// A vector store the configuration names but that cannot be built stops the host
// from being built, with a sentence naming the variable; it never falls back to
// the embedded store.
func TestBuildRefusesAVectorStoreItCannotBuild(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"SERVICE_CONFIG_KEY": testConfigKey,
		"LECTERN_DATA_DIR":   t.TempDir(),
		"QDRANT_URL":         "ftp://qdrant.internal:6334",
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	a, err := Build(context.Background(), Options{Config: cfg, Pool: dbtest.NewDB(t), Logger: slog.New(slog.DiscardHandler)})
	require.Nil(t, a)
	require.ErrorContains(t, err, "QDRANT_URL names a vector store that cannot be used")
	require.ErrorContains(t, err, "must start with http:// or https://")
}

// With QDRANT_URL set, the ingest worker writes to the Qdrant mirror the host
// was configured with, the same one Build made (no connection is made until the
// first call).
func TestBuildUsesTheConfiguredVectorStore(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"QDRANT_URL": "http://127.0.0.1:6334"})
	m, ok := b.app.Vectors.(vectorstore.Mirrored)
	require.True(t, ok, "QDRANT_URL asks for Qdrant mirrored from PostgreSQL, got %T", b.app.Vectors)
	require.IsType(t, &qdrant.Store{}, m.Index)
	w, ok := b.app.Ingest.Vectors.(vectorstore.Mirrored)
	require.True(t, ok, "the ingest worker writes the configured store, got %T", b.app.Ingest.Vectors)
	require.Same(t, m.Index, w.Index)
	require.Same(t, m.Truth, w.Truth)
}
