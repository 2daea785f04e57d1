package app

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/sse"
)

// events reads a server-sent event stream into (name, data) pairs.
func events(t *testing.T, body string) [][2]string {
	t.Helper()
	r := sse.NewReader(bufio.NewReader(strings.NewReader(body)))
	var out [][2]string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		out = append(out, [2]string{ev.Name, string(ev.Data)})
	}
	return out
}

// uploadAndIngest uploads a fixture PDF as the signed-in user and runs the ingest
// job's work on it (the test host runs no workers).
func (b *testBundle) uploadAndIngest(t *testing.T, cookie, fixture string) uuid.UUID {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/papers/upload", cookie: cookie,
		body: upload{name: "paper.pdf", content: fixturetest.Read(t, fixture)}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var res ingest.UploadResult
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	var sum string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT args->>'sha256' FROM river_job WHERE id = $1`, res.Job.ID).Scan(&sum))
	var owner uuid.UUID
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT user_id FROM user_library WHERE paper_id = $1`, res.PaperID).Scan(&owner))
	_, err := b.app.Ingest.Ingest(context.Background(), ingest.Args{PaperID: res.PaperID, SHA256: sum}, owner, func(int, string) {})
	require.NoError(t, err)
	return res.PaperID
}

func TestAskStreamsACitedAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	b.user(t, "bo@example.org", "user")
	ann, bo := b.signIn(t, "ann@example.org"), b.signIn(t, "bo@example.org")
	paperID := b.uploadAndIngest(t, ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	ask := func(cookie string, body map[string]any) (int, string) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: cookie, body: body})
		return rec.Code, rec.Body.String()
	}
	code, body := ask(ann, map[string]any{"question": "Why was it difficult for participants to stay motivated to maintain exercise after the programme ended?"})
	require.Equal(t, http.StatusOK, code, body)
	evs := events(t, body)
	require.GreaterOrEqual(t, len(evs), 3)
	var text strings.Builder
	i := 0
	for ; i < len(evs) && evs[i][0] == rag.EventToken; i++ {
		var tok struct{ Text string }
		require.NoError(t, json.Unmarshal([]byte(evs[i][1]), &tok))
		text.WriteString(tok.Text)
	}
	require.Greater(t, i, 1, "the answer streams in several tokens")
	require.Equal(t, rag.EventCitations, evs[i][0], body)
	var cites struct{ Citations []rag.Citation }
	require.NoError(t, json.Unmarshal([]byte(evs[i][1]), &cites))
	require.NotEmpty(t, cites.Citations)
	require.Equal(t, paperID, cites.Citations[0].PaperID)
	require.Equal(t, 3, cites.Citations[0].Page)
	require.Contains(t, text.String(), "["+cites.Citations[0].Marker+"]")
	require.Equal(t, sse.DoneEvent, evs[len(evs)-1][0])
	require.JSONEq(t, `{"model":"extractive","method":"extractive","answered":true}`, evs[len(evs)-1][1])

	// Bo may not name Ann's upload, and his corpus has nothing to answer from.
	code, body = ask(bo, map[string]any{"question": "Why was it difficult to stay motivated?", "paper_ids": []string{paperID.String()}})
	require.Equal(t, http.StatusNotFound, code, body)
	code, body = ask(bo, map[string]any{"question": "Why was it difficult to stay motivated?", "scope": "corpus"})
	require.Equal(t, http.StatusOK, code, body)
	require.NotContains(t, body, paperID.String())
	require.Contains(t, body, `"answered":false`)

	code, body = ask(ann, map[string]any{"question": ""})
	require.Equal(t, http.StatusUnprocessableEntity, code, body)
	code, _ = ask("", map[string]any{"question": "anything"})
	require.Equal(t, http.StatusUnauthorized, code)

	// Each question may cost a model call: a user asks at most 20 a minute.
	for range rag.AsksPerMinute - 2 {
		code, _ = ask(ann, map[string]any{"question": ""})
		require.Equal(t, http.StatusUnprocessableEntity, code)
	}
	rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: ann, body: map[string]any{"question": "one more?"}})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	code, _ = ask(bo, map[string]any{"question": "Why was it difficult to stay motivated?", "scope": "corpus"})
	require.Equal(t, http.StatusOK, code, "another user's budget is their own")
}
