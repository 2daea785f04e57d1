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

// command is update id: the command name (without its slash) from chat's
// private chat.
func command(id int64, chat, name string) *messenger.Update {
	return &messenger.Update{ID: id, ChatID: chat, ChatType: messenger.ChatPrivate, From: messenger.User{ID: chat},
		Command: &messenger.Command{Name: name}}
}

// runGated runs a bot whose messenger streams updates and holds every message
// to chat "slow" until tr.gate closes; cancel stops it and done gets Run's error.
func runGated(t *testing.T, b *testBundle, updates ...*messenger.Update) (tr *gatedTransport, cancel context.CancelFunc, done chan error) {
	t.Helper()
	tr = &gatedTransport{slowChat: "slow", gate: make(chan struct{}), scriptedTransport: &scriptedTransport{
		chatTransport: b.tr, offsets: make(chan int64, 4), menu: make(chan []messenger.BotCommand, 4), updates: updates}}
	runner := b.withTransport(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	return tr, cancel, done
}

// TestRunAnswersChatsSideBySide: while one chat's answer is held up, other
// chats are answered; each chat's updates are answered in the order they came;
// Run returns once its context ends, with the held answer abandoned.
func TestRunAnswersChatsSideBySide(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	tr, cancel, done := runGated(t, b, command(1, "slow", "start"), command(2, "slow", "pair"),
		command(3, "quick", "start"), command(4, "quick", "pair"))
	defer cancel()

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

	stopRun(t, cancel, done)
}

// TestRunReturnsWhileAnAnswerIsHeld: an answer held up when the context ends
// is abandoned, and Run still returns.
func TestRunReturnsWhileAnAnswerIsHeld(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{})
	tr, cancel, done := runGated(t, b, command(1, "slow", "start"))
	<-tr.offsets
	<-tr.menu
	stopRun(t, cancel, done)
	require.Empty(t, b.tr.take("slow"))
}
