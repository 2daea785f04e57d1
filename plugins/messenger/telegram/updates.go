package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/messenger"
)

// allowedUpdates are the update kinds the bot asks Telegram for; the others
// (edits, channel posts, inline queries, ...) are not asked for, and skipped when
// they come anyway.
var allowedUpdates = []string{"message", "callback_query"}

// The Bot API objects the plugin reads, with only the fields it uses.
type (
	tgUpdate struct {
		UpdateID      int64       `json:"update_id"`
		Message       *tgMessage  `json:"message"`
		CallbackQuery *tgCallback `json:"callback_query"`
	}
	tgMessage struct {
		MessageID int64       `json:"message_id"`
		From      *tgUser     `json:"from"`
		Chat      tgChat      `json:"chat"`
		Date      int64       `json:"date"`
		Text      string      `json:"text"`
		Caption   string      `json:"caption"`
		Document  *tgDocument `json:"document"`
	}
	tgChat struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	}
	tgUser struct {
		ID           int64  `json:"id"`
		IsBot        bool   `json:"is_bot"`
		FirstName    string `json:"first_name"`
		LastName     string `json:"last_name"`
		Username     string `json:"username"`
		LanguageCode string `json:"language_code"`
	}
	tgCallback struct {
		ID              string     `json:"id"`
		From            tgUser     `json:"from"`
		Message         *tgMessage `json:"message"`
		InlineMessageID string     `json:"inline_message_id"`
		Data            string     `json:"data"`
	}
	tgDocument struct {
		FileID   string `json:"file_id"`
		FileName string `json:"file_name"`
		MimeType string `json:"mime_type"`
		FileSize int64  `json:"file_size"`
	}
)

// Updates long-polls getUpdates from req.Offset (0: only updates that arrive from
// now on) and sends every message, command, document and button press to stream,
// until ctx ends (ctx.Err()), stream.Send fails (that error) or Telegram keeps
// failing past max_retries (a protocol error).
func (t *Telegram) Updates(ctx context.Context, req *messenger.UpdatesRequest, stream messenger.UpdateStream) error {
	c, err := t.call(req.Credentials)
	if err != nil {
		return err
	}
	var me tgUser
	if err := t.do(ctx, c, &request{method: "getMe", params: struct{}{}}, &me); err != nil {
		return err
	}
	offset := req.Offset
	if offset <= 0 {
		if offset, err = t.skipBacklog(ctx, c); err != nil {
			return err
		}
	}
	for {
		batch, err := t.getUpdates(ctx, c, offset, c.s.pollTimeout)
		if err != nil {
			return err
		}
		for _, raw := range batch {
			id, u := mapUpdate(raw, me.Username, time.Now())
			offset = max(offset, id+1)
			if u == nil {
				continue
			}
			if err := stream.Send(u); err != nil {
				return err
			}
		}
	}
}

// skipBacklog drops the updates that arrived before the stream started (offset
// -1 returns the newest one and forgets the rest) and returns the offset after
// them.
func (t *Telegram) skipBacklog(ctx context.Context, c *call) (int64, error) {
	batch, err := t.getUpdates(ctx, c, -1, 0)
	if err != nil {
		return 0, err
	}
	var next int64
	for _, raw := range batch {
		var head struct {
			UpdateID int64 `json:"update_id"`
		}
		if json.Unmarshal(raw, &head) == nil {
			next = max(next, head.UpdateID+1)
		}
	}
	return next, nil
}

// getUpdates asks for the updates from offset, waiting up to wait for one. Each
// update stays raw so that one Telegram shapes unexpectedly cannot spoil the
// batch.
func (t *Telegram) getUpdates(ctx context.Context, c *call, offset int64, wait time.Duration) ([]json.RawMessage, error) {
	params := map[string]any{
		"offset":          offset,
		"timeout":         int(wait / time.Second),
		"allowed_updates": allowedUpdates,
	}
	var batch []json.RawMessage
	err := t.do(ctx, c, &request{method: "getUpdates", params: params, wait: wait}, &batch)
	return batch, err
}

// mapUpdate reads one raw update and returns its id and the update for the host,
// nil for an update the host does not handle: edits, channel posts, inline
// queries, service messages, media other than documents, a command addressed to
// another bot, a button of an inline-mode message (which has no chat) and an
// update that does not parse. now stamps button presses, which Telegram does not
// date.
func mapUpdate(raw json.RawMessage, botName string, now time.Time) (int64, *messenger.Update) {
	var u tgUpdate
	if err := json.Unmarshal(raw, &u); err != nil {
		var head struct {
			UpdateID int64 `json:"update_id"`
		}
		_ = json.Unmarshal(raw, &head)
		return head.UpdateID, nil
	}
	switch {
	case u.Message != nil:
		return u.UpdateID, mapMessage(u.UpdateID, u.Message, botName)
	case u.CallbackQuery != nil:
		return u.UpdateID, mapCallback(u.UpdateID, u.CallbackQuery, now)
	}
	return u.UpdateID, nil
}

// mapMessage maps a message: a document, else a command, else text; nil for
// anything else and for a command addressed to another bot.
func mapMessage(id int64, m *tgMessage, botName string) *messenger.Update {
	out := &messenger.Update{
		ID:       id,
		ChatID:   strconv.FormatInt(m.Chat.ID, 10),
		ChatType: chatType(m.Chat.Type),
		Time:     time.Unix(m.Date, 0).UTC(),
	}
	if m.From != nil {
		out.From = mapUser(m.From)
	}
	msgID := strconv.FormatInt(m.MessageID, 10)
	switch {
	case m.Document != nil:
		d := m.Document
		out.Document = &messenger.Document{
			MessageID: msgID, FileID: d.FileID, FileName: d.FileName, MIMEType: d.MimeType, Size: d.FileSize, Caption: m.Caption,
		}
	case m.Text != "":
		name, target, args, ok := parseCommand(m.Text)
		switch {
		case ok && target != "" && !strings.EqualFold(target, botName):
			return nil
		case ok:
			out.Command = &messenger.Command{MessageID: msgID, Name: name, Args: args}
		default:
			out.Message = &messenger.Message{MessageID: msgID, Text: m.Text}
		}
	default:
		return nil
	}
	return out
}

// mapCallback maps a button press on a message of a chat; nil for one on an
// inline-mode message, which has no chat.
func mapCallback(id int64, cb *tgCallback, now time.Time) *messenger.Update {
	if cb.Message == nil {
		return nil
	}
	return &messenger.Update{
		ID:       id,
		ChatID:   strconv.FormatInt(cb.Message.Chat.ID, 10),
		ChatType: chatType(cb.Message.Chat.Type),
		From:     mapUser(&cb.From),
		Time:     now.UTC(),
		Callback: &messenger.Callback{
			CallbackID: cb.ID,
			MessageID:  strconv.FormatInt(cb.Message.MessageID, 10),
			Data:       cb.Data,
		},
	}
}

// mapUser maps who sent an update.
func mapUser(u *tgUser) messenger.User {
	return messenger.User{
		ID:          strconv.FormatInt(u.ID, 10),
		Username:    u.Username,
		DisplayName: strings.TrimSpace(u.FirstName + " " + u.LastName),
		Language:    u.LanguageCode,
	}
}

// chatType maps Telegram's chat type; a supergroup is a group, and a type this
// plugin does not know is ChatUnknown, never private.
func chatType(t string) messenger.ChatType {
	switch t {
	case "private":
		return messenger.ChatPrivate
	case "group", "supergroup":
		return messenger.ChatGroup
	case "channel":
		return messenger.ChatChannel
	}
	return messenger.ChatUnknown
}

// parseCommand reads "/name@bot args": the name (lowercase, Telegram's 1-32 of
// letters, digits and _), the bot it is addressed to ("" when none) and the rest
// of the text, trimmed. ok is false when text is not a command.
func parseCommand(text string) (name, target, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", "", false
	}
	head, rest, _ := strings.Cut(text[1:], " ")
	if nl := strings.IndexAny(head, "\n\t"); nl >= 0 {
		head, rest = head[:nl], head[nl+1:]+" "+rest
	}
	head, target, _ = strings.Cut(head, "@")
	if !commandName(strings.ToLower(head)) {
		return "", "", "", false
	}
	return strings.ToLower(head), target, strings.TrimSpace(rest), true
}

// commandName reports whether s is a valid command name for Telegram.
func commandName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
