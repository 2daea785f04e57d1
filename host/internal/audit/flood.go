package audit

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Sampling of unauthenticated events. A refused sign-in costs the attacker one
// request and the log one row; unchecked, a flood grows the log without bound. Per
// source (an IPv4 address, an IPv6 /64) and action, the first floodBurst events of
// a window are written one by one; the rest are counted, and when the window ends
// one summary row with the count is written. At most floodBudget events are
// written one by one per window across all sources, and at most floodMaxSources
// sources are told apart (the rest share the source "other"), so a window writes
// at most floodBudget + floodMaxSources + (number of actions) rows, however many
// attempts arrive.
const (
	floodWindow     = time.Minute
	floodBurst      = 5
	floodBudget     = 200
	floodMaxSources = 256
)

// otherSource is the source of sampled events beyond floodMaxSources.
const otherSource = "other"

type floodKey struct {
	action string
	source string
}

type floodCount struct {
	start    time.Time
	attempts int // every event of the window
	written  int // written one by one
}

// summary is the row written for a window with unwritten events.
type summary struct {
	key   floodKey
	count floodCount
}

// flood samples unauthenticated events; safe for concurrent use.
type flood struct {
	window  time.Duration
	burst   int
	maxKeys int
	budget  int
	now     func() time.Time
	write   func([]summary)

	mu          sync.Mutex
	keys        map[floodKey]*floodCount
	windowStart time.Time // of the global budget
	spent       int
	timer       *time.Timer
}

func newFlood(window time.Duration, burst, maxKeys, budget int, now func() time.Time, write func([]summary)) *flood {
	return &flood{window: window, burst: burst, maxKeys: maxKeys, budget: budget, now: now, write: write,
		keys: map[floodKey]*floodCount{}}
}

// admit counts one event and says whether to write it now.
func (f *flood) admit(action, source string) bool {
	f.mu.Lock()
	now := f.now()
	if now.Sub(f.windowStart) >= f.window {
		f.windowStart, f.spent = now, 0
	}
	var due []summary
	k := floodKey{action: action, source: source}
	c := f.keys[k]
	if c != nil && now.Sub(c.start) >= f.window {
		if c.attempts > c.written {
			due = append(due, summary{key: k, count: *c})
		}
		delete(f.keys, k)
		c = nil
	}
	if c == nil {
		if len(f.keys) >= f.maxKeys {
			k.source = otherSource
			c = f.keys[k]
		}
		if c == nil {
			c = &floodCount{start: now}
			f.keys[k] = c
		}
	}
	c.attempts++
	write := c.written < f.burst && f.spent < f.budget
	if write {
		c.written++
		f.spent++
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(f.window, f.tick)
	}
	f.mu.Unlock()
	if len(due) > 0 {
		f.write(due)
	}
	return write
}

// tick writes the summaries of ended windows and forgets them.
func (f *flood) tick() {
	f.mu.Lock()
	f.timer = nil
	due := f.sweep(false)
	if len(f.keys) > 0 {
		f.timer = time.AfterFunc(f.window, f.tick)
	}
	f.mu.Unlock()
	if len(due) > 0 {
		f.write(due)
	}
}

// flush writes the summaries of every window, ended or not (at shutdown, and in
// tests).
func (f *flood) flush() {
	f.mu.Lock()
	due := f.sweep(true)
	f.mu.Unlock()
	if len(due) > 0 {
		f.write(due)
	}
}

// sweep removes ended windows (all with force) and returns those with unwritten
// events, oldest first. The caller holds mu.
func (f *flood) sweep(force bool) []summary {
	now := f.now()
	var due []summary
	for k, c := range f.keys {
		if !force && now.Sub(c.start) < f.window {
			continue
		}
		if c.attempts > c.written {
			due = append(due, summary{key: k, count: *c})
		}
		delete(f.keys, k)
	}
	sort.Slice(due, func(i, j int) bool { return due[i].count.start.Before(due[j].count.start) })
	return due
}

// Flush writes the summary rows of sampled events not yet written; call it at
// shutdown so no count is lost.
func (l *Log) Flush() { l.flood.flush() }

// writeSummaries writes one row per summary: the action, the source and how many
// events the window held, of which how many were written one by one.
func (l *Log) writeSummaries(due []summary) {
	// A timer's goroutine or the tail of a request: no caller context to keep.
	ctx := context.Background()
	for _, s := range due {
		meta := map[string]any{
			"sampled":  true,
			"attempts": s.count.attempts,
			"written":  s.count.written,
			"since":    s.count.start.UTC().Format(time.RFC3339),
			"window_s": int(l.flood.window / time.Second),
			"summary": fmt.Sprintf("%d %s events from %s in the %s from %s, %d of them written one by one",
				s.count.attempts, s.key.action, s.key.source, l.flood.window, s.count.start.UTC().Format(time.RFC3339), s.count.written),
		}
		if s.key.source != otherSource && s.key.source != "" {
			meta["ip"] = s.key.source
		}
		l.insert(ctx, uuid.Nil, s.key.action, "", meta)
	}
}

// sourceOf is the sampling source of an event: its ip metadata, an IPv6 address
// widened to its /64 (one host holds a whole /64).
func sourceOf(metadata map[string]any) string {
	s, _ := metadata["ip"].(string)
	a, err := netip.ParseAddr(s)
	if err != nil {
		return clean(truncate(s, 64))
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
