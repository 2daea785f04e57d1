package learning

import (
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// API serves decks, cards and reviews for the caller. It checks that a paper or
// passage a card cites is one the caller may see through papers.
type API struct {
	store  *Store
	papers *papers.Store
}

// NewAPI returns the learning API.
func NewAPI(store *Store, papers *papers.Store) *API { return &API{store: store, papers: papers} }

// Limits of the learning API.
const (
	MaxBatchReviews = 1000
	maxTextChars    = 20000
	maxOffset       = 100000
)

var (
	cardTypes    = []string{"basic", "cloze", "concept", "quote", "method", "comparison"}
	cardStatuses = []string{"draft", "active", "suspended", "buried"}
)

func caller(r *http.Request) uuid.UUID { return auth.CallerFrom(r.Context()).UserID }

func fail(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *httpx.Error
	switch {
	case errors.Is(err, ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("Not found."))
	case errors.Is(err, ErrNotReviewable):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "card_not_active", Detail: "This card is a draft or suspended; make it active to review it."})
	case errors.Is(err, ErrOutOfOrder):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "review_out_of_order", Detail: err.Error()})
	case errors.Is(err, ErrNotLastReview):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "review_not_last",
			Detail: "This card was reviewed again since; undo its latest review first."})
	case errors.Is(err, ErrDeckExists):
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "already_exists", Detail: "A deck with this name exists already."})
	case errors.As(err, &apiErr):
		httpx.Err(w, r, apiErr)
	default:
		httpx.Err(w, r, httpx.Internal(err))
	}
}

func invalid(field, msg string) error {
	return httpx.Invalid("Some fields are not valid.", httpx.FieldError{Field: field, Message: msg})
}

func pathUUID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(chi.URLParam(r, name))
	if err != nil {
		return uuid.Nil, ErrNotFound
	}
	return id, nil
}

// deckAndLimit reads the optional ?deck_id= and ?limit= (1-500, default def) of a
// card listing.
func deckAndLimit(r *http.Request, def int) (*uuid.UUID, int, error) {
	q := r.URL.Query()
	var deck *uuid.UUID
	if s := q.Get("deck_id"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, 0, invalid("deck_id", "must be a deck id")
		}
		deck = &id
	}
	limit := def
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			return nil, 0, invalid("limit", "must be from 1 to 500")
		}
		limit = n
	}
	return deck, limit, nil
}

// ---- decks ----

// ListDecks answers the caller's decks with card and due counts.
func (a *API) ListDecks(w http.ResponseWriter, r *http.Request) {
	decks, err := a.store.Decks(r.Context(), caller(r))
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": decks})
}

type deckBody struct {
	Name             string   `json:"name"`
	Description      string   `json:"description"`
	DesiredRetention *float64 `json:"desired_retention"`
	MaximumInterval  *int     `json:"maximum_interval_days"`
}

// CreateDeck makes a deck: name required; desired_retention 0.70-0.99 (default
// 0.9), maximum_interval_days 1-36500 (default 36500).
func (a *API) CreateDeck(w http.ResponseWriter, r *http.Request) {
	var b deckBody
	if !httpx.DecodeJSON(w, r, &b, httpx.MaxJSONBody) {
		return
	}
	var fields []httpx.FieldError
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" || utf8.RuneCountInString(b.Name) > 200 {
		fields = append(fields, httpx.FieldError{Field: "name", Message: "must be 1 to 200 characters"})
	}
	ret, maxInt := 0.9, 36500
	if b.DesiredRetention != nil {
		if ret = *b.DesiredRetention; ret < 0.7 || ret > 0.99 {
			fields = append(fields, httpx.FieldError{Field: "desired_retention", Message: "must be from 0.70 to 0.99"})
		}
	}
	if b.MaximumInterval != nil {
		if maxInt = *b.MaximumInterval; maxInt < 1 || maxInt > 36500 {
			fields = append(fields, httpx.FieldError{Field: "maximum_interval_days", Message: "must be from 1 to 36500"})
		}
	}
	if len(fields) > 0 {
		fail(w, r, httpx.Invalid("Some fields are not valid.", fields...))
		return
	}
	d, err := a.store.CreateDeck(r.Context(), caller(r), DeckParams{Name: b.Name, Description: b.Description,
		DesiredRetention: ret, MaximumInterval: maxInt})
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusCreated, d)
}

// ---- cards ----

// ListCards answers a page of the caller's cards, newest first: ?deck_id=,
// ?paper_id=, ?status=, ?state= (new, learning, review, relearning), ?q= (words
// in the front, back or a tag), ?limit= (1-500, default 100) and ?offset=; the
// answer's next_offset asks for the next page (null on the last).
func (a *API) ListCards(w http.ResponseWriter, r *http.Request) {
	deck, limit, err := deckAndLimit(r, 100)
	if err != nil {
		fail(w, r, err)
		return
	}
	q := r.URL.Query()
	status := q.Get("status")
	if status != "" && !slices.Contains(cardStatuses, status) {
		fail(w, r, invalid("status", "must be one of "+strings.Join(cardStatuses, ", ")))
		return
	}
	var paper *uuid.UUID
	if p := r.URL.Query().Get("paper_id"); p != "" {
		id, err := uuid.Parse(p)
		if err != nil {
			fail(w, r, invalid("paper_id", "must be a paper id"))
			return
		}
		paper = &id
	}
	p := CardListParams{DeckID: deck, Status: status, PaperID: paper, Limit: limit, Query: q.Get("q"), State: q.Get("state")}
	if p.State != "" && !slices.Contains(stateNames, p.State) {
		fail(w, r, invalid("state", "must be one of "+strings.Join(stateNames, ", ")))
		return
	}
	if utf8.RuneCountInString(p.Query) > 200 {
		fail(w, r, invalid("q", "must be at most 200 characters"))
		return
	}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxOffset {
			fail(w, r, invalid("offset", "must be from 0 to 100000"))
			return
		}
		p.Offset = n
	}
	page, err := a.store.Cards(r.Context(), caller(r), p)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, page)
}

type cardBody struct {
	DeckID     *string   `json:"deck_id"`
	Front      *string   `json:"front"`
	Back       *string   `json:"back"`
	CardType   *string   `json:"card_type"`
	Tags       *[]string `json:"tags"`
	PaperID    *string   `json:"paper_id"`
	ChunkID    *string   `json:"chunk_id"`
	PageNumber *int      `json:"page_number"`
	Status     *string   `json:"status"`
	// BuriedUntil is required with status buried.
	BuriedUntil *time.Time `json:"buried_until"`
}

func (b *cardBody) validate(create bool) []httpx.FieldError {
	var f []httpx.FieldError
	text := func(name string, v *string, required bool) {
		switch {
		case v == nil && required && create:
			f = append(f, httpx.FieldError{Field: name, Message: "is required"})
		case v != nil && required && strings.TrimSpace(*v) == "":
			f = append(f, httpx.FieldError{Field: name, Message: "must not be empty"})
		case v != nil && utf8.RuneCountInString(*v) > maxTextChars:
			f = append(f, httpx.FieldError{Field: name, Message: "must be at most 20000 characters"})
		}
	}
	text("front", b.Front, true)
	text("back", b.Back, false)
	if create && b.DeckID == nil {
		f = append(f, httpx.FieldError{Field: "deck_id", Message: "is required"})
	}
	if b.CardType != nil && !slices.Contains(cardTypes, *b.CardType) {
		f = append(f, httpx.FieldError{Field: "card_type", Message: "must be one of " + strings.Join(cardTypes, ", ")})
	}
	if b.Status != nil {
		switch {
		case !slices.Contains(cardStatuses, *b.Status):
			f = append(f, httpx.FieldError{Field: "status", Message: "must be one of " + strings.Join(cardStatuses, ", ")})
		case *b.Status == "buried" && (b.BuriedUntil == nil || !b.BuriedUntil.After(time.Now())):
			f = append(f, httpx.FieldError{Field: "buried_until", Message: "a buried card needs a future buried_until"})
		}
	}
	if b.BuriedUntil != nil && (b.Status == nil || *b.Status != "buried") {
		f = append(f, httpx.FieldError{Field: "buried_until", Message: "goes only with status buried"})
	}
	if b.Tags != nil && len(*b.Tags) > 50 {
		f = append(f, httpx.FieldError{Field: "tags", Message: "at most 50 tags"})
	}
	if b.PageNumber != nil && *b.PageNumber < 1 {
		f = append(f, httpx.FieldError{Field: "page_number", Message: "must be 1 or more"})
	}
	for name, v := range map[string]*string{"deck_id": b.DeckID, "paper_id": b.PaperID, "chunk_id": b.ChunkID} {
		if v != nil && uuid.Validate(*v) != nil {
			f = append(f, httpx.FieldError{Field: name, Message: "must be an id"})
		}
	}
	sort.Slice(f, func(i, j int) bool { return f[i].Field < f[j].Field })
	return f
}

// CreateCard adds a card to one of the caller's decks (status active unless draft).
// A paper it cites must be one the caller may see.
func (a *API) CreateCard(w http.ResponseWriter, r *http.Request) {
	var b cardBody
	if !httpx.DecodeJSON(w, r, &b, httpx.MaxJSONBody) {
		return
	}
	if f := b.validate(true); len(f) > 0 {
		fail(w, r, httpx.Invalid("Some fields are not valid.", f...))
		return
	}
	user := caller(r)
	status, cardType, back, tags := "active", "basic", "", []string{}
	if b.Status != nil {
		status = *b.Status
	}
	if b.CardType != nil {
		cardType = *b.CardType
	}
	if b.Back != nil {
		back = *b.Back
	}
	if b.Tags != nil {
		tags = *b.Tags
	}
	ctx := r.Context()
	n := NewCard{DeckID: uuid.MustParse(*b.DeckID), PageNumber: b.PageNumber, CardType: cardType,
		Front: strings.TrimSpace(*b.Front), Back: back, Tags: tags, Status: status, BuriedUntil: b.BuriedUntil}
	ok, err := a.store.HasDeck(ctx, user, n.DeckID)
	if err != nil {
		fail(w, r, err)
		return
	}
	if !ok {
		fail(w, r, invalid("deck_id", "is not one of your decks"))
		return
	}
	if b.PaperID != nil {
		id := uuid.MustParse(*b.PaperID)
		if _, err := a.papers.Get(ctx, user, id); err != nil {
			if errors.Is(err, papers.ErrNotFound) {
				err = invalid("paper_id", "is not a paper you can see")
			}
			fail(w, r, err)
			return
		}
		n.PaperID = &id
	}
	if b.ChunkID != nil {
		chunk := uuid.MustParse(*b.ChunkID)
		paper, err := a.papers.VisibleChunk(ctx, user, chunk)
		if errors.Is(err, papers.ErrNotFound) {
			e := httpx.NotFound("The passage chunk_id names was not found among the papers you can see.")
			e.Fields = []httpx.FieldError{{Field: "chunk_id", Message: "is not a passage of a paper you can see"}}
			err = e
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		switch {
		case n.PaperID == nil:
			n.PaperID = &paper
		case *n.PaperID != paper:
			fail(w, r, invalid("chunk_id", "is a passage of another paper than paper_id"))
			return
		}
		n.ChunkID = &chunk
	}
	card, err := a.store.CreateCard(ctx, user, n)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusCreated, card)
}

// GetCard answers a card with the interval each rating would give now.
func (a *API) GetCard(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	c, err := a.store.Card(r.Context(), caller(r), id, a.store.now())
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, c)
}

// UpdateCard changes front, back, type, tags, deck or status (draft → active
// accepts a generated card; suspended; buried with buried_until).
func (a *API) UpdateCard(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	var b cardBody
	if !httpx.DecodeJSON(w, r, &b, httpx.MaxJSONBody) {
		return
	}
	if f := b.validate(false); len(f) > 0 {
		fail(w, r, httpx.Invalid("Some fields are not valid.", f...))
		return
	}
	user := caller(r)
	patch := CardPatch{Back: b.Back, CardType: b.CardType, Tags: b.Tags, Status: b.Status, BuriedUntil: b.BuriedUntil}
	if b.DeckID != nil {
		deck := uuid.MustParse(*b.DeckID)
		if ok, err := a.store.HasDeck(r.Context(), user, deck); err != nil || !ok {
			fail(w, r, invalid("deck_id", "is not one of your decks"))
			return
		}
		patch.DeckID = &deck
	}
	if b.Front != nil {
		t := strings.TrimSpace(*b.Front)
		patch.Front = &t
	}
	c, err := a.store.UpdateCard(r.Context(), user, id, patch)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, c)
}

// DeleteCard removes a card and its review history.
func (a *API) DeleteCard(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := a.store.DeleteCard(r.Context(), caller(r), id); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- reviews ----

// Due answers the caller's cards due now: ?deck_id=, ?limit= (1-500, default
// 50). Learning and relearning cards whose short-term step has come go first,
// then the rest, most overdue first; buried cards whose time has come count as
// due. next_learning_due_at says when the next card on a short-term step comes
// back (within the hour; null when none does), so a session can wait for it.
func (a *API) Due(w http.ResponseWriter, r *http.Request) {
	deck, limit, err := deckAndLimit(r, 50)
	if err != nil {
		fail(w, r, err)
		return
	}
	now := a.store.now()
	q, err := a.store.Queue(r.Context(), caller(r), deck, limit, now)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": q.Cards, "now": now, "next_learning_due_at": q.NextLearningDue})
}

// UndoReview answers POST /api/reviews/{id}/undo: the review named (the
// review_id of POST /api/reviews) is taken back and the card returns to the
// state it was in before, with what each rating would do now. Only a card's
// latest review can be undone (409 review_not_last); another user's review
// answers 404 as a missing one does.
func (a *API) UndoReview(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	user := caller(r)
	c, err := a.store.UndoReview(r.Context(), user, id)
	if err != nil {
		fail(w, r, err)
		return
	}
	if c, err = a.store.Card(r.Context(), user, c.ID, a.store.now()); err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"card": c})
}

type reviewBody struct {
	CardID     string     `json:"card_id"`
	Rating     int        `json:"rating"`
	DurationMS *int       `json:"duration_ms"`
	ClientID   string     `json:"client_id"`
	ReviewedAt *time.Time `json:"reviewed_at"`
}

func (b reviewBody) input(prefix string, offline bool, now time.Time) (ReviewInput, []httpx.FieldError) {
	var f []httpx.FieldError
	id, err := uuid.Parse(b.CardID)
	if err != nil {
		f = append(f, httpx.FieldError{Field: prefix + "card_id", Message: "must be a card id"})
	}
	if b.Rating < 1 || b.Rating > 4 {
		f = append(f, httpx.FieldError{Field: prefix + "rating", Message: "must be 1 (again), 2 (hard), 3 (good) or 4 (easy)"})
	}
	if b.DurationMS != nil && (*b.DurationMS < 0 || *b.DurationMS > 24*3600*1000) {
		f = append(f, httpx.FieldError{Field: prefix + "duration_ms", Message: "must be from 0 to a day"})
	}
	if len(b.ClientID) > 128 {
		f = append(f, httpx.FieldError{Field: prefix + "client_id", Message: "must be at most 128 characters"})
	}
	in := ReviewInput{CardID: id, Rating: b.Rating, DurationMS: b.DurationMS, ClientID: b.ClientID}
	if offline {
		switch {
		case b.ClientID == "":
			f = append(f, httpx.FieldError{Field: prefix + "client_id", Message: "is required for offline reviews"})
		case b.ReviewedAt == nil:
			f = append(f, httpx.FieldError{Field: prefix + "reviewed_at", Message: "is required for offline reviews"})
		case b.ReviewedAt.After(now.Add(5 * time.Minute)):
			f = append(f, httpx.FieldError{Field: prefix + "reviewed_at", Message: "is in the future"})
		default:
			in.ReviewedAt = *b.ReviewedAt
		}
	}
	return in, f
}

// Review answers POST /api/reviews {card_id, rating 1-4, duration_ms, client_id?}:
// the card as FSRS scheduled it.
func (a *API) Review(w http.ResponseWriter, r *http.Request) {
	var b reviewBody
	if !httpx.DecodeJSON(w, r, &b, httpx.MaxJSONBody) {
		return
	}
	if b.ReviewedAt != nil {
		fail(w, r, invalid("reviewed_at", "is for offline reviews: POST them to /api/reviews/batch"))
		return
	}
	now := a.store.now()
	in, f := b.input("", false, now)
	if len(f) > 0 {
		fail(w, r, httpx.Invalid("Some fields are not valid.", f...))
		return
	}
	res, err := a.store.Review(r.Context(), caller(r), in, now)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, res)
}

type batchBody struct {
	Reviews []reviewBody `json:"reviews"`
}

// Batch answers POST /api/reviews/batch: reviews captured offline, each with a
// client id and the time it happened. They are applied in time order, in one
// transaction; a client id seen before is a duplicate and changes nothing, so
// posting the same batch twice is harmless. A review that cannot apply (unknown or
// inactive card, older than the card's last review) is rejected on its own and the
// rest go on.
func (a *API) Batch(w http.ResponseWriter, r *http.Request) {
	var b batchBody
	if !httpx.DecodeJSON(w, r, &b, 2<<20) {
		return
	}
	if len(b.Reviews) == 0 || len(b.Reviews) > MaxBatchReviews {
		fail(w, r, invalid("reviews", "must hold 1 to 1000 reviews"))
		return
	}
	now := a.store.now()
	ins := make([]ReviewInput, len(b.Reviews))
	var fields []httpx.FieldError
	seen := map[string]bool{}
	for i, rv := range b.Reviews {
		in, f := rv.input("reviews["+strconv.Itoa(i)+"].", true, now)
		fields = append(fields, f...)
		if seen[rv.ClientID] && rv.ClientID != "" {
			fields = append(fields, httpx.FieldError{Field: "reviews[" + strconv.Itoa(i) + "].client_id", Message: "repeats an earlier review of this batch"})
		}
		seen[rv.ClientID] = true
		ins[i] = in
	}
	if len(fields) > 0 {
		fail(w, r, httpx.Invalid("Some reviews are not valid; nothing was applied.", fields...))
		return
	}
	results, err := a.store.ReviewBatch(r.Context(), caller(r), ins, now)
	if err != nil {
		fail(w, r, err)
		return
	}
	counts := map[string]int{}
	for _, it := range results {
		counts[it.Status]++
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"results": results, "applied": counts["applied"],
		"duplicates": counts["duplicate"], "rejected": counts["rejected"]})
}

// Analytics answers the caller's review analytics over ?days= (1-365, default 30):
// reviews and time per day, true retention (the share of reviews of cards in review
// state answered other than Again), the due forecast for the next 30 days, and the
// current streak of days with reviews, all in the user's time zone.
func (a *API) Analytics(w http.ResponseWriter, r *http.Request) {
	days := 30
	if s := r.URL.Query().Get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 365 {
			fail(w, r, invalid("days", "must be from 1 to 365"))
			return
		}
		days = n
	}
	out, err := a.store.Analytics(r.Context(), caller(r), days, a.store.now())
	if err != nil {
		fail(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}
