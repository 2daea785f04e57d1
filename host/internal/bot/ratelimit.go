package bot

import (
	"sync"
	"time"
)

// limit is one sliding window: at most events in window, and after an allowed
// event a cooldown during which nothing more is allowed.
type limit struct {
	events   int
	window   time.Duration
	cooldown time.Duration
}

// Per-chat limits (REFERENCE §7): most commands 5 a minute; /discover and
// /briefing 3; /pulse_now once a minute and then not for five minutes; buttons
// 10 a minute.
var (
	limitDefault  = limit{events: 5, window: time.Minute}
	limitCallback = limit{events: 10, window: time.Minute}
	limitsByName  = map[string]limit{
		"discover":  {events: 3, window: time.Minute},
		"briefing":  {events: 3, window: time.Minute},
		"pulse_now": {events: 1, window: time.Minute, cooldown: 5 * time.Minute},
	}
)

// limiter keeps, per chat and class, the times of the events in the window. It
// lives in memory: a restart forgets it, as the reference did.
type limiter struct {
	now func() time.Time

	mu     sync.Mutex
	events map[string][]time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, events: map[string][]time.Time{}}
}

// allow takes one event of class for chat under l; false means refused, with
// how long until one is allowed again.
func (lm *limiter) allow(chat, class string, l limit) (bool, time.Duration) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	now := lm.now()
	key := chat + "\x00" + class
	kept := lm.events[key][:0]
	for _, t := range lm.events[key] {
		if now.Sub(t) < max(l.window, l.cooldown) {
			kept = append(kept, t)
		}
	}
	lm.events[key] = kept
	if n := len(kept); n > 0 && l.cooldown > 0 && now.Sub(kept[n-1]) < l.cooldown {
		return false, l.cooldown - now.Sub(kept[n-1])
	}
	inWindow := 0
	for _, t := range kept {
		if now.Sub(t) < l.window {
			inWindow++
		}
	}
	if inWindow >= l.events {
		oldest := kept[len(kept)-inWindow]
		return false, l.window - now.Sub(oldest)
	}
	lm.events[key] = append(kept, now)
	if len(lm.events) > 10000 {
		lm.sweep(now)
	}
	return true, 0
}

// sweep forgets keys whose events are all older than the longest limit.
func (lm *limiter) sweep(now time.Time) {
	for k, ts := range lm.events {
		if len(ts) == 0 || now.Sub(ts[len(ts)-1]) > 10*time.Minute {
			delete(lm.events, k)
		}
	}
}
