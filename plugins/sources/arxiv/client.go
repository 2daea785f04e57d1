package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// maxBody bounds how much of one response the client reads.
const maxBody = 32 << 20

// clientConfig is the part of the settings the HTTP client needs, captured per call
// so that a concurrent Configure never changes a request half-way.
type clientConfig struct {
	// Interval is the least time between the starts of two requests, across all
	// concurrent calls.
	Interval time.Duration
	// MaxAttempts bounds the tries of one request (first try included).
	MaxAttempts int
	// BackoffBase is the first retry's wait; each further retry doubles it.
	BackoffBase time.Duration
	// MaxBackoff caps one wait, and is the longest Retry-After the client sleeps
	// through before giving the rate-limit error back to the caller.
	MaxBackoff time.Duration
	// Timeout bounds one attempt.
	Timeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
}

// response is a fully read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// client is the thin HTTP client for export.arxiv.org, shared by the query API and
// OAI-PMH: one pacing limiter (arXiv asks for one request every three seconds
// across its APIs) and bounded retries with exponential backoff on 429 and 5xx
// answers, honouring Retry-After (429, and 503 as OAI-PMH flow control).
type client struct {
	http *http.Client
	lim  *limiter
	log  *slog.Logger
}

func newClient(log *slog.Logger) *client {
	return &client{http: &http.Client{}, lim: &limiter{}, log: log}
}

// get fetches rawURL, retrying 429, 5xx and network failures. Any other status is
// returned to the caller to interpret. It fails with ctx.Err() when ctx ends, with a
// protocol RateLimited error when 429s or 503s with Retry-After outlast the attempts
// (or ask for longer than MaxBackoff), and with a protocol Unavailable error when
// other 5xx answers or network failures do.
func (c *client) get(ctx context.Context, cfg clientConfig, rawURL string) (*response, error) {
	var lastErr error
	for attempt := 1; ; attempt++ {
		if err := c.lim.wait(ctx, cfg.Interval); err != nil {
			return nil, err
		}
		resp, err := c.once(ctx, cfg, rawURL)
		wait := backoff(cfg, attempt)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			lastErr = protocol.Unavailable(err, "arxiv: request failed: %v", err)
		case resp.status == http.StatusTooManyRequests:
			ra := retryAfter(resp.header, time.Now())
			lastErr = protocol.RateLimited(ra, "arxiv: rate limited (HTTP 429)")
			if ra > 0 {
				c.lim.pause(ra)
				wait = ra
			}
		case resp.status == http.StatusServiceUnavailable && resp.header.Get("Retry-After") != "":
			// OAI-PMH flow control (arXiv sends 503 with Retry-After to pace
			// harvesters): it holds back every call, and outlasting it is a rate limit.
			ra := retryAfter(resp.header, time.Now())
			lastErr = protocol.RateLimited(ra, "arxiv: upstream asked to retry later (HTTP 503)")
			if ra > 0 {
				c.lim.pause(ra)
				wait = ra
			}
		case resp.status >= 500:
			lastErr = protocol.Unavailable(nil, "arxiv: upstream answered HTTP %d", resp.status)
		default:
			return resp, nil
		}
		if attempt >= cfg.MaxAttempts || wait > cfg.MaxBackoff {
			return nil, lastErr
		}
		c.log.DebugContext(ctx, "retrying", "attempt", attempt, "wait", wait.String(), "error", lastErr.Error())
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func (c *client) once(ctx context.Context, cfg clientConfig, rawURL string) (*response, error) {
	actx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("arxiv: build request: %w", err)
	}
	req.Header.Set("User-Agent", cfg.UserAgent)
	req.Header.Set("Accept", "application/atom+xml, application/xml;q=0.9, */*;q=0.1")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("arxiv: get: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("arxiv: read body: %w", err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// backoff is the wait before retry number attempt: BackoffBase doubled per
// attempt, capped at MaxBackoff, with up to 10% jitter.
func backoff(cfg clientConfig, attempt int) time.Duration {
	d := cfg.BackoffBase
	for i := 1; i < attempt && d < cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, cfg.MaxBackoff)
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/10 + 1))
	}
	return d
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(secs)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// limiter spaces request starts at least an interval apart across goroutines. Each
// caller reserves the next free slot, then sleeps until it.
type limiter struct {
	mu   sync.Mutex
	next time.Time
}

func (l *limiter) wait(ctx context.Context, interval time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	now := time.Now()
	at := l.next
	if at.Before(now) {
		at = now
	}
	l.next = at.Add(interval)
	l.mu.Unlock()
	return sleep(ctx, time.Until(at))
}

// pause holds every caller back for d (an upstream Retry-After).
func (l *limiter) pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := time.Now().Add(d); until.After(l.next) {
		l.next = until
	}
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
