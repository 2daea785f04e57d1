// Package messenger is the messenger-transport plugin kind (Telegram and the like):
// the Transport interface an author implements, its request and response types, and
// the gRPC glue.
//
// The bot token arrives in each request's Credentials map (CredBotToken); never
// read it from the environment or a file, never log it.
//
// # Text formats
//
// Send and Edit take text in one of three formats (Format). FormatPlain is shown as
// written. FormatHTML is the small HTML subset chat messengers share: <b>, <i>,
// <u>, <s>, <code>, <pre>, <a href="..."> and <blockquote>, with line breaks as
// newlines; the caller escapes
// <, > and & in the text it interpolates (EscapeHTML). FormatMarkdown is a
// messenger-neutral Markdown subset: *bold*, _italic_, `code`, ```pre``` and
// [text](url), with a backslash before any character to show it as written
// (EscapeMarkdown). A plugin renders the formats into its messenger's own markup
// and escapes everything else, so callers never write a messenger's dialect.
//
// # Optional calls
//
// A messenger with a command menu implements WithCommands as well; the serve
// helper then announces protocol.CapabilityCommands. Without it, SetCommands on
// the host's client fails with protocol.ErrUnsupported. A messenger that can
// pass on the files sent to the bot implements WithDownloads (capability
// protocol.CapabilityDownloads) in the same way.
//
// This package follows semantic versioning with the sdk module.
package messenger

import (
	"context"
	"io"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// Transport is a messenger transport. Every method must return when ctx is done
// (with ctx.Err()) and fail with the typed errors of package protocol.
type Transport interface {
	protocol.Plugin

	// Updates sends inbound updates to stream, in order, until ctx is done (then it
	// returns ctx.Err()) or the upstream fails. When stream.Send fails the receiver
	// is gone: stop and return that error.
	Updates(ctx context.Context, req *UpdatesRequest, stream UpdateStream) error
	// Send posts a message, optionally with inline buttons.
	Send(ctx context.Context, req *SendRequest) (*SendResponse, error)
	// Edit replaces the text and buttons of a sent message.
	Edit(ctx context.Context, req *EditRequest) (*EditResponse, error)
	// AnswerCallback acknowledges a button press.
	AnswerCallback(ctx context.Context, req *AnswerCallbackRequest) (*AnswerCallbackResponse, error)
}

// WithCommands is a Transport whose messenger shows a command menu (capability
// protocol.CapabilityCommands).
type WithCommands interface {
	Transport
	// SetCommands replaces the bot's command menu with req.Commands, in order.
	// A name outside the messenger's rules is a protocol.ErrBadRequest.
	SetCommands(ctx context.Context, req *SetCommandsRequest) (*SetCommandsResponse, error)
}

// WithDownloads is a Transport that passes on the files sent to the bot
// (capability protocol.CapabilityDownloads).
type WithDownloads interface {
	Transport
	// Download writes the bytes of the file req.FileID names (Document.FileID) to
	// w, in order. A file larger than req.MaxBytes is a protocol.ErrBadRequest,
	// said before the first byte when the messenger tells the size, else once
	// MaxBytes is passed (what was written then is to be thrown away). An unknown
	// or expired file id is a protocol.ErrNotFound. No error may quote a URL that
	// carries the bot's token.
	Download(ctx context.Context, req *DownloadRequest, w io.Writer) error
}

// DownloadRequest names a file sent to the bot.
type DownloadRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	// FileID is Document.FileID.
	FileID string
	// MaxBytes bounds the file; 0 means the plugin's own limit.
	MaxBytes int64
}

// CredBotToken is the Credentials key of the bot's token (for Telegram, the token
// BotFather gave). The host reads it from the system-scoped messenger.bot_token
// setting and passes it with every call.
const CredBotToken = "bot_token"

// UpdateStream receives inbound updates.
type UpdateStream interface {
	// Send delivers one update. An error means the receiver is gone.
	Send(u *Update) error
}

// UpdateStreamFunc adapts a function to UpdateStream.
type UpdateStreamFunc func(u *Update) error

// Send calls f.
func (f UpdateStreamFunc) Send(u *Update) error { return f(u) }

// UpdatesRequest starts the stream of inbound updates.
type UpdatesRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	// Offset is the id of the first update not yet handled; 0 means from now on.
	Offset int64
}

// User is who sent an update.
type User struct {
	ID          string
	Username    string
	DisplayName string
	// Language is a BCP 47 tag, when the messenger says.
	Language string
}

// Message is an inbound text message.
type Message struct {
	MessageID string
	Text      string
}

// Command is an inbound command ("/start abc").
type Command struct {
	MessageID string
	// Name is the command without its slash ("start").
	Name string
	// Args is the rest of the line ("abc").
	Args string
}

// Callback is an inline-button press.
type Callback struct {
	// CallbackID is what AnswerCallback takes.
	CallbackID string
	// MessageID is the message whose button was pressed.
	MessageID string
	// Data is the pressed Button's CallbackData.
	Data string
}

// Document is an inbound file (a PDF sent to the bot). The plugin does not
// download it.
type Document struct {
	MessageID string
	// FileID names the file to the messenger.
	FileID   string
	FileName string
	// MIMEType is what the messenger says the file is ("application/pdf"), when it
	// says.
	MIMEType string
	// Size in bytes; 0 when unknown.
	Size int64
	// Caption is the text sent with the file.
	Caption string
}

// ChatType is what kind of chat an update came from.
type ChatType int

// Chat types. ChatUnknown (a plugin that does not say) must be treated like a
// group: only ChatPrivate is a one-to-one chat with From.
const (
	ChatUnknown ChatType = iota
	ChatPrivate
	ChatGroup
	ChatChannel
)

// String names the chat type: "private", "group", "channel" or "unknown".
func (t ChatType) String() string {
	switch t {
	case ChatPrivate:
		return "private"
	case ChatGroup:
		return "group"
	case ChatChannel:
		return "channel"
	}
	return "unknown"
}

// Update is one inbound update; exactly one of Message, Command, Callback and
// Document is set.
type Update struct {
	// ID orders updates; UpdatesRequest.Offset takes ID+1 of the last handled one.
	ID     int64
	ChatID string
	// ChatType says whether ChatID is a private chat with From, a group or a
	// channel.
	ChatType ChatType
	From     User
	Time     time.Time

	Message  *Message
	Command  *Command
	Callback *Callback
	Document *Document
}

// Format is how a message's text is marked up.
type Format int

// Text formats.
const (
	FormatPlain Format = iota
	FormatMarkdown
	FormatHTML
)

// Button is one inline button: CallbackData or URL, not both.
type Button struct {
	Text         string
	CallbackData string
	URL          string
}

// SendRequest posts a message.
type SendRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	ChatID      string
	Text        string
	Format      Format
	// Buttons are rows of inline buttons.
	Buttons [][]Button
	// Silent sends without a notification sound.
	Silent bool
}

// SendResponse names the message sent.
type SendResponse struct {
	// MessageID names the message; when the plugin split an over-long text into
	// several messages, the last one, which carries the buttons.
	MessageID string
}

// EditRequest replaces a sent message's text and buttons.
type EditRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	ChatID      string
	MessageID   string
	Text        string
	Format      Format
	Buttons     [][]Button
}

// EditResponse answers Edit. It has no fields yet.
type EditResponse struct{}

// AnswerCallbackRequest acknowledges a button press.
type AnswerCallbackRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	CallbackID  string
	// Text is shown to the user, when set.
	Text string
	// Alert shows Text as a dialog rather than a toast.
	Alert bool
}

// AnswerCallbackResponse answers AnswerCallback. It has no fields yet.
type AnswerCallbackResponse struct{}

// BotCommand is one entry of the command menu.
type BotCommand struct {
	// Name is the command without its slash ("papers").
	Name string
	// Description is shown next to it in the menu.
	Description string
}

// SetCommandsRequest replaces the command menu.
type SetCommandsRequest struct {
	// Credentials for the messenger, per call.
	Credentials map[string]string
	// Commands in menu order; empty clears the menu.
	Commands []BotCommand
}

// SetCommandsResponse answers SetCommands. It has no fields yet.
type SetCommandsResponse struct{}
