package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
)

// gatedTransport holds every message to one chat until its gate opens: a chat
// whose answer is slow (a question waiting on a model, a messenger that
// dawdles).
type gatedTransport struct {
	*scriptedTransport
	slowChat string
	gate     chan struct{}
}

func (g *gatedTransport) Send(ctx context.Context, req *messenger.SendRequest) (*messenger.SendResponse, error) {
	if req.ChatID == g.slowChat {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.scriptedTransport.Send(ctx, req)
}

// TestRunAnswersChatsSideBySide: while one chat's answer is held up, other
// chats are answered; each chat's updates are answered in the order they came;
// Run returns once its context ends, with the held answer abandoned.
func TestRunAnswersChatsSideBySide(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	update := func(id int64, chat, command string) *messenger.Update {
		return &messenger.Update{ID: id, ChatID: chat, ChatType: messenger.ChatPrivate, From: messenger.User{ID: chat},
			Command: &messenger.Command{Name: command}}
	}
	tr := &gatedTransport{slowChat: "slow", gate: make(chan struct{}), scriptedTransport: &scriptedTransport{
		chatTransport: b.tr, offsets: make(chan int64, 4), menu: make(chan []messenger.BotCommand, 4),
		updates: []*messenger.Update{
			update(1, "slow", "start"), update(2, "slow", "pair"),
			update(3, "quick", "start"), update(4, "quick", "pair"),
		}}}
	runner := b.withTransport(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()

	var quick []sent
	require.Eventually(t, func() bool { quick = append(quick, b.tr.take("quick")...); return len(quick) == 2 },
		10*time.Second, 10*time.Millisecond, "the quick chat is answered while the slow one waits")
	require.Contains(t, quick[0].Text, "not paired", "/start first")
	require.Contains(t, quick[1].Text, "Send the token", "then /pair")
	require.Empty(t, b.tr.take("slow"))

	close(tr.gate)
	var slow []sent
	require.Eventually(t, func() bool { slow = append(slow, b.tr.take("slow")...); return len(slow) == 2 },
		10*time.Second, 10*time.Millisecond)
	require.Contains(t, slow[0].Text, "not paired", "the slow chat's order holds too")
	require.Contains(t, slow[1].Text, "Send the token")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}

// TestRunReturnsWhileAnAnswerIsHeld: an answer held up when the context ends
// is abandoned, and Run still returns.
func TestRunReturnsWhileAnAnswerIsHeld(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	tr := &gatedTransport{slowChat: "slow", gate: make(chan struct{}), scriptedTransport: &scriptedTransport{
		chatTransport: b.tr, offsets: make(chan int64, 4), menu: make(chan []messenger.BotCommand, 4),
		updates: []*messenger.Update{{ID: 1, ChatID: "slow", ChatType: messenger.ChatPrivate,
			From: messenger.User{ID: "slow"}, Command: &messenger.Command{Name: "start"}}}}}
	runner := b.withTransport(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	<-tr.offsets
	<-tr.menu
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with an answer held")
	}
	require.Empty(t, b.tr.take("slow"))
}
