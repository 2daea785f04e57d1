// Package webapi is a client of the Zotero Web API v3 (https://www.zotero.org/support/dev/web_api/v3/start)
// for the Zotero reference-manager plugin: user and group libraries, items,
// collections, notes and annotations, incremental sync by library version, and
// writes that are never applied twice.
//
// It is polite the way the API asks: at most four requests in flight, a Backoff
// header on any response holds back every later request for that long, a 429 or
// 503 waits for its Retry-After (seconds or an HTTP date) before it is retried,
// other 5xx answers and dropped connections are retried with exponential backoff,
// and every wait is capped and ends with the caller's context. Time comes from a
// Clock, so tests prove the waits without sleeping.
package webapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// DefaultBaseURL is the Zotero Web API.
const DefaultBaseURL = "https://api.zotero.org"

// Clock is the time the client waits by.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or returns ctx.Err() when ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the wall clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error { return sourcehttp.Sleep(ctx, d) }

// Config sets a client up. Only APIKey is required.
type Config struct {
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// APIKey is the user's Zotero API key, sent as Zotero-API-Key; never logged.
	APIKey string
	// HTTP defaults to a client with a 60-second timeout.
	HTTP *http.Client
	// Clock defaults to the wall clock.
	Clock Clock
	// MaxInFlight bounds concurrent requests (default 4).
	MaxInFlight int
	// MaxAttempts bounds the tries of one request (default 5).
	MaxAttempts int
	// MaxWait caps one wait for Backoff, Retry-After or a retry (default 10 min):
	// a server asking for longer fails the request as rate limited instead.
	MaxWait time.Duration
}

// Client calls the Zotero Web API with one user's key. It is safe for concurrent use.
type Client struct {
	base        string
	key         string
	http        *http.Client
	clock       Clock
	slots       chan struct{}
	maxAttempts int
	maxWait     time.Duration

	mu        sync.Mutex
	notBefore time.Time // no request starts before this (Backoff, Retry-After)
}

// New returns a client.
func New(cfg Config) *Client {
	c := &Client{base: strings.TrimRight(cfg.BaseURL, "/"), key: cfg.APIKey, http: cfg.HTTP, clock: cfg.Clock,
		maxAttempts: cfg.MaxAttempts, maxWait: cfg.MaxWait}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 60 * time.Second}
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = 5
	}
	if c.maxWait <= 0 {
		c.maxWait = 10 * time.Minute
	}
	n := cfg.MaxInFlight
	if n <= 0 {
		n = 4
	}
	c.slots = make(chan struct{}, n)
	return c
}

// Errors a call can end with; test with errors.Is. The *Error carries the
// status and Zotero's message.
var (
	// ErrUnauthorized: the key is invalid or lacks the permission (HTTP 403).
	ErrUnauthorized = errors.New("zotero refused the API key")
	// ErrNotFound: no such library or object (HTTP 404).
	ErrNotFound = errors.New("zotero has no such library or item")
	// ErrPrecondition: the library or object changed since the version given, or
	// the write token was used already (HTTP 412).
	ErrPrecondition = errors.New("zotero's copy changed since the version given")
	// ErrRateLimited: Zotero kept asking to slow down (HTTP 429/503 with a wait
	// longer than allowed, or on every attempt).
	ErrRateLimited = errors.New("zotero asked us to slow down")
	// ErrUnavailable: Zotero answered with server errors or could not be reached.
	ErrUnavailable = errors.New("zotero is not answering")
	// ErrRejected: Zotero refused the request as malformed (other 4xx).
	ErrRejected = errors.New("zotero rejected the request")
)

// Error is a failed call: what went wrong in words, the HTTP status when there
// was one, and the kind (one of the Err values above).
type Error struct {
	Kind   error
	Status int
	// Message is Zotero's own text (the response body), trimmed.
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Kind }

// request is one API call.
type request struct {
	method string
	path   string // below the base URL, starting with "/"
	query  url.Values
	header http.Header
	body   []byte
}

// response is a successful (2xx or 304) answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// version is the response's Last-Modified-Version (0 when absent).
func (r *response) version() int64 {
	v, _ := strconv.ParseInt(r.header.Get("Last-Modified-Version"), 10, 64)
	return v
}

// do sends r, waiting out Backoff and Retry-After and retrying what may be
// retried, and returns the 2xx or 304 answer or an *Error. A dropped connection
// is retried for every method: reads are safe, and the writes this client sends
// carry a write token or a version precondition, so a repeat is refused (412)
// rather than applied twice.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	var last error
	for attempt := range c.maxAttempts {
		if attempt > 0 {
			if err := c.wait(ctx, retryDelay(attempt)); err != nil {
				return nil, err
			}
		}
		resp, retryAfter, err := c.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
		var e *Error
		if !errors.As(err, &e) || (e.Kind != ErrUnavailable && e.Kind != ErrRateLimited) {
			return nil, err
		}
		if retryAfter > 0 {
			if retryAfter > c.maxWait {
				return nil, &Error{Kind: ErrRateLimited, Status: e.Status,
					Message: fmt.Sprintf("it asked to wait %s, longer than the %s allowed", retryAfter.Round(time.Second), c.maxWait)}
			}
			c.hold(retryAfter)
		}
	}
	return nil, last
}

// retryDelay is the pause before a retry: 1 s, 2 s, 4 s, ... up to 60 s.
func retryDelay(attempt int) time.Duration {
	return min(time.Second<<(attempt-1), time.Minute)
}

// once sends r once, in one of the in-flight slots, after any hold.
func (c *Client) once(ctx context.Context, r request) (*response, time.Duration, error) {
	if err := c.wait(ctx, 0); err != nil {
		return nil, 0, err
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-c.slots }()

	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, 0, &Error{Kind: ErrRejected, Message: "the request could not be built"}
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Zotero-API-Version", "3")
	req.Header.Set("Zotero-API-Key", c.key)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		// Never the raw error: its text holds the URL and the network's words.
		return nil, 0, &Error{Kind: ErrUnavailable, Message: "the connection failed before an answer arrived"}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, &Error{Kind: ErrUnavailable, Status: resp.StatusCode, Message: "the answer was cut off"}
	}
	now := c.clock.Now()
	if d := seconds(resp.Header.Get("Backoff")); d > 0 {
		c.hold(min(d, c.maxWait))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return &response{status: resp.StatusCode, header: resp.Header, body: data}, 0, nil
	}
	e := &Error{Status: resp.StatusCode, Message: message(data)}
	switch s := resp.StatusCode; {
	case s == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
	case s == http.StatusServiceUnavailable || s >= 500:
		e.Kind = ErrUnavailable
	case s == http.StatusForbidden || s == http.StatusUnauthorized:
		e.Kind = ErrUnauthorized
	case s == http.StatusNotFound:
		e.Kind = ErrNotFound
	case s == http.StatusPreconditionFailed:
		e.Kind = ErrPrecondition
	default:
		e.Kind = ErrRejected
	}
	var ra time.Duration
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		ra = sourcehttp.RetryAfter(resp.Header, now)
		if resp.StatusCode == http.StatusTooManyRequests && ra == 0 {
			ra = 10 * time.Second // a 429 without a wait still means slow down
		}
	}
	return nil, ra, e
}

// hold stops every request from starting for d from now (later holds win).
func (c *Client) hold(d time.Duration) {
	until := c.clock.Now().Add(d)
	c.mu.Lock()
	if until.After(c.notBefore) {
		c.notBefore = until
	}
	c.mu.Unlock()
}

// wait sleeps at least d and until any hold has passed.
func (c *Client) wait(ctx context.Context, d time.Duration) error {
	for {
		c.mu.Lock()
		until := c.notBefore
		c.mu.Unlock()
		now := c.clock.Now()
		left := max(until.Sub(now), d)
		if left <= 0 {
			return ctx.Err()
		}
		if err := c.clock.Sleep(ctx, left); err != nil {
			return err
		}
		d = 0
	}
}

// seconds reads a header holding a number of seconds (Backoff).
func seconds(v string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}

// message is Zotero's error text: the body is plain text for errors.
func message(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if strings.HasPrefix(s, "<") { // an HTML error page from a proxy says nothing useful
		return ""
	}
	return s
}
