package jobs

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// hub wakes the streams of a job when something about it changes: a progress
// event (LISTEN/NOTIFY, from any host), or a state change River reports on this
// host. A wake carries no data; the stream reads what is new from the database,
// so a missed or merged wake never loses an event.
type hub struct {
	mu   sync.Mutex
	subs map[int64]map[chan struct{}]struct{}
}

func newHub() *hub {
	return &hub{subs: map[int64]map[chan struct{}]struct{}{}}
}

// subscribe returns a channel that receives a value (merged, never blocking the
// sender) whenever job id changes, and the function that ends the subscription.
func (h *hub) subscribe(id int64) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]struct{}{}
	}
	h.subs[id][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[id], ch)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
		h.mu.Unlock()
	}
}

// wake signals every subscriber of job id.
func (h *hub) wake(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[id] {
		select {
		case ch <- struct{}{}:
		default: // a wake is already pending
		}
	}
}

// wakeAll signals every subscriber, after a gap in which notifications may have
// been lost.
func (h *hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chans := range h.subs {
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// listen holds one dedicated connection (not from the pool, so it never starves
// request handlers) listening on progressChannel, and wakes subscribers until ctx
// ends. A lost connection is re-established after a pause.
func (h *hub) listen(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) {
	const retryPause = time.Second
	for {
		err := h.listenOnce(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "jobs: progress listener lost its connection; reconnecting", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryPause):
		}
	}
}

func (h *hub) listenOnce(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+progressChannel); err != nil {
		return err
	}
	// Anything sent while no listener was connected is read by the streams now.
	h.wakeAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		idText, _, _ := strings.Cut(n.Payload, ":")
		if id, err := strconv.ParseInt(idText, 10, 64); err == nil {
			h.wake(id)
		}
	}
}

// follow wakes subscribers on River's job events of this host (completed,
// cancelled, failed, snoozed) until events closes or ctx ends, and hands the
// changed jobs to announce, a few at a time, so that streams on other hosts (API
// nodes) wake too instead of waiting for their next poll.
func (h *hub) follow(ctx context.Context, events <-chan *river.Event, announce func(context.Context, []int64)) {
	const maxAnnounce = 500
	for {
		var ids []int64
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			ids = h.wakeEvent(ids, ev)
		}
	drain: // events that queued meanwhile share one announcement
		for len(ids) < maxAnnounce {
			select {
			case ev, ok := <-events:
				if !ok {
					break drain
				}
				ids = h.wakeEvent(ids, ev)
			default:
				break drain
			}
		}
		if len(ids) > 0 && announce != nil {
			announce(ctx, ids)
		}
	}
}

// wakeEvent wakes the subscribers of ev's job and appends its id to ids.
func (h *hub) wakeEvent(ids []int64, ev *river.Event) []int64 {
	if ev == nil || ev.Job == nil {
		return ids
	}
	h.wake(ev.Job.ID)
	return append(ids, ev.Job.ID)
}

// announceStates tells the streams of every host that the jobs' states changed.
// A lost announcement costs a stream at most its PollInterval.
func (rt *runtime) announceStates(ctx context.Context, ids []int64) {
	if err := notifyStates(ctx, rt.pool, ids); err != nil && ctx.Err() == nil {
		rt.log.WarnContext(ctx, "jobs: announce job states to other hosts; their streams poll instead", "error", err)
	}
}
