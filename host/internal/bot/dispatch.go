package bot

import (
	"context"
	"log/slog"
	"sync"

	"github.com/lectern-research/lectern/sdk/messenger"
)

const (
	// chatsAtOnce bounds how many chats are answered at the same time: an
	// answer may wait on the API, a model or the messenger, and one user's slow
	// question must not hold up everyone else's /due.
	chatsAtOnce = 8
	// chatBacklog bounds the updates one chat may have waiting. A chat past it
	// is sending faster than any person types (its commands would be refused by
	// the per-chat limits anyway), so further updates are dropped and logged.
	chatBacklog = 32
	// waitingAtOnce bounds the updates waiting over all chats: past it, taking
	// the next update from the stream waits, as the serial loop did.
	waitingAtOnce = 256
)

// dispatcher answers updates of different chats side by side and each chat's
// own updates one after another, in the order they came: a review's answers
// must follow the card they answer.
type dispatcher struct {
	handle func(context.Context, *messenger.Update) error
	logger *slog.Logger
	slots  chan struct{}
	// waiting holds a token for every update queued and not yet answered.
	waiting chan struct{}

	mu    sync.Mutex
	chats map[string][]*messenger.Update // waiting updates; a key means a worker runs
	wg    sync.WaitGroup
}

func newDispatcher(handle func(context.Context, *messenger.Update) error, logger *slog.Logger) *dispatcher {
	return &dispatcher{handle: handle, logger: logger, slots: make(chan struct{}, chatsAtOnce),
		waiting: make(chan struct{}, waitingAtOnce), chats: map[string][]*messenger.Update{}}
}

// dispatch queues u behind its chat's earlier updates; it returns at once unless
// waitingAtOnce updates are waiting already (then when one is answered, or ctx
// ends).
func (d *dispatcher) dispatch(ctx context.Context, u *messenger.Update) {
	select {
	case d.waiting <- struct{}{}:
	case <-ctx.Done():
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	queue, running := d.chats[u.ChatID]
	if len(queue) >= chatBacklog {
		<-d.waiting
		d.logger.WarnContext(ctx, "bot: a chat has too many updates waiting; dropping one", "update", u.ID, "waiting", len(queue))
		return
	}
	d.chats[u.ChatID] = append(queue, u)
	if running {
		return
	}
	d.wg.Add(1)
	go d.work(ctx, u.ChatID)
}

// work answers chat's updates until none is waiting.
func (d *dispatcher) work(ctx context.Context, chat string) {
	defer d.wg.Done()
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		d.abandon(chat)
		return
	}
	defer func() { <-d.slots }()
	for {
		if ctx.Err() != nil {
			d.abandon(chat)
			return
		}
		d.mu.Lock()
		queue := d.chats[chat]
		if len(queue) == 0 {
			delete(d.chats, chat)
			d.mu.Unlock()
			return
		}
		u := queue[0]
		queue[0] = nil
		d.chats[chat] = queue[1:]
		d.mu.Unlock()
		if err := d.handle(ctx, u); err != nil {
			d.logger.WarnContext(ctx, "bot: answer an update", "update", u.ID, "error", err)
		}
		<-d.waiting
	}
}

// abandon forgets chat's waiting updates (the bot is stopping).
func (d *dispatcher) abandon(chat string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for range d.chats[chat] {
		<-d.waiting
	}
	delete(d.chats, chat)
}

// wait returns once every worker has stopped.
func (d *dispatcher) wait() { d.wg.Wait() }
