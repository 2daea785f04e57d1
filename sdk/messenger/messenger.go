// Package messenger is the messenger-transport plugin kind (Telegram and the like):
// the Transport interface an author implements, its request and response types, and
// the gRPC glue.
//
// The bot token arrives in each request's Credentials map; never read it from the
// environment or a file, never log it.
//
// This package follows semantic versioning with the sdk module.
package messenger

import (
	"context"
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

// Update is one inbound update; exactly one of Message, Command and Callback is set.
type Update struct {
	// ID orders updates; UpdatesRequest.Offset takes ID+1 of the last handled one.
	ID     int64
	ChatID string
	From   User
	Time   time.Time

	Message  *Message
	Command  *Command
	Callback *Callback
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
