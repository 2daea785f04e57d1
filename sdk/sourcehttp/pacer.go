package sourcehttp

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Pacer spaces request starts at least an interval apart across goroutines: each
// caller reserves the next free slot, then sleeps until it. The zero value is ready
// to use; a Pacer must not be copied after first use.
type Pacer struct {
	mu   sync.Mutex
	next time.Time
}

// Wait reserves the caller's slot, interval after the previous one, and blocks until
// it comes. It returns ctx's error when ctx ends first (the slot is then lost, which
// only ever delays later callers). An interval of zero or less only honours a Hold.
func (p *Pacer) Wait(ctx context.Context, interval time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(max(interval, 0))
	p.mu.Unlock()
	return Sleep(ctx, time.Until(at))
}

// Hold keeps every caller of Wait back for d from now (an upstream Retry-After that
// applies to all requests). A hold shorter than the slots already reserved changes
// nothing.
func (p *Pacer) Hold(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := time.Now().Add(d); until.After(p.next) {
		p.next = until
	}
}

// Next is the earliest time a Wait may return: the end of a Hold, or the slot
// after the last one reserved. A source can report it as the time it is rate
// limited until.
func (p *Pacer) Next() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

// Sleep waits d or until ctx ends, returning ctx's error in that case (at once
// when d is not positive).
func Sleep(ctx context.Context, d time.Duration) error {
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

// Backoff is the wait before retry n (0 for the first): base doubled n times,
// capped at maxWait, less up to a quarter at random so that clients retrying
// together spread out. A zero base is no wait.
func Backoff(base, maxWait time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	if d > 0 {
		d -= time.Duration(rand.Int64N(int64(d)/4 + 1))
	}
	return d
}
