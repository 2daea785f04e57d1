package userconfig

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"unicode"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// The messenger bot's deployment-wide settings (docs/messenger.md).
const (
	KeyMessengerBotToken  = "messenger.bot_token"
	KeyMessengerOwnerChat = "messenger.owner_chat_id"
)

// MessengerSettings is what GET and PUT /api/admin/messenger answer: whether the
// bot token is set (only its mask is ever shown) and the owner's chat that job
// failures are reported to.
type MessengerSettings struct {
	BotTokenSet    bool   `json:"bot_token_set"`
	BotTokenMasked string `json:"bot_token_masked,omitempty"`
	OwnerChatID    string `json:"owner_chat_id,omitempty"`
}

type messengerBody struct {
	BotToken    *string `json:"bot_token"`
	OwnerChatID *string `json:"owner_chat_id"`
}

// MessengerSettings answers GET /api/admin/messenger (admins only).
func (a *API) MessengerSettings(w http.ResponseWriter, r *http.Request) {
	out, err := a.messengerSettings(r)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}

// PutMessengerSettings answers PUT /api/admin/messenger {bot_token?, owner_chat_id?}
// (admins only): a field left out stays, an empty string removes the setting.
// The token is sealed like every secret.
func (a *API) PutMessengerSettings(w http.ResponseWriter, r *http.Request) {
	var body messengerBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	var fields []httpx.FieldError
	if body.BotToken != nil && (len(*body.BotToken) > 256 || strings.IndexFunc(*body.BotToken, unicode.IsSpace) >= 0) {
		fields = append(fields, httpx.FieldError{Field: "bot_token", Message: "must be the token the messenger gave, without spaces, at most 256 characters"})
	}
	if body.OwnerChatID != nil && (len(*body.OwnerChatID) > 64 || strings.IndexFunc(*body.OwnerChatID, unicode.IsSpace) >= 0) {
		fields = append(fields, httpx.FieldError{Field: "owner_chat_id", Message: "must be a chat id, without spaces, at most 64 characters"})
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The messenger settings were not saved.", fields...))
		return
	}
	for key, v := range map[string]*string{KeyMessengerBotToken: body.BotToken, KeyMessengerOwnerChat: body.OwnerChatID} {
		if err := a.putSystemString(r, key, v); err != nil {
			httpx.Err(w, r, httpx.Internal(err))
			return
		}
	}
	a.MessengerSettings(w, r)
}

// putSystemString sets key to *v, removes it when *v is empty, leaves it when v
// is nil.
func (a *API) putSystemString(r *http.Request, key string, v *string) error {
	switch {
	case v == nil:
		return nil
	case *v == "":
		if err := a.store.DeleteSystem(r.Context(), key); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	}
	raw, err := json.Marshal(*v)
	if err != nil {
		return err
	}
	_, err = a.store.PutSystem(r.Context(), key, raw)
	return err
}

func (a *API) messengerSettings(r *http.Request) (MessengerSettings, error) {
	var out MessengerSettings
	entries, err := a.store.ListSystem(r.Context(), "messenger.")
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		switch e.Key {
		case KeyMessengerBotToken:
			out.BotTokenSet, out.BotTokenMasked = true, e.Masked
		case KeyMessengerOwnerChat:
			var s string
			if json.Unmarshal(e.Value, &s) == nil {
				out.OwnerChatID = s
			} else {
				out.OwnerChatID = strings.TrimSpace(string(e.Value))
			}
		}
	}
	return out, nil
}
