package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

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

// cardSource is where a card's sentence stands in its paper (the API's source).
type cardSource struct {
	Sentence string `json:"sentence"`
	PaperID  string `json:"paper_id"`
	Page     *int   `json:"page"`
	ChunkID  string `json:"chunk_id"`
	Start    *int   `json:"start"`
	End      *int   `json:"end"`
}

// ReaderURL is the reader page at the source: its page, its passage, and the
// sentence's rune offsets in the passage when known
// (/papers/{id}/read?page=N&passage=&start=&end=, the shape every link to the
// reader takes).
func (s *cardSource) ReaderURL() string {
	page, start, end := 1, 0, 0
	if s.Page != nil {
		page = *s.Page
	}
	if s.Start != nil && s.End != nil {
		start, end = *s.Start, *s.End
	}
	return ReaderURL(s.PaperID, page, s.ChunkID, start, end, "")
}

// Answer is what the card asks for: the back, or for a cloze drafted before the
// back held the answer alone ("answer\n\nsentence"), its first paragraph.
func (c card) Answer() string {
	if c.CardType == "cloze" {
		a, _, _ := strings.Cut(c.Back, "\n\n")
		return strings.TrimSpace(a)
	}
	return c.Back
}

// cardStates are the FSRS states the browser filters by, and cardStatuses the
// card statuses.
var (
	cardStates   = []string{"new", "learning", "review", "relearning"}
	cardStatuses = []string{"active", "draft", "suspended", "buried"}
)

// cardsPerPage is the size of a page of the card browser.
const cardsPerPage = 50

type cardsData struct {
	Cards     []card
	Decks     []deck
	DeckNames map[string]string
	States    []string
	Statuses  []string
	// Filter is the search as the address gives it (q, deck_id, paper_id,
	// state, status).
	Filter url.Values
	// Prev and Next are the addresses of the pages around this one ("" at the
	// ends); Offset is this page's first card, from 0.
	Prev, Next string
	Offset     int
}

// cardsPage is the card browser: the user's cards searched by text (front, back,
// tags) and filtered by deck, paper, state and status, newest first, fifty a page.
// The search is a GET form, so it works without JavaScript and can be bookmarked.
func (h *handler) cardsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	in := r.URL.Query()
	d := &cardsData{States: cardStates, Statuses: cardStatuses, Filter: url.Values{}, DeckNames: map[string]string{}}
	v.Title, v.Nav, v.Data = "Cards", "cards", d
	api := url.Values{"limit": {strconv.Itoa(cardsPerPage)}}
	for _, k := range []string{"q", "deck_id", "paper_id", "state", "status"} {
		if val := strings.TrimSpace(in.Get(k)); val != "" {
			d.Filter.Set(k, val)
			api.Set(k, val)
		}
	}
	if n, err := strconv.Atoi(in.Get("offset")); err == nil && n > 0 {
		d.Offset = n
		api.Set("offset", strconv.Itoa(n))
	}
	var decks struct {
		Items []deck `json:"items"`
	}
	var page struct {
		Items      []card `json:"items"`
		NextOffset *int   `json:"next_offset"`
	}
	for _, call := range []struct {
		path string
		out  any
	}{{"/api/decks", &decks}, {"/api/cards?" + api.Encode(), &page}} {
		if err := s.c.get(call.path, call.out); err != nil {
			if isStatus(err, http.StatusUnauthorized) {
				h.toSignIn(w, r)
				return
			}
			if v.Err == nil {
				v.Err, v.status = humanError(err), statusOf(err)
			}
		}
	}
	d.Cards, d.Decks = page.Items, decks.Items
	for _, dk := range decks.Items {
		d.DeckNames[dk.ID] = dk.Name
	}
	at := func(offset int) string {
		f := url.Values{}
		for k, vs := range d.Filter {
			f[k] = vs
		}
		if offset > 0 {
			f.Set("offset", strconv.Itoa(offset))
		}
		if len(f) == 0 {
			return "/cards"
		}
		return "/cards?" + f.Encode()
	}
	if d.Offset > 0 {
		d.Prev = at(max(d.Offset-cardsPerPage, 0))
	}
	if page.NextOffset != nil {
		d.Next = at(*page.NextOffset)
	}
	h.show(w, r, "cards", v)
}

type cardData struct {
	Card  card
	Decks []deck
	// Tags is the card's tags as the form shows them, space-separated.
	Tags string
}

// cardPage is the card editor: front, back, tags and deck, suspend or unsuspend,
// delete; with the source sentence and a link to the reader. Another user's card
// answers as a missing one.
func (h *handler) cardPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := pathEscape(chi.URLParam(r, "id"))
	d := &cardData{}
	if err := s.c.get("/api/cards/"+id, &d.Card); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		h.view.render(w, r, statusOf(err), "error", &view{Title: "Card not found", Me: s.me, Nav: "cards", Err: humanError(err)})
		return
	}
	var decks struct {
		Items []deck `json:"items"`
	}
	if err := s.c.get("/api/decks", &decks); err != nil && v.Err == nil {
		v.Err = humanError(err)
	}
	d.Decks, d.Tags = decks.Items, strings.Join(d.Card.Tags, " ")
	v.Title, v.Nav, v.Data = "Edit card", "cards", d
	h.show(w, r, "card", v)
}

// cardUpdate saves the editor's front, back, tags (separated by spaces or
// commas) and deck.
func (h *handler) cardUpdate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	tags := strings.FieldsFunc(r.PostFormValue("tags"), func(c rune) bool { return c == ',' || unicode.IsSpace(c) })
	if tags == nil {
		tags = []string{}
	}
	body := map[string]any{"front": r.PostFormValue("front"), "back": r.PostFormValue("back"), "tags": tags}
	if deck := r.PostFormValue("deck_id"); deck != "" {
		body["deck_id"] = deck
	}
	if err := s.c.do(http.MethodPatch, "/api/cards/"+pathEscape(id), body, nil); err != nil {
		if isStatus(err, http.StatusNotFound) {
			h.actionFailed(w, r, err, "/cards")
			return
		}
		h.fail(w, r, s, v, err, h.cardPage, nil)
		return
	}
	done(w, r, "/cards/"+pathEscape(id), "The card is saved.")
}

// cardStatus suspends a card (it leaves the review queue, keeping its
// schedule) or makes it active again.
func (h *handler) cardStatus(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := chi.URLParam(r, "id")
	to := back(r, "/cards/"+pathEscape(id))
	status := r.PostFormValue("status")
	msg := map[string]string{"suspended": "The card is suspended: it stays out of reviews until you unsuspend it.",
		"active": "The card is active: it is reviewed when due."}[status]
	if msg == "" {
		setFlashError(w, &uiError{What: "A card can be suspended or made active here.", Do: "Use the buttons on the card's page."})
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	if err := s.c.do(http.MethodPatch, "/api/cards/"+pathEscape(id), map[string]string{"status": status}, nil); err != nil {
		h.actionFailed(w, r, err, to)
		return
	}
	done(w, r, to, msg)
}
