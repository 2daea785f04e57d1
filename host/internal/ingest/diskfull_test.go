package ingest

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// fullDisk is a real temporary file of the store that takes room bytes and then
// fails every write as a full file system does (ENOSPC), after part of the PDF is
// on disk: the state a real full disk leaves behind.
type fullDisk struct {
	*os.File
	room    int64
	written int64
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if f.written+int64(len(p)) > f.room {
		n, _ := f.File.Write(p[:f.room-f.written])
		f.written += int64(n)
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

// fillDisk makes the store's data folder "full" after room bytes of each staged
// file, until the returned func frees it.
func fillDisk(s *Store, room int64) (free func()) {
	var full atomic.Bool
	full.Store(true)
	real := s.createTemp
	s.createTemp = func(dir, pattern string) (stagingFile, error) {
		f, err := real(dir, pattern)
		if err != nil || !full.Load() {
			return f, err
		}
		return &fullDisk{File: f.(*os.File), room: room}, nil
	}
	return func() { full.Store(false) }
}

// requireDiskFullAnswer checks a 507 that says in a sentence what happened and
// what to do, with no errno text.
func requireDiskFullAnswer(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusInsufficientStorage, rec.Code, rec.Body.String())
	var body struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	require.Equal(t, "insufficient_storage", body.Code, rec.Body.String())
	require.Contains(t, body.Detail, "disk is full")
	require.Contains(t, body.Detail, "try again later")
	require.True(t, strings.HasSuffix(body.Detail, "."), "a sentence: %q", body.Detail)
	for _, raw := range []string{"no space left", "enospc", ".part", "upload-", "ingest:"} {
		require.NotContains(t, strings.ToLower(rec.Body.String()), raw, "no raw file-system text reaches the client")
	}
}

// TestDiskFullOnUploadKeepsNothingAndSaysSo is the fault "the data folder's disk is
// full mid-upload": the client gets a 507 with a sentence, no partial file stays in
// the data folder, no paper or job is made, and the same upload succeeds once there
// is room again.
func TestDiskFullOnUploadKeepsNothingAndSaysSo(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	b := setup(t)
	ctx := context.Background()
	free := fillDisk(b.api.store, 4096) // the disk fills 4 KiB into the PDF
	require.Greater(t, len(pdf), 4096)

	rec, _ := b.upload(t, b.ann, "full.pdf", pdf)
	requireDiskFullAnswer(t, rec)
	requireEmptyDir(t, b.api.store.dir, "a PDF the disk had no room for leaves no partial file")
	var papers, jobs int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM river_job)`).Scan(&papers, &jobs))
	require.Zero(t, papers, "no paper for a PDF that was not kept")
	require.Zero(t, jobs, "no job for a PDF that was not kept")

	free()
	rec, res := b.upload(t, b.ann, "full.pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, "once there is room the same upload succeeds: %s", rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)
	entries, err := os.ReadDir(b.api.store.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one file, at its content address")
	require.Equal(t, digest(pdf)+".pdf", entries[0].Name())
}

// TestDiskFullOnFetchKeepsNothingAndSaysSo: the same fault while Lectern downloads
// a paper's PDF from its link.
func TestDiskFullOnFetchKeepsNothingAndSaysSo(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/clef2008_wang_answer_validation_word.pdf")
	b := setup(t)
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	b.api.fetcher = NewFetcher(onlyServer(srv))
	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility, pdf_url) VALUES ('Answer validation', 'arxiv', 'public', $1) RETURNING id`,
		srv.URL+"/paper.pdf").Scan(&paper))
	fillDisk(b.api.store, 4096)

	r := httptest.NewRequest(http.MethodPost, "/api/papers/"+paper.String()+"/ingest", nil)
	rc := chi.NewRouteContext()
	rc.URLParams.Add("id", paper.String())
	r = r.WithContext(context.WithValue(auth.WithCaller(r.Context(), auth.Caller{UserID: b.ann}), chi.RouteCtxKey, rc))
	rec := httptest.NewRecorder()
	b.api.IngestURL(rec, r)
	requireDiskFullAnswer(t, rec)
	requireEmptyDir(t, b.api.store.dir, "a download the disk had no room for leaves no partial file")
	var texts, jobs int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM paper_texts), (SELECT count(*) FROM river_job)`).Scan(&texts, &jobs))
	require.Zero(t, texts)
	require.Zero(t, jobs)
}
