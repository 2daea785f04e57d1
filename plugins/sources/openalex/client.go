package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// newClient returns the HTTP client for the OpenAlex API: one shared pacer and
// bounded retries with exponential backoff on 429 and 5xx answers, honouring
// Retry-After (a 429's holds back every call).
func newClient(log *slog.Logger, p sourcehttp.Policy) *sourcehttp.Client {
	return sourcehttp.New(sourcehttp.Config{
		Name:   "openalex",
		Policy: p,
		Logger: log,
		Header: http.Header{"Accept": {"application/json"}},
	})
}

// policy is the client policy of the settings: max_backoff also caps the
// Retry-After a call waits through, and a rate limit holds back every call.
func policy(interval time.Duration, maxAttempts int, backoff, maxBackoff, timeout time.Duration) sourcehttp.Policy {
	return sourcehttp.Policy{
		Interval: interval, MaxAttempts: maxAttempts, Backoff: backoff, MaxBackoff: maxBackoff, Jitter: 0.1,
		MaxRetryAfter: maxBackoff, Timeout: timeout, HoldOnRateLimit: true,
	}
}

// get fetches rawURL with the call's User-Agent. It fails with ctx.Err() when ctx
// ends, with a protocol RateLimited error when 429s outlast the attempts (or ask
// for longer than max_backoff), and with a protocol Unavailable error when 5xx
// answers or network failures do; any other status is returned to the caller.
func (o *OpenAlex) get(ctx context.Context, c call, rawURL string) (*sourcehttp.Response, error) {
	return o.client.Do(ctx, &sourcehttp.Request{URL: rawURL, Header: http.Header{"User-Agent": {c.userAgent}}})
}

// errStatus maps an unexpected HTTP status to the typed errors. OpenAlex answers
// an unknown work with an HTML 404 page and a bad filter with a JSON 400
// ({"error": ..., "message": ...}); it has used 403 for an exceeded rate limit.
func errStatus(status int, body []byte) error {
	msg := errorMessage(body)
	switch {
	case status == http.StatusNotFound:
		return protocol.NotFound("openalex: not found (HTTP 404)")
	case status == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "rate limit"):
		return protocol.RateLimited(0, "openalex: %s (HTTP 403)", msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("openalex: upstream refused access (HTTP %d): %s", status, msg)
	case status >= 400 && status < 500:
		return protocol.BadRequest("openalex: upstream rejected the request (HTTP %d): %s", status, msg)
	}
	return protocol.Unavailable(errors.New(msg), "openalex: unexpected HTTP %d", status)
}

// errorMessage extracts OpenAlex's JSON error text, else a snippet of the body.
func errorMessage(body []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Error != "" || e.Message != "") {
		return strings.TrimSpace(strings.Trim(e.Error+": "+e.Message, ": "))
	}
	snippet := strings.TrimSpace(string(body))
	if len(snippet) > 200 {
		snippet = snippet[:200]
	}
	return snippet
}
