package learning

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/fsrs"
	"github.com/lectern-research/lectern/host/internal/httpapi/input"
	"github.com/lectern-research/lectern/host/internal/httpapi/respond"
)

// API serves decks, cards and reviews for the caller.
type API struct {
	store *Store
}

// NewAPI returns the learning API.
func NewAPI(store *Store) *API { return &API{store: store} }

// Limits of the learning API.
const (
	MaxBatchReviews = 1000
	maxTextChars    = 20000
)

var (
	cardTypes    = []string{"basic", "cloze", "concept", "quote", "method", "comparison"}
	cardStatuses = []string{"draft", "active", "suspended", "buried"}
)

func caller(r *http.Request) uuid.UUID { return auth.CallerFrom(r.Context()).UserID }

func fail(w http.ResponseWriter, r *http.Request, err error) {
	var pgErr *pgconn.PgError
	var apiErr *respond.Error
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, pgx.ErrNoRows):
		respond.Err(w, r, respond.NotFound("Not found."))
	case errors.Is(err, ErrNotReviewable):
		respond.Err(w, r, &respond.Error{Status: http.StatusConflict, Code: "card_not_active", Detail: "This card is a draft or suspended; make it active to review it."})
	case errors.Is(err, ErrOutOfOrder):
		respond.Err(w, r, &respond.Error{Status: http.StatusConflict, Code: "review_out_of_order", Detail: err.Error()})
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		respond.Err(w, r, &respond.Error{Status: http.StatusConflict, Code: "already_exists", Detail: "A deck with this name exists already."})
	case errors.As(err, &apiErr):
		respond.Err(w, r, apiErr)
	default:
		respond.Err(w, r, respond.Internal(err))
	}
}

func invalid(field, msg string) error {
	return respond.Invalid("Some fields are not valid.", respond.FieldError{Field: field, Message: msg})
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
	rows, err := a.store.pool.Query(r.Context(), `
		SELECT d.id, d.name, coalesce(d.description, ''), d.desired_retention, d.maximum_interval,
		       (SELECT count(*) FROM cards c WHERE c.deck_id = d.id),
		       (SELECT count(*) FROM cards c WHERE c.deck_id = d.id AND c.status = 'active' AND c.due_at <= now()),
		       d.created_at
		  FROM decks d WHERE d.user_id = $1 ORDER BY d.name`, caller(r))
	if err != nil {
		fail(w, r, err)
		return
	}
	decks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Deck, error) {
		var d Deck
		var ret float32
		err := row.Scan(&d.ID, &d.Name, &d.Description, &ret, &d.MaximumInterval, &d.Cards, &d.Due, &d.CreatedAt)
		d.DesiredRetention = float64(int(float64(ret)*1000+0.5)) / 1000
		return d, err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	if decks == nil {
		decks = []Deck{}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"items": decks})
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
	if !auth.DecodeJSON(w, r, &b) {
		return
	}
	var fields []respond.FieldError
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" || utf8.RuneCountInString(b.Name) > 200 {
		fields = append(fields, respond.FieldError{Field: "name", Message: "must be 1 to 200 characters"})
	}
	ret, maxInt := 0.9, 36500
	if b.DesiredRetention != nil {
		if ret = *b.DesiredRetention; ret < 0.7 || ret > 0.99 {
			fields = append(fields, respond.FieldError{Field: "desired_retention", Message: "must be from 0.70 to 0.99"})
		}
	}
	if b.MaximumInterval != nil {
		if maxInt = *b.MaximumInterval; maxInt < 1 || maxInt > 36500 {
			fields = append(fields, respond.FieldError{Field: "maximum_interval_days", Message: "must be from 1 to 36500"})
		}
	}
	if len(fields) > 0 {
		fail(w, r, respond.Invalid("Some fields are not valid.", fields...))
		return
	}
	var d Deck
	err := a.store.pool.QueryRow(r.Context(), `
		INSERT INTO decks (user_id, name, description, desired_retention, maximum_interval)
		VALUES ($1, $2, nullif($3, ''), $4, $5) RETURNING id, created_at`, caller(r), b.Name, b.Description, storableRetention(ret), maxInt).
		Scan(&d.ID, &d.CreatedAt)
	if err != nil {
		fail(w, r, err)
		return
	}
	d.Name, d.Description, d.DesiredRetention, d.MaximumInterval = b.Name, b.Description, ret, maxInt
	respond.JSON(w, http.StatusCreated, d)
}

// storableRetention is ret as the decks.desired_retention column (a real) can hold
// it. The nearest reals to 0.70 and 0.99 lie just outside the column's check of
// 0.7 to 0.99, so the two ends of the range are stored as the nearest reals inside.
func storableRetention(ret float64) float64 {
	lo, hi := math.Nextafter32(0.7, 1), math.Nextafter32(0.99, 0)
	return float64(min(max(float32(ret), lo), hi))
}

// ---- cards ----

// ListCards answers the caller's cards, newest first: ?deck_id=, ?status=, ?limit=
// (1-500, default 100).
func (a *API) ListCards(w http.ResponseWriter, r *http.Request) {
	deck, limit, err := deckAndLimit(r, 100)
	if err != nil {
		fail(w, r, err)
		return
	}
	status := r.URL.Query().Get("status")
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
	rows, err := a.store.pool.Query(r.Context(), `SELECT `+cardColumns+` FROM cards c
		WHERE c.user_id = $1 AND ($2::uuid IS NULL OR c.deck_id = $2) AND ($3 = '' OR c.status = $3)
		  AND ($5::uuid IS NULL OR c.paper_id = $5)
		ORDER BY c.created_at DESC, c.id LIMIT $4`, caller(r), deck, status, limit, paper)
	if err != nil {
		fail(w, r, err)
		return
	}
	cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Card, error) { return scanCard(row) })
	if err != nil {
		fail(w, r, err)
		return
	}
	if cards == nil {
		cards = []Card{}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"items": cards})
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

func (b *cardBody) validate(create bool) []respond.FieldError {
	var f []respond.FieldError
	text := func(name string, v *string, required bool) {
		switch {
		case v == nil && required && create:
			f = append(f, respond.FieldError{Field: name, Message: "is required"})
		case v != nil && required && strings.TrimSpace(*v) == "":
			f = append(f, respond.FieldError{Field: name, Message: "must not be empty"})
		case v != nil && utf8.RuneCountInString(*v) > maxTextChars:
			f = append(f, respond.FieldError{Field: name, Message: "must be at most 20000 characters"})
		}
	}
	text("front", b.Front, true)
	text("back", b.Back, false)
	if create && b.DeckID == nil {
		f = append(f, respond.FieldError{Field: "deck_id", Message: "is required"})
	}
	if b.CardType != nil && !slices.Contains(cardTypes, *b.CardType) {
		f = append(f, respond.FieldError{Field: "card_type", Message: "must be one of " + strings.Join(cardTypes, ", ")})
	}
	if b.Status != nil {
		switch {
		case !slices.Contains(cardStatuses, *b.Status):
			f = append(f, respond.FieldError{Field: "status", Message: "must be one of " + strings.Join(cardStatuses, ", ")})
		case *b.Status == "buried" && (b.BuriedUntil == nil || !b.BuriedUntil.After(time.Now())):
			f = append(f, respond.FieldError{Field: "buried_until", Message: "a buried card needs a future buried_until"})
		}
	}
	if b.BuriedUntil != nil && (b.Status == nil || *b.Status != "buried") {
		f = append(f, respond.FieldError{Field: "buried_until", Message: "goes only with status buried"})
	}
	if b.Tags != nil && len(*b.Tags) > 50 {
		f = append(f, respond.FieldError{Field: "tags", Message: "at most 50 tags"})
	}
	if b.PageNumber != nil && *b.PageNumber < 1 {
		f = append(f, respond.FieldError{Field: "page_number", Message: "must be 1 or more"})
	}
	for name, v := range map[string]*string{"deck_id": b.DeckID, "paper_id": b.PaperID, "chunk_id": b.ChunkID} {
		if v != nil && uuid.Validate(*v) != nil {
			f = append(f, respond.FieldError{Field: name, Message: "must be an id"})
		}
	}
	sort.Slice(f, func(i, j int) bool { return f[i].Field < f[j].Field })
	return f
}

// CreateCard adds a card to one of the caller's decks (status active unless draft).
// A paper it cites must be one the caller may see.
func (a *API) CreateCard(w http.ResponseWriter, r *http.Request) {
	var b cardBody
	if !auth.DecodeJSON(w, r, &b) {
		return
	}
	if f := b.validate(true); len(f) > 0 {
		fail(w, r, respond.Invalid("Some fields are not valid.", f...))
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
	var card Card
	err := pgx.BeginFunc(r.Context(), a.store.pool, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(r.Context(), `SELECT EXISTS (SELECT 1 FROM decks WHERE id = $1 AND user_id = $2)`, *b.DeckID, user).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return invalid("deck_id", "is not one of your decks")
		}
		if b.PaperID != nil {
			if err := tx.QueryRow(r.Context(), `
				SELECT EXISTS (SELECT 1 FROM papers p WHERE p.id = $1 AND (p.visibility = 'public' OR p.discovered_by IS NULL
				   OR EXISTS (SELECT 1 FROM user_library ul WHERE ul.user_id = $2 AND ul.paper_id = p.id)))`, *b.PaperID, user).Scan(&ok); err != nil {
				return err
			}
			if !ok {
				return invalid("paper_id", "is not a paper you can see")
			}
		}
		if b.ChunkID != nil {
			paper, err := chunkPaper(r.Context(), tx, user, *b.ChunkID)
			if err != nil {
				return err
			}
			switch {
			case b.PaperID == nil:
				p := paper.String()
				b.PaperID = &p
			case !strings.EqualFold(*b.PaperID, paper.String()):
				return invalid("chunk_id", "is a passage of another paper than paper_id")
			}
		}
		var err error
		card, err = scanCard(tx.QueryRow(r.Context(), `
			INSERT INTO cards AS c (user_id, deck_id, paper_id, chunk_id, page_number, card_type, front, back, tags, status, buried_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+cardColumns,
			user, *b.DeckID, b.PaperID, b.ChunkID, b.PageNumber, cardType, strings.TrimSpace(*b.Front), back, tags, status, b.BuriedUntil))
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, card)
}

// chunkPaper is the paper of the passage chunk, when it is a passage of a paper
// user may see. A passage that does not exist, or whose paper is another user's
// private paper, is not found: the answer does not tell which.
func chunkPaper(ctx context.Context, tx pgx.Tx, user uuid.UUID, chunk string) (uuid.UUID, error) {
	var paper uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT pc.paper_id FROM paper_chunks pc JOIN papers p ON p.id = pc.paper_id
		 WHERE pc.id = $1 AND (p.visibility = 'public' OR p.discovered_by IS NULL
		    OR EXISTS (SELECT 1 FROM user_library ul WHERE ul.user_id = $2 AND ul.paper_id = p.id))`, chunk, user).Scan(&paper)
	if errors.Is(err, pgx.ErrNoRows) {
		e := respond.NotFound("The passage chunk_id names was not found among the papers you can see.")
		e.Fields = []respond.FieldError{{Field: "chunk_id", Message: "is not a passage of a paper you can see"}}
		return uuid.Nil, e
	}
	return paper, err
}

// GetCard answers a card with the interval each rating would give now.
func (a *API) GetCard(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	c, err := scanCard(a.store.pool.QueryRow(r.Context(), `SELECT `+cardColumns+` FROM cards c WHERE c.id = $1 AND c.user_id = $2`, id, caller(r)))
	if err != nil {
		fail(w, r, err)
		return
	}
	s, err := scheduler(r.Context(), a.store.pool, caller(r), c.DeckID)
	if err == nil {
		err = preview(s, &c, a.store.now())
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, c)
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
	if !auth.DecodeJSON(w, r, &b) {
		return
	}
	if f := b.validate(false); len(f) > 0 {
		fail(w, r, respond.Invalid("Some fields are not valid.", f...))
		return
	}
	user := caller(r)
	if b.DeckID != nil {
		var ok bool
		if err := a.store.pool.QueryRow(r.Context(), `SELECT EXISTS (SELECT 1 FROM decks WHERE id = $1 AND user_id = $2)`, *b.DeckID, user).Scan(&ok); err != nil || !ok {
			fail(w, r, invalid("deck_id", "is not one of your decks"))
			return
		}
	}
	var buried any
	if b.Status != nil && *b.Status == "buried" {
		buried = *b.BuriedUntil
	}
	var front *string
	if b.Front != nil {
		t := strings.TrimSpace(*b.Front)
		front = &t
	}
	c, err := scanCard(a.store.pool.QueryRow(r.Context(), `
		UPDATE cards c SET front = coalesce($3, front), back = coalesce($4, back), card_type = coalesce($5, card_type),
		       tags = coalesce($6, tags), deck_id = coalesce($7, deck_id), status = coalesce($8, status),
		       buried_until = CASE WHEN $8::text IS NULL THEN buried_until ELSE $9::timestamptz END, updated_at = now()
		 WHERE c.id = $1 AND c.user_id = $2 RETURNING `+cardColumns,
		id, user, front, b.Back, b.CardType, b.Tags, b.DeckID, b.Status, buried))
	if err != nil {
		fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, c)
}

// DeleteCard removes a card and its review history.
func (a *API) DeleteCard(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id")
	if err != nil {
		fail(w, r, err)
		return
	}
	tag, err := a.store.pool.Exec(r.Context(), `DELETE FROM cards WHERE id = $1 AND user_id = $2`, id, caller(r))
	if err == nil && tag.RowsAffected() == 0 {
		err = ErrNotFound
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- reviews ----

// Due answers the caller's cards due now, most overdue first: ?deck_id=, ?limit=
// (1-500, default 50). Buried cards whose time has come count as due.
func (a *API) Due(w http.ResponseWriter, r *http.Request) {
	deck, limit, err := deckAndLimit(r, 50)
	if err != nil {
		fail(w, r, err)
		return
	}
	now := a.store.now()
	rows, err := a.store.pool.Query(r.Context(), `SELECT `+cardColumns+` FROM cards c
		WHERE c.user_id = $1 AND c.status IN ('active', 'buried') AND c.due_at <= $2
		  AND ($3::uuid IS NULL OR c.deck_id = $3) AND (c.status = 'active' OR c.buried_until <= $2)
		ORDER BY c.due_at, c.id LIMIT $4`, caller(r), now, deck, limit)
	if err != nil {
		fail(w, r, err)
		return
	}
	cards, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Card, error) { return scanCard(row) })
	if err != nil {
		fail(w, r, err)
		return
	}
	schedulers := map[uuid.UUID]*fsrs.Scheduler{}
	for i := range cards {
		s, ok := schedulers[cards[i].DeckID]
		if !ok {
			if s, err = scheduler(r.Context(), a.store.pool, caller(r), cards[i].DeckID); err != nil {
				fail(w, r, err)
				return
			}
			schedulers[cards[i].DeckID] = s
		}
		if err := preview(s, &cards[i], now); err != nil {
			fail(w, r, err)
			return
		}
	}
	if cards == nil {
		cards = []Card{}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"items": cards, "now": now})
}

type reviewBody struct {
	CardID     string     `json:"card_id"`
	Rating     int        `json:"rating"`
	DurationMS *int       `json:"duration_ms"`
	ClientID   string     `json:"client_id"`
	ReviewedAt *time.Time `json:"reviewed_at"`
}

func (b reviewBody) input(prefix string, offline bool, now time.Time) (ReviewInput, []respond.FieldError) {
	var f []respond.FieldError
	id, err := uuid.Parse(b.CardID)
	if err != nil {
		f = append(f, respond.FieldError{Field: prefix + "card_id", Message: "must be a card id"})
	}
	if b.Rating < 1 || b.Rating > 4 {
		f = append(f, respond.FieldError{Field: prefix + "rating", Message: "must be 1 (again), 2 (hard), 3 (good) or 4 (easy)"})
	}
	if b.DurationMS != nil && (*b.DurationMS < 0 || *b.DurationMS > 24*3600*1000) {
		f = append(f, respond.FieldError{Field: prefix + "duration_ms", Message: "must be from 0 to a day"})
	}
	if len(b.ClientID) > 128 {
		f = append(f, respond.FieldError{Field: prefix + "client_id", Message: "must be at most 128 characters"})
	}
	in := ReviewInput{CardID: id, Rating: b.Rating, DurationMS: b.DurationMS, ClientID: b.ClientID}
	if offline {
		switch {
		case b.ClientID == "":
			f = append(f, respond.FieldError{Field: prefix + "client_id", Message: "is required for offline reviews"})
		case b.ReviewedAt == nil:
			f = append(f, respond.FieldError{Field: prefix + "reviewed_at", Message: "is required for offline reviews"})
		case b.ReviewedAt.After(now.Add(5 * time.Minute)):
			f = append(f, respond.FieldError{Field: prefix + "reviewed_at", Message: "is in the future"})
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
	if !auth.DecodeJSON(w, r, &b) {
		return
	}
	if b.ReviewedAt != nil {
		fail(w, r, invalid("reviewed_at", "is for offline reviews: POST them to /api/reviews/batch"))
		return
	}
	now := a.store.now()
	in, f := b.input("", false, now)
	if len(f) > 0 {
		fail(w, r, respond.Invalid("Some fields are not valid.", f...))
		return
	}
	var res ReviewResult
	err := pgx.BeginFunc(r.Context(), a.store.pool, func(tx pgx.Tx) error {
		var err error
		res, err = ReviewTx(r.Context(), tx, caller(r), in, now)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, res)
}

type batchBody struct {
	Reviews []reviewBody `json:"reviews"`
}

// BatchItem is the outcome of one offline review.
type BatchItem struct {
	ClientID string `json:"client_id"`
	Status   string `json:"status"` // applied, duplicate, rejected
	Card     *Card  `json:"card,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Batch answers POST /api/reviews/batch: reviews captured offline, each with a
// client id and the time it happened. They are applied in time order, in one
// transaction; a client id seen before is a duplicate and changes nothing, so
// posting the same batch twice is harmless. A review that cannot apply (unknown or
// inactive card, older than the card's last review) is rejected on its own and the
// rest go on.
func (a *API) Batch(w http.ResponseWriter, r *http.Request) {
	var b batchBody
	if !input.DecodeJSON(w, r, &b, 2<<20) {
		return
	}
	if len(b.Reviews) == 0 || len(b.Reviews) > MaxBatchReviews {
		fail(w, r, invalid("reviews", "must hold 1 to 1000 reviews"))
		return
	}
	now := a.store.now()
	ins := make([]ReviewInput, len(b.Reviews))
	var fields []respond.FieldError
	seen := map[string]bool{}
	for i, rv := range b.Reviews {
		in, f := rv.input("reviews["+strconv.Itoa(i)+"].", true, now)
		fields = append(fields, f...)
		if seen[rv.ClientID] && rv.ClientID != "" {
			fields = append(fields, respond.FieldError{Field: "reviews[" + strconv.Itoa(i) + "].client_id", Message: "repeats an earlier review of this batch"})
		}
		seen[rv.ClientID] = true
		ins[i] = in
	}
	if len(fields) > 0 {
		fail(w, r, respond.Invalid("Some reviews are not valid; nothing was applied.", fields...))
		return
	}
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return ins[order[x]].ReviewedAt.Before(ins[order[y]].ReviewedAt) })
	results := make([]BatchItem, len(ins))
	user := caller(r)
	err := pgx.BeginFunc(r.Context(), a.store.pool, func(tx pgx.Tx) error {
		for _, i := range order {
			var res ReviewResult
			// Each review under its own savepoint: a rejected one undoes only itself.
			err := pgx.BeginFunc(r.Context(), tx, func(sp pgx.Tx) error {
				var err error
				res, err = ReviewTx(r.Context(), sp, user, ins[i], now)
				return err
			})
			item := BatchItem{ClientID: ins[i].ClientID}
			switch {
			case err == nil && res.Duplicate:
				item.Status, item.Card = "duplicate", &res.Card
			case err == nil:
				item.Status, item.Card = "applied", &res.Card
			case errors.Is(err, ErrNotFound), errors.Is(err, ErrNotReviewable), errors.Is(err, ErrOutOfOrder):
				item.Status, item.Error = "rejected", err.Error()
			default:
				return err
			}
			results[i] = item
		}
		return nil
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	counts := map[string]int{}
	for _, it := range results {
		counts[it.Status]++
	}
	respond.JSON(w, http.StatusOK, map[string]any{"results": results, "applied": counts["applied"],
		"duplicates": counts["duplicate"], "rejected": counts["rejected"]})
}
