package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/netguard"
)

// onlyServer lets a test's fetcher reach one local server and nothing else, the way
// the host's reaches only public addresses.
func onlyServer(srv *httptest.Server) func(netip.AddrPort) error {
	allowed := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return func(ap netip.AddrPort) error {
		if ap == allowed {
			return nil
		}
		return netguard.PublicOnly(ap)
	}
}

func TestFetchRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	store := NewStore(filepath.Join(t.TempDir(), "pdfs"))
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("%PDF-1.4 secret internal document"))
	}))
	t.Cleanup(internal.Close)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/secret.pdf", http.StatusFound)
	}))
	t.Cleanup(gateway.Close)

	host := NewFetcher(netguard.PublicOnly)
	for _, link := range []string{
		internal.URL + "/secret.pdf",               // loopback
		"http://169.254.169.254/latest/meta-data/", // cloud metadata
		"http://[::1]:1/x.pdf",                     // IPv6 loopback
		"ftp://example.org/paper.pdf",              // not http(s)
		"https://user:pass@example.org/paper.pdf",  // credentials
	} {
		_, err := host.Fetch(context.Background(), store, link)
		require.ErrorIs(t, err, ErrFetch, link)
	}

	// Even when the first hop is allowed, a redirect to an internal address is not.
	f := NewFetcher(onlyServer(gateway))
	_, err := f.Fetch(context.Background(), store, gateway.URL+"/paper.pdf")
	require.ErrorIs(t, err, ErrFetch)
	require.Contains(t, err.Error(), "refusing to connect to 127.0.0.1")
}

func TestIngestFromALink(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/arxiv_2304.02623v1_beyond_summarization.pdf")
	b := setup(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/notpdf" {
			_, _ = w.Write([]byte("<html>a landing page</html>"))
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	b.api.fetcher = NewFetcher(onlyServer(srv))

	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility, pdf_url) VALUES ('Beyond Summarization', 'arxiv', 'public', $1) RETURNING id`,
		srv.URL+"/2304.02623v1.pdf").Scan(&paper))
	call := func(user uuid.UUID, body any) *httptest.ResponseRecorder {
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		r := httptest.NewRequest(http.MethodPost, "/api/papers/"+paper.String()+"/ingest", bytes.NewReader(raw))
		r.Header.Set("Content-Type", "application/json")
		rc := chi.NewRouteContext()
		rc.URLParams.Add("id", paper.String())
		r = r.WithContext(context.WithValue(auth.WithCaller(r.Context(), auth.Caller{UserID: user}), chi.RouteCtxKey, rc))
		rec := httptest.NewRecorder()
		b.api.IngestURL(rec, r)
		return rec
	}

	rec := call(b.ann, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var res UploadResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	var chunks, inLibrary int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM paper_chunks WHERE paper_id = $1),
		(SELECT count(*) FROM user_library WHERE paper_id = $1 AND user_id = $2)`, paper, b.ann).Scan(&chunks, &inLibrary))
	require.Positive(t, chunks)
	require.Equal(t, 1, inLibrary)

	rec = call(b.ann, map[string]string{"url": srv.URL + "/notpdf"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "does not lead to a PDF")
	rec = call(b.ann, map[string]string{"url": "http://10.0.0.8/internal.pdf"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "private address")
}
