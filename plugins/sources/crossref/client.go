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

// newClient returns the HTTP client for the Crossref API: one shared pacer, a
// bound on the requests in flight (Crossref limits concurrency per pool) and
// bounded retries with exponential backoff on 429 and 5xx answers, honouring
// Retry-After (a 429's holds back every call).
func newClient(log *slog.Logger, p sourcehttp.Policy) *sourcehttp.Client {
	return sourcehttp.New(sourcehttp.Config{
		Name:   "crossref",
		Policy: p,
		Logger: log,
		Header: http.Header{"Accept": {"application/json"}},
	})
}

// policy is the client policy of the settings: max_backoff also caps the
// Retry-After a call waits through, and a rate limit holds back every call.
func policy(interval time.Duration, maxInFlight, maxAttempts int, backoff, maxBackoff, timeout time.Duration) sourcehttp.Policy {
	return sourcehttp.Policy{
		Interval: interval, MaxAttempts: maxAttempts, Backoff: backoff, MaxBackoff: maxBackoff, Jitter: 0.1,
		MaxRetryAfter: maxBackoff, Timeout: timeout, MaxInFlight: maxInFlight, HoldOnRateLimit: true,
	}
}

// get fetches rawURL with the call's User-Agent and Metadata Plus token. It fails
// with ctx.Err() when ctx ends, with a protocol RateLimited error when 429s outlast
// the attempts (or ask for longer than max_backoff), and with a protocol
// Unavailable error when 5xx answers or network failures do; any other status is
// returned to the caller.
func (c *Crossref) get(ctx context.Context, cl call, rawURL string) (*sourcehttp.Response, error) {
	h := http.Header{"User-Agent": {cl.userAgent}}
	if cl.plusToken != "" {
		h.Set("Crossref-Plus-API-Token", "Bearer "+cl.plusToken)
	}
	return c.client.Do(ctx, &sourcehttp.Request{URL: rawURL, Header: h})
}

// errStatus maps an unexpected HTTP status to the typed errors. Crossref answers
// an unknown DOI with a text/plain 404 "Resource not found." and a refused
// parameter with a JSON 400 ({"status":"failed","message":[{"message":...}]}).
func errStatus(status int, body []byte) error {
	msg := errorMessage(body)
	switch {
	case status == http.StatusNotFound:
		return protocol.NotFound("crossref: %s (HTTP 404)", msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("crossref: upstream refused access (HTTP %d): %s", status, msg)
	case status >= 400 && status < 500:
		return protocol.BadRequest("crossref: upstream rejected the request (HTTP %d): %s", status, msg)
	}
	return protocol.Unavailable(errors.New(msg), "crossref: unexpected HTTP %d", status)
}

// errorMessage extracts Crossref's JSON failure messages, else a snippet of the
// body.
func errorMessage(body []byte) string {
	var e struct {
		Message []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Message) > 0 {
		var msgs []string
		for _, m := range e.Message {
			msgs = append(msgs, strings.TrimSpace(m.Type+": "+m.Message))
		}
		return strings.Join(msgs, "; ")
	}
	snippet := strings.TrimSpace(string(body))
	if len(snippet) > 200 {
		snippet = snippet[:200]
	}
	return snippet
}
