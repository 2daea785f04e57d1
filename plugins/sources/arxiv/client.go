package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// newClient returns the HTTP client for export.arxiv.org, shared by the query API
// and OAI-PMH: one pacer (arXiv asks for one request every three seconds across its
// APIs) and bounded retries with exponential backoff on 429 and 5xx answers,
// honouring Retry-After (429, and 503 as OAI-PMH flow control), which holds back
// every call.
func newClient(log *slog.Logger, p sourcehttp.Policy, pacer *sourcehttp.Pacer) *sourcehttp.Client {
	return sourcehttp.New(sourcehttp.Config{
		Name:      "arxiv",
		Policy:    p,
		Pacer:     pacer,
		Logger:    log,
		Header:    http.Header{"Accept": {"application/atom+xml, application/xml;q=0.9, */*;q=0.1"}},
		CheckFunc: check,
	})
}

// check retries 429 and 5xx answers. A 503 with Retry-After is OAI-PMH flow
// control (arXiv sends it to pace harvesters): outlasting it is a rate limit.
// Every other answer goes to the caller to interpret.
func check(req *sourcehttp.Request, resp *sourcehttp.Response) error {
	if resp.Status == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
		return protocol.RateLimited(0, "%s: upstream asked to retry later (HTTP 503)", req.Label)
	}
	return sourcehttp.DefaultCheck(req, resp)
}

// get fetches rawURL with the call's User-Agent. It fails with ctx.Err() when ctx
// ends, with a protocol RateLimited error when 429s or 503s with Retry-After
// outlast the attempts (or ask for longer than max_backoff), and with a protocol
// Unavailable error when other 5xx answers or network failures do; any other
// status is returned to the caller.
func (a *Arxiv) get(ctx context.Context, s settings, rawURL string) (*sourcehttp.Response, error) {
	return a.client.Do(ctx, &sourcehttp.Request{URL: rawURL, Header: http.Header{"User-Agent": {s.userAgent}}})
}

// errStatus maps an unexpected HTTP status to the typed errors.
func errStatus(status int, body []byte) error {
	snippet := strings.TrimSpace(string(body))
	if len(snippet) > 200 {
		snippet = snippet[:200]
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("arxiv: upstream refused access (HTTP %d)", status)
	case status == http.StatusNotFound:
		return protocol.NotFound("arxiv: not found (HTTP 404)")
	case status >= 400 && status < 500:
		return protocol.BadRequest("arxiv: upstream rejected the request (HTTP %d): %s", status, snippet)
	}
	return protocol.Unavailable(errors.New(snippet), "arxiv: unexpected HTTP %d", status)
}
