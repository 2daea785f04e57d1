package sourcehttp

import (
	"context"
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
	return sleep(ctx, time.Until(at))
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

// sleep waits d or until ctx ends, returning ctx's error in that case.
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
