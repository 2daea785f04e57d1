package sourcehttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// fastPolicy retries quickly and waits through Retry-Afters of up to 2s.
func fastPolicy() Policy {
	return Policy{MaxAttempts: 4, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, Jitter: 0.1, MaxRetryAfter: 2 * time.Second, Timeout: 5 * time.Second}
}

type testBundle struct {
	client *Client
	srv    *httptest.Server
	calls  *atomic.Int32
}

// setup starts a server answering its n-th request with steps[n], then 200 "ok",
// and a Client for it.
func setup(t *testing.T, cfg Config, steps ...func(w http.ResponseWriter, r *http.Request)) *testBundle {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(steps) {
			steps[i](w, r)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	cfg.Name = "test"
	cfg.Logger = slog.New(slog.DiscardHandler)
	return &testBundle{client: New(cfg), srv: srv, calls: &n}
}

func status(code int, retryAfter string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}
}

func (b *testBundle) get(ctx context.Context) (*Response, error) {
	return b.client.Do(ctx, &Request{URL: b.srv.URL + "/x?api_key=secret"})
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		policy    func(p *Policy)
		steps     []func(w http.ResponseWriter, r *http.Request)
		want      *protocol.Error
		wantCalls int32
		retryAt   time.Duration
	}{
		{"success at once", nil, nil, nil, 1, 0},
		{"429 then 5xx then ok", nil, []func(http.ResponseWriter, *http.Request){status(429, ""), status(503, "")}, nil, 3, 0},
		{"429 exhausted", func(p *Policy) { p.MaxAttempts = 2 }, []func(http.ResponseWriter, *http.Request){status(429, "0"), status(429, "0")}, protocol.ErrRateLimited, 2, 0},
		{"429 exhausted keeps the last Retry-After", func(p *Policy) { p.MaxAttempts = 1 }, []func(http.ResponseWriter, *http.Request){status(429, "1")}, protocol.ErrRateLimited, 1, time.Second},
		{"5xx exhausted", func(p *Policy) { p.MaxAttempts = 3 }, []func(http.ResponseWriter, *http.Request){status(500, ""), status(502, ""), status(504, "")}, protocol.ErrUnavailable, 3, 0},
		{"zero attempts means one", func(p *Policy) { p.MaxAttempts = 0 }, []func(http.ResponseWriter, *http.Request){status(500, "")}, protocol.ErrUnavailable, 1, 0},
		{"Retry-After beyond the cap returns at once", nil, []func(http.ResponseWriter, *http.Request){status(429, "120")}, protocol.ErrRateLimited, 1, 2 * time.Minute},
		{"5xx Retry-After beyond the cap returns at once", nil, []func(http.ResponseWriter, *http.Request){status(503, "120")}, protocol.ErrUnavailable, 1, 0},
		{"404 is the caller's", nil, []func(http.ResponseWriter, *http.Request){status(404, "")}, nil, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fastPolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			b := setup(t, Config{Policy: p}, tc.steps...)
			start := time.Now()
			resp, err := b.get(t.Context())
			require.Less(t, time.Since(start), time.Second)
			require.Equal(t, tc.wantCalls, b.calls.Load())
			if tc.want == nil {
				require.NoError(t, err)
				require.NotZero(t, resp.Status)
				return
			}
			require.ErrorIs(t, err, tc.want)
			var pe *protocol.Error
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.retryAt, pe.RetryAfter)
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	date := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	}
	for name, step := range map[string]func(http.ResponseWriter, *http.Request){"seconds": status(429, "1"), "HTTP date": date, "on a 503": status(503, "1")} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := fastPolicy()
			p.MaxRetryAfter = 5 * time.Second
			b := setup(t, Config{Policy: p}, step)
			start := time.Now()
			_, err := b.get(t.Context())
			require.NoError(t, err)
			require.EqualValues(t, 2, b.calls.Load())
			// An HTTP date has one-second resolution, so it may mean a little over 1s.
			require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
		})
	}
}

func TestNetworkFailure(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c := New(Config{Name: "test", Policy: fastPolicy(), Logger: slog.New(slog.DiscardHandler)})
	_, err := c.Do(t.Context(), &Request{URL: srv.URL + "/x?api_key=secret"})
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.NotContains(t, err.Error(), "secret", "errors must not carry the request URL")
	require.Contains(t, err.Error(), "test: request failed")
}

func TestBadURLIsNotRetried(t *testing.T) {
	t.Parallel()
	c := New(Config{Name: "test", Policy: fastPolicy()})
	_, err := c.Do(t.Context(), &Request{URL: "http://h/\x7f"})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	slow := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	p := fastPolicy()
	p.Timeout = 20 * time.Millisecond
	b := setup(t, Config{Policy: p}, slow)
	_, err := b.get(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 2, b.calls.Load())
}

func TestCheckFunc(t *testing.T) {
	t.Parallel()
	var labels []string
	var mu sync.Mutex
	check := func(req *Request, resp *Response) error {
		mu.Lock()
		labels = append(labels, req.Label)
		mu.Unlock()
		switch {
		case string(resp.Body) == "slow down":
			return protocol.RateLimited(0, "%s: slow down", req.Label)
		case resp.Status == http.StatusNotFound:
			return protocol.NotFound("%s: no such thing", req.Label)
		case resp.Status >= 500:
			return protocol.Unavailable(nil, "%s: down", req.Label)
		}
		return nil
	}
	slowDown := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "0")
		_, _ = w.Write([]byte("slow down"))
	}
	t.Run("a 200 body can be a rate limit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Config{Policy: fastPolicy(), CheckFunc: check}, slowDown)
		resp, err := b.client.Do(t.Context(), &Request{URL: b.srv.URL, Label: "test GET /x"})
		require.NoError(t, err)
		require.Equal(t, "ok", string(resp.Body))
		require.EqualValues(t, 2, b.calls.Load())
	})
	t.Run("a typed error is returned at once", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Config{Policy: fastPolicy(), CheckFunc: check}, status(404, ""))
		_, err := b.client.Do(t.Context(), &Request{URL: b.srv.URL, Label: "test GET /x"})
		require.ErrorIs(t, err, protocol.ErrNotFound)
		require.EqualError(t, err, "not_found: test GET /x: no such thing")
		require.EqualValues(t, 1, b.calls.Load())
	})
	t.Run("the label defaults to the name", func(t *testing.T) {
		t.Parallel()
		p := fastPolicy()
		p.MaxAttempts = 1
		b := setup(t, Config{Policy: p, CheckFunc: check}, status(500, ""))
		_, err := b.get(t.Context())
		require.EqualError(t, err, "unavailable: test: down")
	})
	mu.Lock()
	defer mu.Unlock()
	require.NotContains(t, labels, "")
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	echo := func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		body := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		_, _ = w.Write(body)
	}
	b := setup(t, Config{Policy: fastPolicy(), Header: http.Header{"Accept": {"application/json"}, "User-Agent": {"default"}}}, echo)
	resp, err := b.client.Do(t.Context(), &Request{
		Method: http.MethodPost, URL: b.srv.URL, Body: []byte(`{"ids":[]}`),
		Header: http.Header{"User-Agent": {"lectern-test/1 (mailto:a@b.org)"}, "X-Api-Key": {"k"}},
	})
	require.NoError(t, err)
	require.Equal(t, `{"ids":[]}`, string(resp.Body))
	h := <-got
	require.Equal(t, "application/json", h.Get("Accept"))
	require.Equal(t, "lectern-test/1 (mailto:a@b.org)", h.Get("User-Agent"))
	require.Equal(t, "k", h.Get("X-Api-Key"))
}

func TestMaxBody(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Policy: fastPolicy(), MaxBody: 1})
	resp, err := b.get(t.Context())
	require.NoError(t, err)
	require.Equal(t, "o", string(resp.Body))
}

// span runs n concurrent calls of do against a server and returns the time
// between the first and the last request start.
func span(t *testing.T, n int, do func(url string) error) time.Duration {
	t.Helper()
	var mu sync.Mutex
	var starts []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { require.NoError(t, do(srv.URL)) })
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, starts, n)
	first, last := starts[0], starts[0]
	for _, s := range starts {
		first, last = minTime(first, s), maxTime(last, s)
	}
	return last.Sub(first)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestPacingAcrossGoroutines(t *testing.T) {
	t.Parallel()
	t.Run("one client", func(t *testing.T) {
		t.Parallel()
		c := New(Config{Name: "test", Policy: Policy{Interval: 40 * time.Millisecond, MaxAttempts: 1}})
		d := span(t, 4, func(u string) error { _, err := c.Do(t.Context(), &Request{URL: u}); return err })
		require.GreaterOrEqual(t, d, 110*time.Millisecond) // 3 intervals, less timer slack
	})
	t.Run("two clients sharing a pacer", func(t *testing.T) {
		t.Parallel()
		pacer := &Pacer{}
		a := New(Config{Name: "a", Pacer: pacer, Policy: Policy{Interval: 40 * time.Millisecond}})
		b := New(Config{Name: "b", Pacer: pacer, Policy: Policy{Interval: 40 * time.Millisecond}})
		var i atomic.Int32
		d := span(t, 4, func(u string) error {
			c := a
			if i.Add(1)%2 == 0 {
				c = b
			}
			_, err := c.Do(t.Context(), &Request{URL: u})
			return err
		})
		require.GreaterOrEqual(t, d, 110*time.Millisecond)
	})
	t.Run("no interval, no pacing", func(t *testing.T) {
		t.Parallel()
		c := New(Config{Name: "test"})
		d := span(t, 8, func(u string) error { _, err := c.Do(t.Context(), &Request{URL: u}); return err })
		require.Less(t, d, 500*time.Millisecond)
	})
}

func TestSetPolicyAtRunTime(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{Policy: Policy{Interval: time.Hour}})
	_, err := b.get(t.Context())
	require.NoError(t, err)
	// The next slot was reserved an hour away; a shorter interval applies only to
	// the slots reserved after it.
	b.client.SetPolicy(Policy{Interval: 0, MaxAttempts: 2})
	require.Equal(t, 2, b.client.Policy().MaxAttempts)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = b.get(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the slot reserved under the old interval still holds")

	c := setup(t, Config{Policy: Policy{Interval: 0}})
	c.client.SetPolicy(Policy{Interval: time.Hour})
	_, err = c.get(t.Context())
	require.NoError(t, err)
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = c.get(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the new interval paces the next call")
}

func TestHoldOnRateLimit(t *testing.T) {
	t.Parallel()
	for _, hold := range []bool{true, false} {
		t.Run(map[bool]string{true: "held", false: "not held"}[hold], func(t *testing.T) {
			t.Parallel()
			p := fastPolicy()
			p.HoldOnRateLimit = hold
			b := setup(t, Config{Policy: p}, status(429, "1"))
			go func() { _, _ = b.get(t.Context()) }()
			require.Eventually(t, func() bool { return b.calls.Load() == 1 }, time.Second, time.Millisecond)
			var until time.Time
			if hold {
				// Wait for the first call to have read its 429 and set the hold,
				// however slow the machine is.
				require.Eventually(t, func() bool { until = b.client.pacer.Next(); return time.Now().Before(until) },
					5*time.Second, time.Millisecond)
			} else {
				time.Sleep(20 * time.Millisecond) // a wrongly set hold would show from here
			}
			start := time.Now()
			_, err := b.get(t.Context())
			require.NoError(t, err)
			if hold {
				require.False(t, time.Now().Before(until), "the second call waited out the hold")
				require.GreaterOrEqual(t, until.Sub(start), 500*time.Millisecond, "the hold is the 1 s Retry-After")
			} else {
				require.Less(t, time.Since(start), 800*time.Millisecond)
			}
		})
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	var inFlight, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	c := New(Config{Name: "test", Policy: Policy{MaxInFlight: 2}})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			_, err := c.Do(t.Context(), &Request{URL: srv.URL})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.EqualValues(t, 2, most.Load())
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	slow := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	tests := []struct {
		name   string
		policy Policy
		first  bool // make one call first, to fill the pacer or the slots
		steps  []func(http.ResponseWriter, *http.Request)
	}{
		{"during the attempt", fastPolicy(), false, []func(http.ResponseWriter, *http.Request){slow}},
		{"while pacing", Policy{Interval: time.Hour}, true, nil},
		{"during a backoff", Policy{MaxAttempts: 2, Backoff: time.Hour, MaxBackoff: time.Hour}, false, []func(http.ResponseWriter, *http.Request){status(500, "")}},
		{"during a Retry-After", Policy{MaxAttempts: 2, MaxRetryAfter: time.Hour}, false, []func(http.ResponseWriter, *http.Request){status(429, "3600")}},
		{"waiting for an in-flight slot", Policy{MaxInFlight: 1}, true, []func(http.ResponseWriter, *http.Request){slow}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{Policy: tc.policy}, tc.steps...)
			if tc.first {
				go func() { _, _ = b.get(t.Context()) }()
				require.Eventually(t, func() bool { return b.calls.Load() == 1 }, time.Second, time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := b.get(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), time.Second)
		})
	}
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Config{Policy: fastPolicy()})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := b.get(ctx)
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, b.calls.Load())
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	p := Policy{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		require.Equal(t, want, p.backoff(attempt), "attempt %d", attempt)
	}
	p.Jitter = 0.2
	for range 100 {
		d := p.backoff(2)
		require.GreaterOrEqual(t, d, 200*time.Millisecond)
		require.LessOrEqual(t, d, 240*time.Millisecond)
	}
	require.Zero(t, Policy{Backoff: time.Second}.backoff(1), "MaxBackoff 0 means no wait")
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, value string
		want        time.Duration
	}{
		{"absent", "", 0},
		{"seconds", "120", 2 * time.Minute},
		{"spaces", " 7 ", 7 * time.Second},
		{"zero", "0", 0},
		{"negative", "-5", 0},
		{"HTTP date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"RFC 850 date", now.Add(time.Minute).Format(time.RFC850), time.Minute},
		{"garbage", "soon", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tc.value != "" {
				h.Set("Retry-After", tc.value)
			}
			require.Equal(t, tc.want, RetryAfter(h, now))
		})
	}
}

func TestPacerHold(t *testing.T) {
	t.Parallel()
	var p Pacer
	p.Hold(60 * time.Millisecond)
	p.Hold(time.Millisecond) // shorter: changes nothing
	start := time.Now()
	require.NoError(t, p.Wait(t.Context(), 0))
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.True(t, errors.Is(p.Wait(ctx, 0), context.Canceled))
}
