package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Sentences every chat may get.
const (
	// pairPrompt is all an unpaired chat ever gets (SPEC "Pairing").
	pairPrompt = "This chat is not paired with a Lectern account. In Lectern, open Settings → Integrations, " +
		"create a pairing token, and send it here as /pair <token>."
	// unreachable is the answer when the API cannot be reached: nothing was done.
	unreachable = "Lectern is not reachable, so nothing was done. Try again in a few minutes."
	// failedText is the answer when the bot itself failed (its database).
	failedText = "Something went wrong on Lectern's side, so nothing was done. Try again in a few minutes."
)

// Config is what a Bot needs. Pool, Transport and API are required.
type Config struct {
	// Pool is the database of the pairing rows and the delivery ledger.
	Pool *pgxpool.Pool
	// Transport is the messenger plugin.
	Transport messenger.Transport
	// API is the client every per-user call goes through.
	API *Client
	// CredentialsFunc returns the messenger credentials passed on every call (the
	// bot token of the system-scoped messenger.bot_token row). Default: none.
	CredentialsFunc func(ctx context.Context) (map[string]string, error)
	// OwnerChatFunc returns the owner's chat (messenger.owner_chat_id) that job
	// failures are reported to; "" when unset. Default: no owner chat.
	OwnerChatFunc func(ctx context.Context) (string, error)
	// DashboardURL is the base of the links to the dashboard's reader (PUBLIC_BASE_URL).
	DashboardURL string
	// Now is the clock (tests move it). Default: time.Now.
	Now func() time.Time
	// Logger receives what went wrong. Default: slog.Default().
	Logger *slog.Logger
	// PrivateFunc reports whether an update came from a private (one-to-one)
	// chat; only a private chat can pair. Default: the transport's ChatType is
	// ChatPrivate (ChatUnknown counts as a group).
	PrivateFunc func(u *messenger.Update) bool
}

// setMenu gives the messenger the command menu once, when it has one; it reports
// whether there is nothing more to do (set, or not offered).
func (b *Bot) setMenu(ctx context.Context, creds map[string]string) bool {
	wc, ok := b.cfg.Transport.(messenger.WithCommands)
	if !ok {
		return true
	}
	req := &messenger.SetCommandsRequest{Credentials: creds}
	for _, c := range Commands {
		req.Commands = append(req.Commands, messenger.BotCommand{Name: c.Name, Description: c.Description})
	}
	_, err := wc.SetCommands(ctx, req)
	switch {
	case err == nil, errors.Is(err, protocol.ErrUnsupported):
		return true
	default:
		b.cfg.Logger.WarnContext(ctx, "bot: set the command menu; trying again with the next stream", "error", err)
		return false
	}
}

// Bot answers a messenger's updates and delivers scheduled messages. Create it
// with New.
type Bot struct {
	cfg    Config
	limits *limiter
	// noPreload makes Tick claim every due delivery without first reading the
	// ledger (the benchmark's baseline; export_test.go).
	noPreload bool

	mu      sync.Mutex
	reviews map[string]*reviewSession // by chat id
}

// New returns a Bot over cfg.
func New(cfg Config) (*Bot, error) {
	if cfg.Pool == nil || cfg.Transport == nil || cfg.API == nil {
		return nil, errors.New("bot: Pool, Transport and API are required")
	}
	if cfg.CredentialsFunc == nil {
		cfg.CredentialsFunc = func(context.Context) (map[string]string, error) { return nil, nil }
	}
	if cfg.OwnerChatFunc == nil {
		cfg.OwnerChatFunc = func(context.Context) (string, error) { return "", nil }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PrivateFunc == nil {
		// The transport says (messenger.Update.ChatType); a chat it cannot place
		// counts as a group, so it never pairs.
		cfg.PrivateFunc = func(u *messenger.Update) bool { return u.ChatType == messenger.ChatPrivate }
	}
	cfg.DashboardURL = strings.TrimRight(cfg.DashboardURL, "/")
	return &Bot{cfg: cfg, limits: newLimiter(cfg.Now), reviews: map[string]*reviewSession{}}, nil
}

// Run answers updates and runs the scheduler once a minute until ctx ends, and
// returns once the updates it took are answered or abandoned. Chats are answered
// side by side, each chat's updates in order (dispatcher). A broken update
// stream is opened again after a pause, after the last update taken.
func (b *Bot) Run(ctx context.Context) error {
	go b.schedule(ctx, time.Minute)
	d := newDispatcher(b.Handle, b.cfg.Logger)
	defer d.wait()
	var offset int64
	menu := false
	for {
		creds, err := b.cfg.CredentialsFunc(ctx)
		if err == nil && !menu {
			menu = b.setMenu(ctx, creds)
		}
		if err == nil {
			err = b.cfg.Transport.Updates(ctx, &messenger.UpdatesRequest{Credentials: creds, Offset: offset},
				messenger.UpdateStreamFunc(func(u *messenger.Update) error {
					d.dispatch(ctx, u)
					offset = u.ID + 1
					return nil
				}))
		}
		if ctx.Err() != nil {
			return nil
		}
		b.cfg.Logger.WarnContext(ctx, "bot: the messenger's update stream ended; opening it again", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
}

// schedule runs Tick every period until ctx ends.
func (b *Bot) schedule(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := b.Tick(ctx); err != nil && ctx.Err() == nil {
			b.cfg.Logger.ErrorContext(ctx, "bot: scheduled deliveries", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// chat is one update being answered: who sent it, and the user the chat is
// paired with (nil when it is not).
type chat struct {
	u       *messenger.Update
	id      string
	pairing *users.Pairing
}

// Handle answers one update. An unpaired chat gets the /pair prompt and nothing
// else; a paired chat acts as its user through the API. The error is the
// messenger's failure to take the answer (the chat was answered otherwise).
func (b *Bot) Handle(ctx context.Context, u *messenger.Update) error {
	c := &chat{u: u, id: u.ChatID}
	p, err := users.PairingByChat(ctx, b.cfg.Pool, u.ChatID)
	switch {
	case errors.Is(err, users.ErrNotFound):
	case err != nil:
		b.cfg.Logger.ErrorContext(ctx, "bot: look up the chat's pairing", "error", err)
		return b.respond(ctx, c, failedText)
	default:
		c.pairing = &p
	}
	switch {
	case u.Command != nil:
		return b.command(ctx, c, strings.ToLower(u.Command.Name), strings.TrimSpace(u.Command.Args))
	case u.Callback != nil:
		return b.callback(ctx, c, u.Callback)
	case c.pairing == nil:
		// Text, a file, anything else: the prompt.
		return b.send(ctx, c.id, pairPrompt, nil)
	case u.Document != nil:
		return b.document(ctx, c, u.Document)
	}
	return b.send(ctx, c.id, "Send /help to see what I can do.", nil)
}

// respond answers c: a callback with a notice, anything else with a message.
func (b *Bot) respond(ctx context.Context, c *chat, text string) error {
	if c.u.Callback != nil {
		return b.answerCallback(ctx, c.u.Callback.CallbackID, text)
	}
	return b.send(ctx, c.id, text, nil)
}

// send posts text with buttons to chatID and returns the messenger's error.
func (b *Bot) send(ctx context.Context, chatID, text string, buttons [][]messenger.Button) error {
	_, err := b.post(ctx, chatID, text, buttons)
	return err
}

// post is send that also returns the id of the message the messenger confirmed.
func (b *Bot) post(ctx context.Context, chatID, text string, buttons [][]messenger.Button) (string, error) {
	creds, err := b.cfg.CredentialsFunc(ctx)
	if err != nil {
		return "", fmt.Errorf("bot: messenger credentials: %w", err)
	}
	resp, err := b.cfg.Transport.Send(ctx, &messenger.SendRequest{Credentials: creds, ChatID: chatID, Text: text, Buttons: buttons})
	if err != nil {
		return "", fmt.Errorf("bot: send to the chat: %w", err)
	}
	return resp.MessageID, nil
}

// edit replaces a sent message's text and buttons.
func (b *Bot) edit(ctx context.Context, chatID, messageID, text string, buttons [][]messenger.Button) error {
	creds, err := b.cfg.CredentialsFunc(ctx)
	if err != nil {
		return fmt.Errorf("bot: messenger credentials: %w", err)
	}
	if _, err := b.cfg.Transport.Edit(ctx, &messenger.EditRequest{Credentials: creds, ChatID: chatID, MessageID: messageID,
		Text: text, Buttons: buttons}); err != nil {
		return fmt.Errorf("bot: edit a message: %w", err)
	}
	return nil
}

// answerCallback acknowledges a button press with a short notice.
func (b *Bot) answerCallback(ctx context.Context, callbackID, text string) error {
	creds, err := b.cfg.CredentialsFunc(ctx)
	if err != nil {
		return fmt.Errorf("bot: messenger credentials: %w", err)
	}
	if _, err := b.cfg.Transport.AnswerCallback(ctx, &messenger.AnswerCallbackRequest{Credentials: creds, CallbackID: callbackID, Text: text}); err != nil {
		return fmt.Errorf("bot: answer a button: %w", err)
	}
	return nil
}

// apiFailure is what the chat is told when an API call failed: the API's own
// sentence for a refusal, "not reachable" otherwise. Nothing raw is passed on.
func (b *Bot) apiFailure(ctx context.Context, err error) string {
	var ae *APIError
	if errors.As(err, &ae) && ae.Detail != "" {
		return ae.Detail
	}
	if !errors.Is(err, ErrUnreachable) {
		b.cfg.Logger.ErrorContext(ctx, "bot: API call", "error", err)
	}
	return unreachable
}
