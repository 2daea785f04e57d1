package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/ingest"
)

// uploadAndIngest uploads a fixture PDF as u (a session, as the dashboard does)
// and runs the ingest job's work on it (the test host runs no workers).
func uploadAndIngest(t *testing.T, b *testBundle, u uuid.UUID, fixture string) uuid.UUID {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "paper.pdf")
	require.NoError(t, err)
	_, err = fw.Write(fixturetest.Read(t, fixture))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	req, err := http.NewRequest(http.MethodPost, b.server.URL+"/api/papers/upload", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.server.URL)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: signIn(t, b, u)})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	var res ingest.UploadResult
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&res))
	var sum string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT args->>'sha256' FROM river_job WHERE id = $1`, res.Job.ID).Scan(&sum))
	_, err = b.app.Ingest.Ingest(context.Background(), ingest.Args{PaperID: res.PaperID, SHA256: sum}, u, func(int, string) {})
	require.NoError(t, err)
	return res.PaperID
}

// TestAskGivesACitedAnswer: /ask answers from the user's own paper with
// numbered sources, each a link to the cited page in the dashboard's reader;
// another user's chat asking the same finds nothing of it.
func TestAskGivesACitedAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	ann := b.user(t, "ann@example.org", "UTC")
	bob := b.user(t, "bob@example.org", "UTC")
	paper := uploadAndIngest(t, b, ann.ID, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	b.pair(t, "ann-chat", ann.ID)
	b.pair(t, "bob-chat", bob.ID)
	const q = "/ask Why was it difficult for participants to stay motivated to maintain exercise after the programme ended?"

	got := b.say(t, "ann-chat", q)
	require.Len(t, got, 1)
	link := regexp.MustCompile(`\[1\] .+, p\. \d+(?: \(unverified\))?: http://lectern\.test/papers/` + paper.String() + `/read\?page=\d+&passage=[0-9a-f-]{36}`)
	require.Regexp(t, link, got[0].Text)

	got = b.say(t, "bob-chat", q)
	require.Len(t, got, 1)
	require.NotContains(t, got[0].Text, paper.String(), "Ann's private paper is no source of Bob's")
}
