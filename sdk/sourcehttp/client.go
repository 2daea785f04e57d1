package sourcehttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// DefaultMaxBody is the default of Config.MaxBody.
const DefaultMaxBody = 32 << 20

// Policy is how a Client paces and retries. A plugin builds it from its settings
// and hands it to New or SetPolicy.
type Policy struct {
	// Interval is the least time between the starts of two requests, across all
	// concurrent calls (and every Client sharing the Pacer). Default 0: no pacing.
	Interval time.Duration
	// MaxAttempts bounds the tries of one request, the first included. Default 0,
	// which like 1 means no retry.
	MaxAttempts int
	// Backoff is the wait before the first retry; each further retry doubles it.
	// Default 0: retry at once (unless Retry-After asks for a wait).
	Backoff time.Duration
	// MaxBackoff caps the doubled Backoff before jitter. Default 0: no wait.
	MaxBackoff time.Duration
	// Jitter is the largest random share of the backoff added to it, so that
	// clients retrying together spread out: 0.1 adds up to 10%. Default 0.
	Jitter float64
	// MaxRetryAfter is the longest Retry-After a call waits through. A longer one
	// ends the call at once with the answer's error; a rate limit then carries the
	// wait in protocol.Error.RetryAfter for the caller to honour. Default 0: any
	// Retry-After ends the call.
	MaxRetryAfter time.Duration
	// Timeout bounds one attempt, reading the body included. Default 0: no bound
	// beyond the caller's context.
	Timeout time.Duration
	// MaxInFlight bounds the attempts in flight at once across all calls of the
	// Client. Default 0: no bound.
	MaxInFlight int
	// HoldOnRateLimit makes the Retry-After of a rate-limited answer hold back
	// every call sharing the Pacer, not only the one that got it. Default false.
	HoldOnRateLimit bool
}

// backoff is the wait before retry number attempt (1 for the first retry):
// Backoff doubled per retry, capped at MaxBackoff, plus up to Jitter of it.
func (p Policy) backoff(attempt int) time.Duration {
	d := p.Backoff
	for i := 1; i < attempt && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	if d > 0 && p.Jitter > 0 {
		d += time.Duration(rand.Int64N(int64(float64(d)*p.Jitter) + 1))
	}
	return d
}

// Response is an upstream answer, read in full.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds the answer's headers.
	Header http.Header
	// Body is the answer's body, at most Config.MaxBody bytes of it.
	Body []byte
}

// Request is one upstream request.
type Request struct {
	// Method is the HTTP method. Default GET.
	Method string
	// URL is the absolute URL to request. Required. It never appears in errors or
	// logs, so its query string may carry credentials.
	URL string
	// Header is added to Config.Header for this request (a User-Agent naming the
	// caller's contact, an API key). Default none.
	Header http.Header
	// Body is sent with every attempt. Default none.
	Body []byte
	// Label names the request in errors and logs ("semantic scholar GET
	// /paper/search"). Default Config.Name.
	Label string
}

// CheckFunc looks at an answer before the client decides what to do with it. It
// returns nil to hand the answer to the caller; a protocol RateLimited or
// Unavailable error to retry it (or return that error when the attempts are
// spent); or any other error to return at once. req.Label is never empty. A
// RateLimited error without RetryAfter gets the answer's Retry-After.
type CheckFunc func(req *Request, resp *Response) error

// DefaultCheck retries HTTP 429 as RateLimited and 5xx as Unavailable, and hands
// every other answer to the caller.
func DefaultCheck(req *Request, resp *Response) error {
	switch {
	case resp.Status == http.StatusTooManyRequests:
		return protocol.RateLimited(0, "%s: rate limited (HTTP 429)", req.Label)
	case resp.Status >= 500:
		return protocol.Unavailable(nil, "%s: upstream answered HTTP %d", req.Label, resp.Status)
	}
	return nil
}

// Config configures a Client.
type Config struct {
	// Name labels requests without a Label in errors and logs ("arxiv"). Required.
	Name string
	// Policy is the initial pacing and retry policy. Default the zero Policy.
	Policy Policy
	// Pacer spaces the requests. Share one between Clients that draw on the same
	// upstream allowance. Default a Pacer of the Client's own.
	Pacer *Pacer
	// HTTPClient sends the requests. Default a new http.Client.
	HTTPClient *http.Client
	// Logger receives a debug line for every retry. Default slog.Default().
	Logger *slog.Logger
	// Header is sent with every request (Accept, a fixed User-Agent). Default none.
	Header http.Header
	// MaxBody bounds how much of one answer is read. Default DefaultMaxBody.
	MaxBody int64
	// CheckFunc maps answers to retries and typed errors. Default DefaultCheck.
	CheckFunc CheckFunc
}

// Client is a paced, retrying HTTP client for one upstream API. It is safe for
// concurrent use.
type Client struct {
	name    string
	pacer   *Pacer
	http    *http.Client
	log     *slog.Logger
	header  http.Header
	maxBody int64
	check   CheckFunc

	mu     sync.Mutex
	policy Policy
	slots  chan struct{}
}

// New returns a Client.
func New(cfg Config) *Client {
	c := &Client{
		name: cfg.Name, pacer: cfg.Pacer, http: cfg.HTTPClient, log: cfg.Logger,
		header: cfg.Header.Clone(), maxBody: cfg.MaxBody, check: cfg.CheckFunc,
	}
	if c.pacer == nil {
		c.pacer = &Pacer{}
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	if c.check == nil {
		c.check = DefaultCheck
	}
	c.SetPolicy(cfg.Policy)
	return c
}

// SetPolicy replaces the policy. Calls already running keep the one they started
// with; a changed MaxInFlight applies to calls that start from now on.
func (c *Client) SetPolicy(p Policy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.MaxInFlight != c.policy.MaxInFlight {
		c.slots = nil
		if p.MaxInFlight > 0 {
			c.slots = make(chan struct{}, p.MaxInFlight)
		}
	}
	c.policy = p
}

// Policy returns the current policy.
func (c *Client) Policy() Policy {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.policy
}

func (c *Client) snapshot() (Policy, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.policy, c.slots
}

// Do sends req, pacing and retrying it as the policy says, and returns the answer
// that CheckFunc accepted. It fails with ctx's error when ctx ends, with the
// CheckFunc's error for an answer not to be retried, with that error or a protocol
// RateLimited or Unavailable error when the retries are spent (or a Retry-After is
// longer than MaxRetryAfter), and with a protocol Unavailable error when the last
// attempt failed on the network.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	p, slots := c.snapshot()
	r := *req
	if r.Label == "" {
		r.Label = c.name
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	for attempt := 1; ; attempt++ {
		if err := c.pacer.Wait(ctx, p.Interval); err != nil {
			return nil, err
		}
		resp, err := c.once(ctx, p, slots, &r)
		var fail error
		var retryAfter time.Duration
		switch {
		case errors.Is(err, errBuild):
			return nil, err
		case err != nil:
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			fail = protocol.Unavailable(err, "%s: request failed: %v", r.Label, err)
		default:
			if fail = c.check(&r, resp); fail == nil {
				return resp, nil
			}
			code := protocol.CodeOf(fail)
			if code != protocol.CodeRateLimited && code != protocol.CodeUnavailable {
				return nil, fail
			}
			retryAfter = RetryAfter(resp.Header, time.Now())
			if code == protocol.CodeRateLimited {
				fail = withRetryAfter(fail, retryAfter)
			}
		}
		wait := p.backoff(attempt)
		if retryAfter > 0 {
			if retryAfter > p.MaxRetryAfter {
				return nil, fail
			}
			if p.HoldOnRateLimit && protocol.CodeOf(fail) == protocol.CodeRateLimited {
				c.pacer.Hold(retryAfter)
			}
			wait = max(wait, retryAfter)
		}
		if attempt >= p.MaxAttempts {
			return nil, fail
		}
		c.log.DebugContext(ctx, "retrying", "call", r.Label, "attempt", attempt, "wait", wait.String(), "error", fail.Error())
		if err := Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// errBuild marks a request that cannot be built; it is never retried.
var errBuild = errors.New("build request")

// once runs one attempt: it takes an in-flight slot, sends the request and reads
// the answer. Network errors come back without the request URL.
func (c *Client) once(ctx context.Context, p Policy, slots chan struct{}, r *Request) (*Response, error) {
	actx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(actx, r.Method, r.URL, body)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.CodeBadRequest, Message: r.Label + ": " + errBuild.Error() + ": " + stripURL(err).Error(), Cause: errBuild}
	}
	for _, h := range []http.Header{c.header, r.Header} {
		for k, vs := range h {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	if slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, stripURL(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, c.maxBody))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", stripURL(err))
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data}, nil
}

// stripURL drops the *url.Error wrapper, whose message holds the request URL and
// with it any credentials in the query string.
func stripURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// withRetryAfter gives a RateLimited error without a RetryAfter the answer's.
func withRetryAfter(err error, d time.Duration) error {
	pe, ok := err.(*protocol.Error)
	if !ok || d <= 0 || pe.RetryAfter > 0 {
		return err
	}
	cp := *pe
	cp.RetryAfter = d
	return &cp
}

// RetryAfter reads a Retry-After header, given in seconds or as an HTTP date,
// relative to now; 0 when absent, unreadable or in the past.
func RetryAfter(h http.Header, now time.Time) time.Duration {
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
