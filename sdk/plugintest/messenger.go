package plugintest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// updatesGrace is how long after its context ends Updates may take to return.
const updatesGrace = 5 * time.Second

func (r *runner) messengerChecks() []check {
	checks := []check{
		{"typed_errors", r.messengerTypedErrors},
		{"commands_capability", r.commandsCapability},
		{"downloads_capability", r.downloadsCapability},
		{"updates_end_with_context", r.updatesEnd},
	}
	if r.opts.ChatID != "" {
		checks = append(checks,
			check{"send_edit_round_trip", r.sendEditRoundTrip},
			check{"long_message", r.longMessage},
		)
	}
	return checks
}

func (r *runner) transport() messenger.WithCommands {
	return r.conn.Plugin.(messenger.WithCommands)
}

// messengerTypedErrors sends requests no messenger can carry out; each must fail
// with a BadRequest before anything reaches the chat.
func (r *runner) messengerTypedErrors(ctx context.Context) error {
	m, creds, chat := r.transport(), r.opts.Credentials, r.opts.ChatID
	if chat == "" {
		chat = "1"
	}
	_, err := m.Send(ctx, &messenger.SendRequest{Credentials: creds, Text: "conformance"})
	if err := wantCode("send with no chat id", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = m.Send(ctx, &messenger.SendRequest{Credentials: creds, ChatID: chat, Text: "   "})
	if err := wantCode("send with no visible text", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	both := [][]messenger.Button{{{Text: "x", CallbackData: "x", URL: "https://example.org"}}}
	_, err = m.Send(ctx, &messenger.SendRequest{Credentials: creds, ChatID: chat, Text: "conformance", Buttons: both})
	if err := wantCode("send with a button carrying both callback data and a URL", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = m.Edit(ctx, &messenger.EditRequest{Credentials: creds, ChatID: chat, Text: "conformance"})
	if err := wantCode("edit with no message id", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = m.AnswerCallback(ctx, &messenger.AnswerCallbackRequest{Credentials: creds})
	return wantCode("answer callback with no callback id", err, protocol.ErrBadRequest)
}

// commandsCapability checks that the commands capability is announced if and
// only if SetCommands is served: without it SetCommands is Unsupported, with it a
// command name with a space is a BadRequest.
func (r *runner) commandsCapability(ctx context.Context) error {
	_, err := r.transport().SetCommands(ctx, &messenger.SetCommandsRequest{
		Credentials: r.opts.Credentials,
		Commands:    []messenger.BotCommand{{Name: "not a command", Description: "conformance"}},
	})
	if !r.conn.Info.HasCapability(protocol.CapabilityCommands) {
		return wantCode("set commands without the commands capability", err, protocol.ErrUnsupported)
	}
	return wantCode("set commands with a name holding spaces", err, protocol.ErrBadRequest)
}

// downloadsCapability checks that the downloads capability is announced if and
// only if Download is served: without it Download is Unsupported, with it a
// request naming no file is a BadRequest that writes nothing.
func (r *runner) downloadsCapability(ctx context.Context) error {
	dl, ok := r.conn.Plugin.(messenger.WithDownloads)
	if !ok {
		return errors.New("the host's client of this plugin cannot download; rebuild the kit against this SDK")
	}
	var w countingWriter
	err := dl.Download(ctx, &messenger.DownloadRequest{Credentials: r.opts.Credentials}, &w)
	if !r.conn.Info.HasCapability(protocol.CapabilityDownloads) {
		return wantCode("download without the downloads capability", err, protocol.ErrUnsupported)
	}
	if err := wantCode("download naming no file", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	if w.n > 0 {
		return fmt.Errorf("download naming no file wrote %d bytes before it failed", w.n)
	}
	return nil
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// updatesEnd starts the update stream and cancels it: Updates must return within
// updatesGrace of its context ending, with the context's error or (when it could
// not start, say for want of credentials) a typed error, and the plugin must
// still answer afterwards. With Options.ChatID set the messenger is reachable, so
// only the context's error will do.
func (r *runner) updatesEnd(ctx context.Context) error {
	const run = 300 * time.Millisecond
	uctx, cancel := context.WithTimeout(ctx, run)
	defer cancel()
	start := time.Now()
	err := r.transport().Updates(uctx, &messenger.UpdatesRequest{Credentials: r.opts.Credentials},
		messenger.UpdateStreamFunc(func(*messenger.Update) error { return nil }))
	if took := time.Since(start); took > run+updatesGrace {
		return fmt.Errorf("updates returned %s after its context ended, want within %s", took-run, updatesGrace)
	}
	ctxErr := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	switch {
	case err == nil:
		return fmt.Errorf("updates returned no error; it must run until its context ends and then return the context's error")
	case r.opts.ChatID != "" && !ctxErr:
		return fmt.Errorf("updates failed with %v, want the context's error when it ends", err)
	case !ctxErr && (protocol.CodeOf(err) == "" || protocol.CodeOf(err) == protocol.CodeInternal):
		return fmt.Errorf("updates failed with %v (code %q), want the context's error or a typed error", err, protocol.CodeOf(err))
	}
	if _, err := r.conn.Plugin.Describe(ctx, &protocol.DescribeRequest{}); err != nil {
		return fmt.Errorf("describe after a cancelled update stream: %w", err)
	}
	return nil
}

// sendEditRoundTrip sends a message with markup characters and a button to
// Options.ChatID, then edits it.
func (r *runner) sendEditRoundTrip(ctx context.Context) error {
	m, creds := r.transport(), r.opts.Credentials
	for _, f := range []messenger.Format{messenger.FormatPlain, messenger.FormatMarkdown, messenger.FormatHTML} {
		text := "Lectern conformance: 1 < 2 & 3 > 2, *stars* and _underscores_"
		if f == messenger.FormatHTML {
			text = "<b>Lectern</b> conformance: " + messenger.EscapeHTML("1 < 2 & 3 > 2")
		}
		sent, err := m.Send(ctx, &messenger.SendRequest{Credentials: creds, ChatID: r.opts.ChatID, Text: text, Format: f,
			Buttons: [][]messenger.Button{{{Text: "OK", CallbackData: "conformance:ok"}}}})
		if err != nil {
			return fmt.Errorf("send (format %d): %w", f, err)
		}
		if sent.MessageID == "" {
			return fmt.Errorf("send (format %d) returned no message id", f)
		}
		if _, err := m.Edit(ctx, &messenger.EditRequest{Credentials: creds, ChatID: r.opts.ChatID, MessageID: sent.MessageID,
			Text: "Lectern conformance: edited", Format: f}); err != nil {
			return fmt.Errorf("edit of message %s: %w", sent.MessageID, err)
		}
	}
	return nil
}

// longMessage sends a text far longer than any chat messenger takes in one
// message: the plugin must split it rather than fail.
func (r *runner) longMessage(ctx context.Context) error {
	line := "Lectern conformance: a long message is split at line breaks, never refused."
	text := strings.Repeat(line+"\n", 20000/len(line))
	sent, err := r.transport().Send(ctx, &messenger.SendRequest{Credentials: r.opts.Credentials, ChatID: r.opts.ChatID, Text: text,
		Buttons: [][]messenger.Button{{{Text: "OK", CallbackData: "conformance:ok"}}}})
	if err != nil {
		return fmt.Errorf("send of %d characters: %w", len(text), err)
	}
	if sent.MessageID == "" {
		return fmt.Errorf("send of %d characters returned no message id", len(text))
	}
	return nil
}
