package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
)

// defaultDeck is the deck cards go to when the user has none and names none.
const defaultDeck = "My cards"

// deckFor returns the deck a card form chose: an existing deck's id, or a deck
// made (or found) by the name typed into new_deck.
func (h *handler) deckFor(r *http.Request, s *session) (string, error) {
	if id := r.PostFormValue("deck_id"); id != "" {
		return id, nil
	}
	name := strings.TrimSpace(r.PostFormValue("new_deck"))
	if name == "" {
		name = defaultDeck
	}
	var d deck
	err := s.c.do(http.MethodPost, "/api/decks", map[string]string{"name": name}, &d)
	if err == nil {
		return d.ID, nil
	}
	if !isStatus(err, http.StatusConflict) {
		return "", err
	}
	var decks struct {
		Items []deck `json:"items"`
	}
	if err := s.c.get("/api/decks", &decks); err != nil {
		return "", err
	}
	for _, d := range decks.Items {
		if d.Name == name {
			return d.ID, nil
		}
	}
	return "", err
}

// paperCardCreate makes a card from the paper by hand.
func (h *handler) paperCardCreate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	deckID, err := h.deckFor(r, s)
	if err != nil {
		h.fail(w, r, s, v, err, h.paperPage, map[string]string{"name": "new_deck"})
		return
	}
	body := map[string]any{"deck_id": deckID, "paper_id": id, "front": r.PostFormValue("front"), "back": r.PostFormValue("back"),
		"card_type": "basic"}
	if p, err := strconv.Atoi(r.PostFormValue("page")); err == nil && p > 0 {
		body["page_number"] = p
	}
	if err := s.c.do(http.MethodPost, "/api/cards", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.paperPage, map[string]string{"page_number": "page"})
		return
	}
	done(w, r, "/papers/"+id+"#cards", "The card is made; it is due for review now.")
}

// paperCardDraft drafts cards from the paper's own sentences (job cards.generate).
func (h *handler) paperCardDraft(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	deckID, err := h.deckFor(r, s)
	if err != nil {
		h.fail(w, r, s, v, err, h.paperPage, map[string]string{"name": "new_deck"})
		return
	}
	var a jobAnswer
	err = s.c.do(http.MethodPost, "/api/jobs", map[string]any{"kind": "cards.generate",
		"args": map[string]any{"paper_id": id, "deck_id": deckID, "max_cards": 5}}, &a)
	if err != nil {
		h.fail(w, r, s, v, err, h.paperPage, nil)
		return
	}
	done(w, r, "/papers/"+id+jobQuery(a.envelope())+"#cards", "Lectern is drafting cards; accept the ones you want to keep.")
}

// cardAccept makes a drafted card active.
func (h *handler) cardAccept(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/review")
	if err := s.c.do(http.MethodPatch, "/api/cards/"+pathEscape(chi.URLParam(r, "id")), map[string]string{"status": "active"}, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The card is accepted.")
}

// cardDelete deletes a card.
func (h *handler) cardDelete(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	to := back(r, "/review")
	if err := s.c.do(http.MethodDelete, "/api/cards/"+pathEscape(chi.URLParam(r, "id")), nil, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, "The card is deleted.")
}
