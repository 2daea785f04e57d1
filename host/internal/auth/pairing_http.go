package auth

import (
	"errors"
	"net/http"
	"time"

	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/users"
)

// MessengerStatus is what GET /api/me/messenger answers: the caller's paired
// chat, if any, and when the pairing token they were shown stops working.
type MessengerStatus struct {
	Paired            bool       `json:"paired"`
	ChatID            string     `json:"chat_id,omitempty"`
	MessengerUsername string     `json:"messenger_username,omitempty"`
	PairedAt          *time.Time `json:"paired_at,omitempty"`
	TokenExpiresAt    *time.Time `json:"token_expires_at,omitempty"`
}

// PairingToken is what POST /api/me/messenger/pairing-token answers, once: the
// token (only its hash is kept) and the command to send the bot.
type PairingToken struct {
	Token     string    `json:"token"`
	Command   string    `json:"command"`
	ExpiresAt time.Time `json:"expires_at"`
}

// HandleMessengerStatus answers GET /api/me/messenger: the caller's pairing.
func (s *Service) HandleMessengerStatus(w http.ResponseWriter, r *http.Request) {
	ctx, id := r.Context(), CallerFrom(r.Context()).UserID
	var out MessengerStatus
	p, err := users.PairingOf(ctx, s.pool, id)
	switch {
	case errors.Is(err, users.ErrNotFound):
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
		return
	default:
		out.Paired, out.ChatID, out.MessengerUsername, out.PairedAt = true, p.ChatID, p.MessengerUsername, &p.PairedAt
	}
	if out.TokenExpiresAt, err = users.PairingTokenExpiry(ctx, s.pool, id, s.now()); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}

// HandlePairingToken answers POST /api/me/messenger/pairing-token: a new token
// for `/pair <token>` in a private chat with the bot, valid for 15 minutes. It
// replaces the caller's earlier unused token.
func (s *Service) HandlePairingToken(w http.ResponseWriter, r *http.Request) {
	token, expires, err := users.IssuePairingToken(r.Context(), s.pool, CallerFrom(r.Context()).UserID, s.now())
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusCreated, PairingToken{Token: token, Command: "/pair " + token, ExpiresAt: expires})
}

// HandleUnpairMessenger answers DELETE /api/me/messenger: the caller's chat is
// unpaired and their outstanding tokens deleted. Idempotent: 204 either way.
func (s *Service) HandleUnpairMessenger(w http.ResponseWriter, r *http.Request) {
	if _, err := users.Unpair(r.Context(), s.pool, CallerFrom(r.Context()).UserID); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
