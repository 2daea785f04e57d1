package main

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Bot API limits the plugin checks before calling, so that a bad request fails
// with a sentence saying what to change.
const (
	// maxCallbackData is the most bytes of a button's callback_data.
	maxCallbackData = 64
	// maxCallbackText is the most characters of a button-press notification;
	// longer text is cut.
	maxCallbackText = 200
	// maxCommands is the most entries of the command menu.
	maxCommands = 100
	// maxCommandDescription is the most characters of a command's description.
	maxCommandDescription = 256
)

// tgButton and tgKeyboard are the inline keyboard's JSON.
type tgButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

type tgKeyboard struct {
	InlineKeyboard [][]tgButton `json:"inline_keyboard"`
}

// sentMessage is the part of a sent Message the plugin reads.
type sentMessage struct {
	MessageID int64 `json:"message_id"`
}

// Send posts req.Text to the chat. Text over Telegram's 4096 characters goes as
// several messages, cut at line breaks or spaces, with the buttons on the last;
// the response names that last one. When a later part fails, the earlier ones
// stay sent and the error says how many.
func (t *Telegram) Send(ctx context.Context, req *messenger.SendRequest) (*messenger.SendResponse, error) {
	if err := checkChat(req.ChatID); err != nil {
		return nil, err
	}
	keyboard, err := inlineKeyboard(req.Buttons)
	if err != nil {
		return nil, err
	}
	parts, err := renderParts(req.Text, req.Format)
	if err != nil {
		return nil, err
	}
	c, err := t.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	var last sentMessage
	for i, part := range parts {
		params := map[string]any{
			"chat_id":              req.ChatID,
			"text":                 part,
			"parse_mode":           "HTML",
			"disable_notification": req.Silent,
		}
		if i == len(parts)-1 && keyboard != nil {
			params["reply_markup"] = keyboard
		}
		if err := t.do(ctx, c, &request{method: "sendMessage", params: params, once: true}, &last); err != nil {
			if i > 0 {
				return nil, partialSend(err, i, len(parts))
			}
			return nil, err
		}
	}
	return &messenger.SendResponse{MessageID: strconv.FormatInt(last.MessageID, 10)}, nil
}

// partialSend adds to a part's failure that the parts before it were sent.
func partialSend(err error, sent, total int) error {
	pe, ok := err.(*protocol.Error)
	if !ok {
		return err
	}
	cp := *pe
	cp.Message = strconv.Itoa(sent) + " of " + strconv.Itoa(total) + " parts of the message were sent before this one failed: " + pe.Message
	return &cp
}

// Edit replaces a sent message's text and buttons (no buttons removes them). An
// edit that changes nothing succeeds; text that would need more than one message
// is a BadRequest.
func (t *Telegram) Edit(ctx context.Context, req *messenger.EditRequest) (*messenger.EditResponse, error) {
	if err := checkChat(req.ChatID); err != nil {
		return nil, err
	}
	msgID, err := strconv.ParseInt(strings.TrimSpace(req.MessageID), 10, 64)
	if err != nil || msgID <= 0 {
		return nil, protocol.BadRequest("telegram: message id %q is not a Telegram message id (a positive whole number)", req.MessageID)
	}
	keyboard, err := inlineKeyboard(req.Buttons)
	if err != nil {
		return nil, err
	}
	parts, err := renderParts(req.Text, req.Format)
	if err != nil {
		return nil, err
	}
	if len(parts) > 1 {
		return nil, protocol.BadRequest("telegram: the edited text is longer than one message (%d characters); send it as a new message instead", maxMessageLen)
	}
	c, err := t.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"chat_id": req.ChatID, "message_id": msgID, "text": parts[0], "parse_mode": "HTML"}
	if keyboard != nil {
		params["reply_markup"] = keyboard
	}
	err = t.do(ctx, c, &request{method: "editMessageText", params: params}, nil)
	if err != nil && !notModified(err) {
		return nil, err
	}
	return &messenger.EditResponse{}, nil
}

// AnswerCallback acknowledges a button press, with req.Text as a notification
// (cut to Telegram's 200 characters) or, with req.Alert, a dialog.
func (t *Telegram) AnswerCallback(ctx context.Context, req *messenger.AnswerCallbackRequest) (*messenger.AnswerCallbackResponse, error) {
	if strings.TrimSpace(req.CallbackID) == "" {
		return nil, protocol.BadRequest("telegram: the callback id is empty; pass the Callback.CallbackID of the button press")
	}
	c, err := t.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"callback_query_id": req.CallbackID}
	if req.Text != "" {
		params["text"] = cut(req.Text, maxCallbackText)
		params["show_alert"] = req.Alert
	}
	if err := t.do(ctx, c, &request{method: "answerCallbackQuery", params: params}, nil); err != nil {
		return nil, err
	}
	return &messenger.AnswerCallbackResponse{}, nil
}

// SetCommands replaces the bot's command menu; an empty list removes it.
func (t *Telegram) SetCommands(ctx context.Context, req *messenger.SetCommandsRequest) (*messenger.SetCommandsResponse, error) {
	if len(req.Commands) > maxCommands {
		return nil, protocol.BadRequest("telegram: %d commands, but the menu holds at most %d", len(req.Commands), maxCommands)
	}
	type botCommand struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	cmds := make([]botCommand, 0, len(req.Commands))
	seen := map[string]bool{}
	for _, cmd := range req.Commands {
		switch d := strings.TrimSpace(cmd.Description); {
		case !commandName(cmd.Name):
			return nil, protocol.BadRequest("telegram: command %q must be 1 to 32 lowercase letters, digits or underscores, without the slash", cmd.Name)
		case seen[cmd.Name]:
			return nil, protocol.BadRequest("telegram: command %q is listed twice", cmd.Name)
		case d == "" || utf8.RuneCountInString(d) > maxCommandDescription:
			return nil, protocol.BadRequest("telegram: command %q needs a description of 1 to %d characters", cmd.Name, maxCommandDescription)
		default:
			seen[cmd.Name] = true
			cmds = append(cmds, botCommand{Command: cmd.Name, Description: d})
		}
	}
	c, err := t.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	r := &request{method: "setMyCommands", params: map[string]any{"commands": cmds}}
	if len(cmds) == 0 {
		r = &request{method: "deleteMyCommands", params: struct{}{}}
	}
	if err := t.do(ctx, c, r, nil); err != nil {
		return nil, err
	}
	return &messenger.SetCommandsResponse{}, nil
}

// checkChat refuses an empty chat id or one with white space in it.
func checkChat(chatID string) error {
	if strings.TrimSpace(chatID) == "" || strings.ContainsAny(chatID, " \t\n") {
		return protocol.BadRequest("telegram: chat id %q is not a Telegram chat id", chatID)
	}
	return nil
}

// inlineKeyboard builds the inline keyboard, nil for no buttons. Each button needs a
// text and exactly one of callback data (at most 64 bytes) and an http(s) or
// tg URL.
func inlineKeyboard(rows [][]messenger.Button) (*tgKeyboard, error) {
	var out [][]tgButton
	for i, row := range rows {
		var r []tgButton
		for j, b := range row {
			where := "button " + strconv.Itoa(j+1) + " of row " + strconv.Itoa(i+1)
			switch {
			case strings.TrimSpace(b.Text) == "":
				return nil, protocol.BadRequest("telegram: %s has no text", where)
			case (b.CallbackData == "") == (b.URL == ""):
				return nil, protocol.BadRequest("telegram: %s needs exactly one of callback data and a URL", where)
			case len(b.CallbackData) > maxCallbackData:
				return nil, protocol.BadRequest("telegram: %s has %d bytes of callback data; Telegram allows %d", where, len(b.CallbackData), maxCallbackData)
			case b.URL != "" && !linkURL(b.URL):
				return nil, protocol.BadRequest("telegram: %s has a URL that is not http, https or tg", where)
			}
			r = append(r, tgButton{Text: b.Text, CallbackData: b.CallbackData, URL: b.URL})
		}
		if len(r) > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &tgKeyboard{InlineKeyboard: out}, nil
}

// cut shortens s to at most n characters, ending it with "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
