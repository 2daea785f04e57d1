// Package ratelimit is the host's one rate-limiting utility: token buckets per key
// (an IP address, an email address, a user id), in memory, built on
// golang.org/x/time/rate. A limited request gets 429 with Retry-After.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter allows Events per Per for each key, with bursts up to Burst.
type Limiter struct {
	name  string
	limit rate.Limit
	burst int
	idle  time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
	now     func() time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns a limiter named name (it appears in the 429 detail) allowing events per
// period for each key, all of which may come at once.
func New(name string, events int, per time.Duration) *Limiter {
	return &Limiter{
		name:    name,
		limit:   rate.Every(per / time.Duration(events)),
		burst:   events,
		idle:    per,
		buckets: map[string]*bucket{},
		now:     time.Now,
	}
}

// Allow takes one event for key. When the key is over its limit it returns false and
// how long until the next event is allowed.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepIdle(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweepIdle forgets keys unused for a whole period (their bucket is full again), so
// memory stays bounded by the keys active in one period.
func (l *Limiter) sweepIdle(now time.Time) {
	if now.Sub(l.sweep) < l.idle {
		return
	}
	l.sweep = now
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= l.idle {
			delete(l.buckets, k)
		}
	}
}
