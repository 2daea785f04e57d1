package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestRetries(t *testing.T) {
	t.Parallel()
	ok := fixture(t, "chat_stream.txt", "text/event-stream")
	t.Run("429 with retry-after-ms, then success", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"backoff_base": "0s"}, ok,
			errorFixture(t, http.StatusTooManyRequests, "error_429.json", map[string]string{"retry-after-ms": "60"}))
		start := time.Now()
		resp, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.NoError(t, err)
		require.Equal(t, "Graph neural networks [S1].", resp.Text)
		require.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond, "the wait the answer asked for")
		reqs := b.up.requests()
		require.Len(t, reqs, 2)
		require.Equal(t, reqs[0].body, reqs[1].body, "the retry sends the same body")
	})
	t.Run("429 with Retry-After 0, 503, then success", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, ok,
			errorFixture(t, http.StatusTooManyRequests, "error_429.json", map[string]string{"Retry-After": "0"}),
			reply(http.StatusServiceUnavailable, nil, "upstream connect error"))
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.NoError(t, err)
		require.Len(t, b.up.requests(), 3)
	})
	t.Run("429 exhausted carries the last Retry-After", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"max_retries": float64(2)}, errorFixture(t, http.StatusTooManyRequests, "error_429.json", map[string]string{"retry-after-ms": "5"}))
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, protocol.CodeRateLimited, pe.Code)
		require.Equal(t, 5*time.Millisecond, pe.RetryAfter)
		require.Contains(t, pe.Message, "Rate limit reached for gpt-4o-mini")
		require.Len(t, b.up.requests(), 3, "the first attempt and max_retries more")
	})
	t.Run("Retry-After beyond max_backoff is returned at once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, errorFixture(t, http.StatusTooManyRequests, "error_429.json", map[string]string{"Retry-After": "90"}))
		start := time.Now()
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, protocol.CodeRateLimited, pe.Code)
		require.Equal(t, 90*time.Second, pe.RetryAfter)
		require.Less(t, time.Since(start), time.Second)
		require.Len(t, b.up.requests(), 1)
	})
	t.Run("quota exhausted is not retried", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, errorFixture(t, http.StatusTooManyRequests, "error_429_quota.json", nil))
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.ErrorIs(t, err, protocol.ErrRateLimited)
		require.ErrorContains(t, err, "quota exhausted")
		require.Len(t, b.up.requests(), 1)
	})
	t.Run("5xx exhausted", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"max_retries": float64(1)}, reply(http.StatusBadGateway, nil, `{"error":{"message":"Bad gateway.","type":"server_error"}}`))
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.ErrorIs(t, err, protocol.ErrUnavailable)
		require.ErrorContains(t, err, "HTTP 502")
		require.ErrorContains(t, err, "Bad gateway.")
		require.Len(t, b.up.requests(), 2)
	})
	t.Run("max_retries 0 tries once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"max_retries": float64(0)}, reply(http.StatusInternalServerError, nil, ""))
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.ErrorIs(t, err, protocol.ErrUnavailable)
		require.Len(t, b.up.requests(), 1)
	})
	t.Run("timeout of an attempt is retried", func(t *testing.T) {
		t.Parallel()
		slow := func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}
		b := setup(t, map[string]any{"timeout": "50ms"}, ok, slow)
		_, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.NoError(t, err)
		require.Len(t, b.up.requests(), 2)
	})
}

func TestRefusedRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		file   string
		body   string
		want   *protocol.Error
		msg    string
	}{
		{name: "400 names the upstream message", status: 400, file: "error_400.json", want: protocol.ErrBadRequest,
			msg: "upstream refused the request (HTTP 400): Invalid schema for response_format 'lectern_summarize'"},
		{name: "404 unknown model", status: 404, file: "error_404_model.json", want: protocol.ErrBadRequest,
			msg: "The model `gpt-5-imaginary` does not exist"},
		{name: "422 from a compatible server", status: 422, body: `{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, want: protocol.ErrBadRequest,
			msg: `HTTP 422): {"detail":[{"loc":["body","messages"],"msg":"field required"}]}`},
		{name: "403", status: 403, body: `{"error":{"message":"Project does not have access to model","type":"invalid_request_error"}}`, want: protocol.ErrUnauthorized,
			msg: "Project does not have access to model"},
		{name: "plain-text 400", status: 400, body: "Bad Request", want: protocol.ErrBadRequest, msg: "HTTP 400): Bad Request"},
		{name: "empty 404", status: 404, want: protocol.ErrBadRequest, msg: "HTTP 404): Not Found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := reply(tc.status, map[string]string{"Content-Type": "application/json"}, tc.body)
			if tc.file != "" {
				h = errorFixture(t, tc.status, tc.file, nil)
			}
			b := setup(t, nil, h)
			_, err := llm.Collect(t.Context(), b.p, chatRequest())
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
			requireClean(t, err, b.up.srv.URL)
			require.Len(t, b.up.requests(), 1, "refused requests are not retried")
		})
	}
}

func TestParseAPIError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want apiError
	}{
		{"OpenAI", `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			apiError{present: true, message: "m", typ: "invalid_request_error", code: "model_not_found"}},
		{"numeric code (llama.cpp)", `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			apiError{present: true, message: "Loading model", typ: "unavailable_error", code: "503"}},
		{"vLLM", `{"object":"error","message":"m","type":"BadRequestError","param":null,"code":400}`,
			apiError{present: true, message: "m", typ: "BadRequestError", code: "400"}},
		{"Google array", `[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}]`,
			apiError{present: true, message: "API key not valid.", code: "400"}},
		{"string error", `{"error":"model 'x' not found"}`, apiError{present: true, message: "model 'x' not found"}},
		{"not an error", `{"object":"list","data":[]}`, apiError{message: `{"object":"list","data":[]}`}},
		{"null error", `{"error":null,"choices":[]}`, apiError{message: `{"error":null,"choices":[]}`}},
		{"text", "upstream connect error", apiError{message: "upstream connect error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, parseAPIError([]byte(tc.body)))
		})
	}
}

func TestStatusError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		e         apiError
		want      protocol.Code
		wantRetry bool
	}{
		{"401", 401, apiError{}, protocol.CodeUnauthorized, false},
		{"408", 408, apiError{}, protocol.CodeUnavailable, true},
		{"409", 409, apiError{}, protocol.CodeUnavailable, true},
		{"413", 413, apiError{}, protocol.CodeBadRequest, false},
		{"429", 429, apiError{}, protocol.CodeRateLimited, true},
		{"429 quota by type", 429, apiError{typ: "insufficient_quota"}, protocol.CodeRateLimited, false},
		{"500", 500, apiError{}, protocol.CodeUnavailable, true},
		{"in stream: status from code", 0, apiError{code: "429"}, protocol.CodeRateLimited, true},
		{"in stream: invalid request", 0, apiError{typ: "invalid_request_error"}, protocol.CodeBadRequest, false},
		{"in stream: bad key", 0, apiError{code: "invalid_api_key"}, protocol.CodeUnauthorized, false},
		{"in stream: unknown", 0, apiError{typ: "server_error"}, protocol.CodeUnavailable, true},
		{"3xx", 302, apiError{}, protocol.CodeUnavailable, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err, retry := statusError("x", tc.status, tc.e, "")
			require.Equal(t, tc.want, protocol.CodeOf(err))
			require.Equal(t, tc.wantRetry, retry)
		})
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, msg, key, want string
	}{
		{"the key itself", "bad key gw-token-1 given", "gw-token-1", "bad key [redacted] given"},
		{"masked OpenAI key", "Incorrect API key provided: sk-proj-****abcd.", "", "Incorrect API key provided: [redacted]."},
		{"Anthropic key", "key sk-ant-api03-xyz_ABC-123 invalid", "", "key [redacted] invalid"},
		{"Google key", "key AIzaSyA1234567890abcdef rejected", "", "key [redacted] rejected"},
		{"whitespace", "line one\n\n  line two", "", "line one line two"},
		{"plain", "The model does not exist", "k", "The model does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sanitize(tc.msg, tc.key))
		})
	}
	long := sanitize(string(make([]byte, 1000)), "")
	require.LessOrEqual(t, len([]rune(long)), maxMessage+1)
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"milliseconds", map[string]string{"retry-after-ms": "1500"}, 1500 * time.Millisecond},
		{"fractional milliseconds", map[string]string{"retry-after-ms": "2.5"}, 2500 * time.Microsecond},
		{"milliseconds win over seconds", map[string]string{"retry-after-ms": "20", "Retry-After": "1"}, 20 * time.Millisecond},
		{"bad milliseconds fall back to seconds", map[string]string{"retry-after-ms": "soon", "Retry-After": "2"}, 2 * time.Second},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"HTTP date", map[string]string{"Retry-After": now.Add(time.Minute).Format(http.TimeFormat)}, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			require.Equal(t, tc.want, retryAfter(h, now))
		})
	}
}
