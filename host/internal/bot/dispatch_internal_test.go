package bot

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
)

// TestDispatcherBoundsAChatsBacklog: while a chat's answer is held up, 32 more
// of its updates wait and the rest are dropped; those kept are answered in
// order once it moves, and other chats are answered meanwhile.
func TestDispatcherBoundsAChatsBacklog(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var answered []int64
	d := newDispatcher(func(_ context.Context, u *messenger.Update) error {
		if u.ID == 0 {
			close(started)
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		answered = append(answered, u.ID)
		return nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	d.dispatch(ctx, &messenger.Update{ID: 0, ChatID: "flood"})
	<-started
	for id := int64(1); id <= chatBacklog+8; id++ {
		d.dispatch(ctx, &messenger.Update{ID: id, ChatID: "flood"})
	}
	d.dispatch(ctx, &messenger.Update{ID: 1000, ChatID: "other"})
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(answered) == 1 && answered[0] == 1000
	}, 10*time.Second, 5*time.Millisecond, "another chat is answered while the flood waits")
	close(release)
	d.wait()
	want := []int64{1000}
	for id := int64(0); id <= chatBacklog; id++ {
		want = append(want, id)
	}
	require.Equal(t, want, answered)
	require.Empty(t, d.chats)
	require.Empty(t, d.waiting, "every token given back")
}

// TestDispatcherWaitsWhenFull: with waitingAtOnce updates waiting, taking the
// next one waits until one is answered, or gives up when the context ends.
func TestDispatcherWaitsWhenFull(t *testing.T) {
	release := make(chan struct{})
	d := newDispatcher(func(context.Context, *messenger.Update) error { <-release; return nil },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	for i := range waitingAtOnce {
		d.dispatch(ctx, &messenger.Update{ID: int64(i), ChatID: string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	late, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	d.dispatch(late, &messenger.Update{ID: 9999, ChatID: "late"})
	require.ErrorIs(t, late.Err(), context.DeadlineExceeded, "dispatch waited for room")
	d.mu.Lock()
	_, queued := d.chats["late"]
	d.mu.Unlock()
	require.False(t, queued, "given up, not queued")

	done := make(chan struct{})
	go func() { d.dispatch(ctx, &messenger.Update{ID: 10000, ChatID: "later"}); close(done) }()
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("dispatch still waits after answers made room")
	}
	d.wait()
	require.Empty(t, d.chats)
}
