package app

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/sse"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// The model roles through the real parts: the openai-compatible plugin binary,
// the routes, the job queue, and a local runtime that is either not there (a
// closed port) or an httptest server speaking the OpenAI API.

// withOpenAIPlugin is setup with the openai-compatible plugin running, as lectern
// serve starts it (one retry, to keep a dead endpoint's test short).
func withOpenAIPlugin(t *testing.T) *testBundle {
	t.Helper()
	bin := plugintest.Build(t, "../../../plugins/llm/openai")
	host := pluginhost.New([]pluginhost.Entry{{Name: "openai", Kind: protocol.KindLLM, Path: bin, Enabled: true,
		CallTimeout: time.Minute, MaxConcurrency: 4, Settings: map[string]any{"max_retries": 1, "backoff_base": "50ms"}}},
		pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, host.Start(context.Background()))
	t.Cleanup(host.Close)
	return setupWith(t, nil, func(o *Options) { o.Plugins = host })
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// useLocalModel saves the local runtime at baseURL and gives its model the
// answer, summarize and extract roles.
func (b *testBundle) useLocalModel(t *testing.T, admin, baseURL string) {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/providers/local", cookie: admin, body: map[string]any{"base_url": baseURL}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, role := range []string{"answer", "summarize", "extract"} {
		rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/roles/" + role, cookie: admin,
			body: map[string]any{"provider": "local", "model": "llama3.2"}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
}

// startJobs starts the job queue (the test host runs no workers until then).
func (b *testBundle) startJobs(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, b.app.Start(ctx))
	t.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = b.app.Stop(stop)
		cancel()
	})
}

// waitJob waits for the job to end and returns it.
func (b *testBundle) waitJob(t *testing.T, cookie string, id int64) jobs.Envelope {
	t.Helper()
	var env jobs.Envelope
	require.Eventually(t, func() bool {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/jobs/" + strconv.FormatInt(id, 10), cookie: cookie})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
		return env.State.Terminal()
	}, 90*time.Second, 200*time.Millisecond)
	return env
}

// requireNoNetworkText fails when body carries what a dialer or resolver says.
func requireNoNetworkText(t *testing.T, body string) {
	t.Helper()
	for _, raw := range []string{"dial tcp", "connect:", "connection refused", "lookup ", "Post \"", "Get \""} {
		require.NotContains(t, body, raw)
	}
}

// With the answer, summarize and extract roles pointed at a local runtime that
// is not running (a closed port), a question streams the builtin answer and a
// notice naming the role and the cause, and the summary and extraction jobs
// succeed with the builtin method's work and the same notice, which the paper's
// summary and extraction keep. Nothing answers 5xx or fails.
func TestAModelThatIsNotRunningFallsBack(t *testing.T) {
	t.Parallel()
	b := withOpenAIPlugin(t)
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	addr := closedPort(t)
	b.useLocalModel(t, admin, "http://"+addr+"/v1")
	paperID := b.uploadAndIngest(t, admin, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	const cause = "the endpoint refused the connection (is the model runtime running?)"

	rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: admin,
		body: map[string]any{"question": "Why was it difficult for participants to stay motivated after the programme ended?"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	evs := events(t, rec.Body.String())
	require.Equal(t, rag.EventToken, evs[0][0], "the builtin answer streams")
	require.Equal(t, sse.DoneEvent, evs[len(evs)-1][0])
	var done rag.Done
	require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-1][1]), &done))
	require.True(t, done.Answered)
	require.Equal(t, "extractive", done.Method)
	require.NotNil(t, done.Fallback)
	require.Equal(t, rag.Fallback{Role: "answer", Provider: "local", Model: "llama3.2", Endpoint: addr, Reason: cause,
		Message: "The model assigned to the answer role (local at " + addr + ") could not answer: " + cause +
			". This answer comes from the builtin extractive method instead."}, *done.Fallback)
	requireNoNetworkText(t, rec.Body.String())

	b.startJobs(t)
	for _, tc := range []struct{ enqueue, read, role string }{
		{"/summary", "/summary", "summarize"},
		{"/extract", "/extractions", "extract"},
	} {
		rec = b.do(t, req{method: http.MethodPost, path: "/api/papers/" + paperID.String() + tc.enqueue, cookie: admin})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		var accepted struct{ Job jobs.Envelope }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &accepted))
		env := b.waitJob(t, admin, accepted.Job.ID)
		require.Equal(t, jobs.StateSucceeded, env.State, "%s: %+v", tc.role, env.Error)
		require.Contains(t, string(env.Result), `"role":"`+tc.role+`"`, "the job's result names the fallback")
		requireNoNetworkText(t, string(env.Result))

		rec = b.do(t, req{method: http.MethodGet, path: "/api/papers/" + paperID.String() + tc.read, cookie: admin})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var stored struct {
			Method   string
			Fallback *rag.Fallback
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &stored))
		require.Equal(t, "extractive", stored.Method)
		require.NotNil(t, stored.Fallback, "%s keeps its notice: %s", tc.role, rec.Body.String())
		require.Equal(t, tc.role, stored.Fallback.Role)
		require.Equal(t, cause, stored.Fallback.Reason)
		requireNoNetworkText(t, rec.Body.String())
	}
}

// documentText reads one document's text from the user message the host sent
// (sdk/llm.FormatRequest).
func documentText(prompt, id string) (string, bool) {
	start := strings.Index(prompt, `<document id="`+id+`"`)
	if start < 0 {
		return "", false
	}
	rest := prompt[start:]
	open := strings.Index(rest, ">\n")
	end := strings.Index(rest, "\n</document>")
	if open < 0 || end < open {
		return "", false
	}
	return html.UnescapeString(rest[open+2 : end]), true
}

var plainSentence = regexp.MustCompile(`[A-Z][a-z][^.?!"\d\[\]]{60,220}[a-z]\.`)

// checkedModel is a local runtime speaking the OpenAI chat completions format:
// its answer quotes a sentence of S1 verbatim, paraphrases with a citation of S2,
// and cites S42, which it was not given, streamed in pieces of a few bytes so that
// markers are cut.
func checkedModel(t *testing.T, quoted *atomic.Value) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var body struct {
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) < 2 {
			http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
			return
		}
		s1, ok := documentText(body.Messages[len(body.Messages)-1].Content, "S1")
		sentence := plainSentence.FindString(strings.Join(strings.Fields(s1), " "))
		if !ok || sentence == "" {
			http.Error(w, `{"error": {"message": "no sentence to quote"}}`, http.StatusBadRequest)
			return
		}
		quoted.Store(sentence)
		answer := `The paper says: "` + sentence + `" [S1]. ` +
			`Put in other words, keeping to an exercise routine alone was harder than inside a supervised group [S2]. ` +
			`Another study found the opposite [S42].`
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(answer); i += 5 {
			d, _ := json.Marshal(map[string]string{"content": answer[i:min(i+5, len(answer))]})
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1735689600,\"model\":\"llama3.2\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1735689600,\"model\":\"llama3.2\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}

// A model's answer is checked like a quote: the sentence quoting S1 verbatim is
// verified, the paraphrase citing S2 is kept and marked unverified, and the
// citation of S42, a passage it was not given, is dropped from the text, the
// citations and the checks.
func TestModelAnswersAreCheckedLikeQuotes(t *testing.T) {
	t.Parallel()
	b := withOpenAIPlugin(t)
	b.user(t, "admin@example.org", "admin")
	admin := b.signIn(t, "admin@example.org")
	var quoted atomic.Value
	model := checkedModel(t, &quoted)
	defer model.Close()
	b.useLocalModel(t, admin, model.URL+"/v1")
	b.uploadAndIngest(t, admin, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/rag/ask", cookie: admin,
		body: map[string]any{"question": "Why was it difficult for participants to stay motivated after the programme ended?"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var text strings.Builder
	var cites struct {
		Citations []rag.Citation
		Sentences []rag.SentenceCheck
	}
	var done rag.Done
	for _, ev := range events(t, rec.Body.String()) {
		switch ev[0] {
		case rag.EventToken:
			var tok struct{ Text string }
			require.NoError(t, json.Unmarshal([]byte(ev[1]), &tok))
			text.WriteString(tok.Text)
		case rag.EventCitations:
			require.NoError(t, json.Unmarshal([]byte(ev[1]), &cites))
		case sse.DoneEvent:
			require.NoError(t, json.Unmarshal([]byte(ev[1]), &done))
		}
	}
	require.Nil(t, done.Fallback, rec.Body.String())
	require.Equal(t, "generative", done.Method)
	sentence, _ := quoted.Load().(string)
	require.NotEmpty(t, sentence)

	require.NotContains(t, text.String(), "S42", "the marker to a passage the model was not given is dropped")
	require.Contains(t, text.String(), "Another study found the opposite.", "its sentence stays, without the marker")
	require.Len(t, cites.Citations, 2)
	require.Equal(t, "S1", cites.Citations[0].Marker)
	require.True(t, cites.Citations[0].Verified, "S1 holds the quote")
	require.Equal(t, "S2", cites.Citations[1].Marker)
	require.False(t, cites.Citations[1].Verified, "S2 is only paraphrased")

	require.Len(t, cites.Sentences, 2, "one check per cited sentence: %+v", cites.Sentences)
	require.Equal(t, []string{"S1"}, cites.Sentences[0].Markers)
	require.True(t, cites.Sentences[0].Verified)
	require.Contains(t, cites.Sentences[0].Text, sentence)
	require.Equal(t, []string{"S2"}, cites.Sentences[1].Markers)
	require.False(t, cites.Sentences[1].Verified, "the paraphrase is shown, marked unverified")
	require.NotEqual(t, rag.SentenceVerified, cites.Sentences[1].Status)
}

// modelsServer is a local runtime's GET /v1/models, as the OpenAI API documents
// it ({"object": "list", "data": [{"id", "object": "model", "created",
// "owned_by"}]}); it records the Authorization header of each call.
func modelsServer(t *testing.T, authz *sync.Map, calls *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		authz.Store(r.Header.Get("Authorization"), true)
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object": "list", "data": [
			{"id": "qwen2.5:7b", "object": "model", "created": 1735689600, "owned_by": "library"},
			{"id": "llama3.2:latest", "object": "model", "created": 1735689600, "owned_by": "library"},
			{"id": "nomic-embed-text:latest", "object": "model", "created": 1735689600, "owned_by": "library"},
			{"id": "bad id with spaces", "object": "model", "created": 1735689600, "owned_by": "library"}]}`)
	}))
}

// Test connection lists a local runtime's models before anything is saved, or
// says in a sentence why it could not; it is an admin's, and it never connects
// where a model endpoint may not be saved.
func TestLocalModelConnectionTest(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "admin@example.org", "admin")
	b.user(t, "bo@example.org", "user")
	admin, bo := b.signIn(t, "admin@example.org"), b.signIn(t, "bo@example.org")
	var authz sync.Map
	var calls atomic.Int32
	runtime := modelsServer(t, &authz, &calls)
	defer runtime.Close()
	notOpenAI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>It works!</body></html>")
	}))
	defer notOpenAI.Close()
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error": {"message": "Incorrect API key provided: sk-wrong-secret", "type": "invalid_request_error"}}`, http.StatusUnauthorized)
	}))
	defer locked.Close()

	probe := func(cookie string, body map[string]any) (int, llmProbeResult, string) {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/admin/llm/providers/local/test", cookie: cookie, body: body})
		var res llmProbeResult
		if rec.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
		}
		return rec.Code, res, rec.Body.String()
	}

	code, res, body := probe(admin, map[string]any{"base_url": runtime.URL + "/v1"})
	require.Equal(t, http.StatusOK, code, body)
	require.True(t, res.OK, body)
	require.Equal(t, []string{"llama3.2:latest", "nomic-embed-text:latest", "qwen2.5:7b"}, res.Models, "sorted; an id no role could name is left out")
	require.Equal(t, "The endpoint at "+strings.TrimPrefix(runtime.URL, "http://")+" answered and lists 3 models.", res.Message)
	_, sent := authz.Load("")
	require.True(t, sent, "no key is sent when none is given or saved")
	code, _, _ = probe(admin, map[string]any{"base_url": runtime.URL + "/v1", "api_key": "sk-local"})
	require.Equal(t, http.StatusOK, code)
	_, sent = authz.Load("Bearer sk-local")
	require.True(t, sent)
	require.Contains(t, b.do(t, req{method: http.MethodGet, path: "/api/admin/llm", cookie: admin}).Body.String(), `"default_base_url":"http://127.0.0.1:11434/v1"`)

	// Why not, in a sentence, and never the endpoint's or the network's text.
	addr := closedPort(t)
	for _, tc := range []struct{ base, message string }{
		{"http://" + addr + "/v1", "Lectern could not reach the endpoint at " + addr + ": the server refused the connection. Is the model runtime running, and listening on that port?"},
		{notOpenAI.URL + "/v1", "answered, but not with an OpenAI-compatible model list"},
		{locked.URL + "/v1", "refused the API key (HTTP 401)"},
		{runtime.URL + "/api", "has no model list at /models"},
	} {
		code, res, body = probe(admin, map[string]any{"base_url": tc.base})
		require.Equal(t, http.StatusOK, code, body)
		require.False(t, res.OK, body)
		require.Empty(t, res.Models)
		require.Contains(t, res.Message, tc.message)
		requireNoNetworkText(t, body)
		require.NotContains(t, body, "It works!")
		require.NotContains(t, body, "sk-wrong-secret")
	}

	// Only an admin, and only where an endpoint may be saved: nothing is dialed.
	before := calls.Load()
	code, _, _ = probe(bo, map[string]any{"base_url": runtime.URL + "/v1"})
	require.Equal(t, http.StatusForbidden, code, "a user cannot make the host connect anywhere")
	for _, base := range []string{"http://169.254.169.254/latest/v1", "http://10.0.0.7:11434/v1", "ftp://127.0.0.1/v1", "http://user:pw@127.0.0.1/v1"} {
		code, _, body = probe(admin, map[string]any{"base_url": base})
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", base, body)
	}
	rec := b.do(t, req{method: http.MethodPost, path: "/api/admin/llm/providers/openai/test", cookie: admin, body: map[string]any{"base_url": runtime.URL + "/v1"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "a cloud provider's base URL is fixed")
	require.Equal(t, before, calls.Load())

	// Without a base URL, the saved one is tested; none saved yet is 422.
	code, _, body = probe(admin, nil)
	require.Equal(t, http.StatusUnprocessableEntity, code, body)
	rec = b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/providers/local", cookie: admin, body: map[string]any{"base_url": runtime.URL + "/v1"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	code, res, body = probe(admin, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.True(t, res.OK)
	require.Equal(t, before+1, calls.Load())
}

// llmProbeResult is the answer of the connection test (llmgw.ProbeResult).
type llmProbeResult struct {
	OK       bool     `json:"ok"`
	Endpoint string   `json:"endpoint"`
	Models   []string `json:"models"`
	Message  string   `json:"message"`
}
