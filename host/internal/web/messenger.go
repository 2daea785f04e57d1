package web

import (
	"net/http"
	"time"
)

// messengerStatus is the caller's messenger pairing as GET /api/me/messenger
// answers it, and the token just issued (shown once, on the page that issued it).
type messengerStatus struct {
	Paired            bool       `json:"paired"`
	ChatID            string     `json:"chat_id"`
	MessengerUsername string     `json:"messenger_username"`
	PairedAt          *time.Time `json:"paired_at"`
	TokenExpiresAt    *time.Time `json:"token_expires_at"`

	Token        string
	TokenCommand string
}

// loadMessenger fills the settings page's messenger section, with the token
// messengerToken just issued when v carries one; a failure leaves the section
// saying it could not be read.
func loadMessenger(s *session, v *view, d *settingsData) {
	d.Issued, _ = v.Data.(*messengerStatus)
	var st messengerStatus
	if err := s.c.get("/api/me/messenger", &st); err != nil {
		return
	}
	d.Messenger = &st
}

// messengerToken issues a pairing token and shows the settings page with it,
// once: the page is not a redirect, so the token is in no URL and no cookie.
func (h *handler) messengerToken(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var tok struct {
		Token     string    `json:"token"`
		Command   string    `json:"command"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := s.c.do(http.MethodPost, "/api/me/messenger/pairing-token", nil, &tok); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	// settingsPage takes the token from v.Data and shows it.
	v.Data = &messengerStatus{Token: tok.Token, TokenCommand: tok.Command, TokenExpiresAt: &tok.ExpiresAt}
	h.settingsPage(w, r, s, v)
}

// messengerUnpair unpairs the caller's chat and voids their tokens.
func (h *handler) messengerUnpair(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	if err := s.c.do(http.MethodDelete, "/api/me/messenger", nil, nil); err != nil {
		h.fail(w, r, s, v, err, h.settingsPage, nil)
		return
	}
	done(w, r, "/settings#messenger", "The chat is unpaired.")
}
