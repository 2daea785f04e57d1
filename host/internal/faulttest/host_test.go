package faulttest

import (
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// TestHostKilledMidUploadLeavesNoOrphan is the fault "the host is killed with -9 in
// the middle of an upload": half of a PDF is on disk when the process dies. The
// client's upload was never acknowledged, and after a restart nothing of it stays:
// no staged file, no paper, no job. The same upload then succeeds and is read.
func TestHostKilledMidUploadLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/arxiv_2304.02623v1_beyond_summarization.pdf")
	pool := dbtest.NewDB(t)
	dataDir := t.TempDir()
	cfg := hostConfig{DatabaseURL: databaseURL(pool), DataDir: dataDir}
	h := startHost(t, cfg)
	_, cookie := signedInUser(t, pool, "ann@example.org")

	// The browser sends the first half and then waits (a slow link).
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, err := http.NewRequest(http.MethodPost, h.base+"/api/papers/upload", pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(&http.Cookie{Name: "service_session", Value: cookie})
	answered := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			err = &unexpectedAnswer{status: resp.StatusCode}
		}
		answered <- err
	}()
	fw, err := mw.CreateFormFile("file", "beyond.pdf")
	require.NoError(t, err)
	half := len(pdf) / 2
	_, err = fw.Write(pdf[:half])
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for _, name := range staged(t, dataDir) {
			if fi, err := os.Stat(filepath.Join(dataDir, "pdfs", name)); err == nil && fi.Size() >= int64(half)/2 {
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond, "the upload is being written to the data folder")

	h.kill()
	_ = pw.CloseWithError(io.ErrClosedPipe)
	select {
	case err := <-answered:
		var ua *unexpectedAnswer
		require.NotErrorAs(t, err, &ua, "an upload cut by the crash is never acknowledged")
	case <-time.After(30 * time.Second):
		t.Fatal("the client was left hanging by a dead server")
	}
	require.NotEmpty(t, staged(t, dataDir), "the crash left the half-written upload behind (the fault the sweep must undo)")

	h = startHost(t, cfg)
	require.Eventually(t, func() bool { return len(staged(t, dataDir)) == 0 }, time.Minute, 50*time.Millisecond,
		"after the restart no staged upload is left: %v", pdfFolder(t, dataDir))
	require.Empty(t, pdfFolder(t, dataDir), "no orphan file in the data folder")
	var papers, jobs int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM river_job)`).Scan(&papers, &jobs))
	require.Zero(t, papers, "no paper of an upload that was never acknowledged")
	require.Zero(t, jobs)

	status, body := h.upload(t, cookie, "beyond.pdf", pdf)
	require.Equal(t, http.StatusAccepted, status, string(body))
	var res uploadResult
	decode(t, body, &res)
	require.Equal(t, 1, waitJobDone(t, pool, res.Job.ID, 2*time.Minute))
	requireReadOnce(t, pool, res.PaperID)
	require.Equal(t, []string{sha256Hex(pdf) + ".pdf"}, pdfFolder(t, dataDir))
}

// TestHostKilledMidIngestRecoversTheJob is the fault "the host is killed with -9 in
// the middle of an ingest": the ingest job is running (held at pdftotext, a real
// child process) when the host and its children die. After a restart the job that
// was left "running" is given back to the queue at once (jobs.rescueAbandoned),
// runs again and finishes, once: the paper is read, no longer "being read", with
// each passage once.
func TestHostKilledMidIngestRecoversTheJob(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/arxiv_2304.02623v1_beyond_summarization.pdf")
	pool := dbtest.NewDB(t)
	dataDir := t.TempDir()
	held := newGate(t)
	h := startHost(t, hostConfig{DatabaseURL: databaseURL(pool), DataDir: dataDir, PathPrefix: held.dir})
	_, cookie := signedInUser(t, pool, "ann@example.org")

	status, body := h.upload(t, cookie, "beyond.pdf", pdf)
	require.Equal(t, http.StatusAccepted, status, string(body))
	var res uploadResult
	decode(t, body, &res)
	held.waitHeld(t)
	state, attempt := jobState(t, pool, res.Job.ID)
	require.Equal(t, "running", state)
	require.Equal(t, 1, attempt)

	h.kill()
	state, _ = jobState(t, pool, res.Job.ID)
	require.Equal(t, "running", state, "the crash left the job 'running' (the fault the rescue must undo)")

	h = startHost(t, hostConfig{DatabaseURL: databaseURL(pool), DataDir: dataDir}) // the real pdftotext
	began := time.Now()
	attempts := waitJobDone(t, pool, res.Job.ID, 2*time.Minute)
	require.Equal(t, 2, attempts, "the job ran once more after the crash, not more")
	t.Logf("the abandoned job finished %s after the restart", time.Since(began).Round(time.Millisecond))
	requireReadOnce(t, pool, res.PaperID)

	// The owner reads it as done, with the crash in its history.
	status, body = h.do(t, cookie, http.MethodGet, "/api/jobs/"+itoa(res.Job.ID), nil, "")
	require.Equal(t, http.StatusOK, status, string(body))
	var env struct {
		State string `json:"state"`
	}
	decode(t, body, &env)
	require.Equal(t, "succeeded", env.State)
	var rescued bool
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT metadata ? 'lectern:rescued_from' FROM river_job WHERE id = $1`, res.Job.ID).Scan(&rescued))
	require.True(t, rescued, "it was the rescue that gave the job back, not River's hour-long rescuer")
	require.Equal(t, []string{sha256Hex(pdf) + ".pdf"}, pdfFolder(t, dataDir), "its PDF stays, and nothing else")
}
