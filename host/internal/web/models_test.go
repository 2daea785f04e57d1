package web

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// localRuntime answers GET /v1/models as an OpenAI-compatible runtime does.
func localRuntime(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object": "list", "data": [{"id": "llama3.2:latest", "object": "model", "created": 1735689600, "owned_by": "library"},
			{"id": "qwen2.5:7b", "object": "model", "created": 1735689600, "owned_by": "library"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A new admin chooses a local model in onboarding, tests the connection, picks
// one of the models it lists, and the answer, summarize and extract roles use it;
// Settings offers the same test. When the model cannot be called (this stack runs
// no plugin to call it), the summary the paper page shows is the builtin method's,
// with the notice naming the role and the cause, and the job does not fail.
func TestLocalModelFromOnboardingToThePaperPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	runtime := localRuntime(t)

	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, "/onboarding?step=llm", p.url, p.body)
	require.Contains(t, p.body, `<option value="local">Local model (OpenAI-compatible)</option>`)
	require.Contains(t, p.body, `value="http://127.0.0.1:11434/v1"`, "the base URL offered is a local runtime's")
	require.Contains(t, p.body, `formaction="/onboarding/llm/test"`)

	p = b.post("/onboarding/llm/test", url.Values{"provider": {"local"}, "base_url": {runtime.URL + "/v1"}, "api_key": {"sk-typed"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "answered and lists 2 models")
	require.Contains(t, p.body, `name="model" value="llama3.2:latest" checked`)
	require.Contains(t, p.body, `value="`+runtime.URL+`/v1"`, "the base URL typed stays")
	require.NotContains(t, p.body, "sk-typed", "a key is never put back into the page")

	// A runtime that is not there: the step says why, in a sentence.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close())
	p = b.post("/onboarding/llm/test", url.Values{"provider": {"local"}, "base_url": {"http://" + dead + "/v1"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "Lectern could not reach the endpoint at "+dead+": the server refused the connection.")
	require.NotContains(t, p.body, "dial tcp")

	p = b.post("/onboarding/llm", url.Values{"provider": {"local"}, "base_url": {runtime.URL + "/v1"}, "model": {"llama3.2:latest"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "/onboarding?step=paper", p.url)
	require.Contains(t, p.body, "answers, summaries and extractions use llama3.2:latest")

	p = b.get("/settings/llm")
	require.Contains(t, p.body, "Local model (OpenAI-compatible)")
	require.Contains(t, p.body, `value="`+runtime.URL+`/v1"`)
	for _, role := range []string{"answer", "summarize", "extract"} {
		require.Regexp(t, `id="rm-`+role+`" name="model" value="llama3.2:latest"`, p.body)
	}
	p = b.post("/settings/llm/providers/local/test", url.Values{"base_url": {runtime.URL + "/v1"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `<datalist id="probe-models"><option value="llama3.2:latest"><option value="qwen2.5:7b"></datalist>`)
	p = b.post("/settings/llm/providers/local/test", url.Values{"base_url": {"http://169.254.169.254/v1"}})
	require.Equal(t, http.StatusUnprocessableEntity, p.status, p.body)
	require.Contains(t, p.body, "link-local")

	// The model cannot be called: the summary falls back, and the page says why.
	p = b.upload("/onboarding/upload", "spaced.pdf", samplePDF("Spaced Repetition for Readers", paperPages))
	require.Equal(t, http.StatusOK, p.status, p.body)
	paperPath := strings.SplitN(p.url, "?", 2)[0]
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return strings.Contains(p.body, `data-state="succeeded"`)
	}, 60*time.Second, 300*time.Millisecond, "the reading job finishes")
	p = b.post(paperPath+"/summary", nil)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Eventually(t, func() bool {
		p = b.get(p.url)
		return strings.Contains(p.body, "data-summary-fallback")
	}, 60*time.Second, 300*time.Millisecond, "the summary job falls back")
	require.Contains(t, p.body, "The model assigned to the summarize role (local) could not answer:")
	require.Contains(t, p.body, "This summary comes from the builtin extractive method instead.")
	require.NotContains(t, p.body, "Job failed")
}
