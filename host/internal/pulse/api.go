package pulse

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/search"
)

// API serves /api/pulse/... and /api/recommendations. Every route acts for the
// resolved caller only: their deck, their thumbs, their settings.
type API struct {
	pool    *pgxpool.Pool
	gen     *Generator
	search  *search.Service
	enqueue func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error)
	today   Today
}

// NewAPI returns Pulse's API. enqueue starts the caller's pulse.nightly (nil
// answers 503); today is the caller's local date.
func NewAPI(pool *pgxpool.Pool, gen *Generator, searchSvc *search.Service, today Today,
	enqueue func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error)) *API {
	return &API{pool: pool, gen: gen, search: searchSvc, enqueue: enqueue, today: today}
}

// DeckCard is a card as the API answers it: the suggestion and its paper.
type DeckCard struct {
	Card
	Paper *papers.Item `json:"paper"`
	// Thumb is the caller's newest thumb on the paper, "up" or "down"; empty
	// when they gave none (the dashboard marks a card already rated).
	Thumb string `json:"thumb,omitempty"`
}

// DeckAnswer is GET /api/pulse/today's answer.
type DeckAnswer struct {
	Deck
	Cards []DeckCard `json:"cards"`
	// Message says, when there are no cards, why and what to do.
	Message string `json:"message,omitempty"`
}

// Today answers GET /api/pulse/today: the caller's deck of today, or the last one
// of the past week marked stale, or an empty deck that says why.
func (a *API) Today(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	date, err := a.today(ctx, user)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	d, err := a.gen.Store.Today(ctx, user, date)
	if errors.Is(err, ErrNotFound) {
		d = Deck{Date: date, Cards: []Card{}}
	} else if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	out, err := a.withPapers(ctx, user, d)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if len(out.Cards) == 0 {
		out.Message, err = a.emptyMessage(ctx, user, d)
		if err != nil {
			httpx.Err(w, r, httpx.Internal(err))
			return
		}
	}
	httpx.JSON(w, http.StatusOK, out)
}

func (a *API) withPapers(ctx context.Context, user uuid.UUID, d Deck) (DeckAnswer, error) {
	ids := make([]uuid.UUID, len(d.Cards))
	for i, c := range d.Cards {
		ids[i] = c.PaperID
	}
	items, err := a.gen.Papers.GetMany(ctx, user, ids)
	if err != nil {
		return DeckAnswer{}, err
	}
	thumbs, err := a.gen.Papers.ThumbsOf(ctx, user, ids)
	if err != nil {
		return DeckAnswer{}, err
	}
	out := DeckAnswer{Deck: d, Cards: []DeckCard{}}
	for _, c := range d.Cards {
		it, ok := items[c.PaperID]
		if !ok {
			continue // merged away or gone since the deck was made
		}
		dc := DeckCard{Card: c, Paper: &it}
		if up, rated := thumbs[c.PaperID]; rated {
			dc.Thumb = map[bool]string{true: "up", false: "down"}[up]
		}
		out.Cards = append(out.Cards, dc)
	}
	return out, nil
}

func (a *API) emptyMessage(ctx context.Context, user uuid.UUID, d Deck) (string, error) {
	if d.Stats.Quiet != "" {
		return d.Stats.Quiet, nil
	}
	if n := len(d.Stats.Sources); n > 0 {
		failed := 0
		for _, st := range d.Stats.Sources {
			if st.Status != "ok" {
				failed++
			}
		}
		if failed == n {
			return "None of the paper sources could be reached for today's deck; Lectern asks them again at the next run. Their state is under Source health.", nil
		}
	}
	if d.ID != uuid.Nil {
		return "Nothing new matched what you follow last night. Follow more topics or authors, or look back further in the Pulse settings.", nil
	}
	topics, err := a.gen.Store.Topics(ctx, user)
	if err != nil {
		return "", err
	}
	authors, err := a.gen.Store.Authors(ctx, user)
	if err != nil {
		return "", err
	}
	if len(topics) == 0 && len(authors) == 0 {
		return "Pulse has nothing to go on yet: follow a topic or an author, and your first deck is made tonight (or now, with Generate).", nil
	}
	return "Your first deck is made tonight, or now with Generate.", nil
}

// Generate answers POST /api/pulse/generate: 202 with the caller's pulse.nightly
// job; 409 while one is queued or running.
func (a *API) Generate(w http.ResponseWriter, r *http.Request) {
	if a.enqueue == nil {
		httpx.Err(w, r, httpx.Unavailable("The job queue is not running, so no deck can be made now.", nil))
		return
	}
	env, err := a.enqueue(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if errors.Is(err, jobs.ErrAlreadyActive) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "job_already_active",
			Detail: "Your deck is already being made; it appears here when it is done."})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.Header().Set("Location", "/api/jobs/"+strconv.FormatInt(env.ID, 10))
	httpx.JSON(w, http.StatusAccepted, env)
}

// Rate actions.
var rateActions = []string{"open", "save", "up", "down", "dismiss"}

type rateBody struct {
	PaperID string `json:"paper_id"`
	Action  string `json:"action"`
	Reason  string `json:"reason"`
}

// Rate answers POST /api/pulse/rate {paper_id, action, reason?}: open (noted
// only), save (to read, into the library), up and down (thumbs), dismiss (trash
// and a thumbs-down, in one transaction). A paper that is not in one of the
// caller's decks is 404.
func (a *API) Rate(w http.ResponseWriter, r *http.Request) {
	var body rateBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	var fields []httpx.FieldError
	id, err := uuid.Parse(body.PaperID)
	if err != nil {
		fields = append(fields, httpx.FieldError{Field: "paper_id", Message: "must be a paper id"})
	}
	if !slices.Contains(rateActions, body.Action) {
		fields = append(fields, httpx.FieldError{Field: "action", Message: "must be one of " + strings.Join(rateActions, ", ")})
	}
	if utf8.RuneCountInString(body.Reason) > 2000 {
		fields = append(fields, httpx.FieldError{Field: "reason", Message: "must be at most 2000 characters"})
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The rating is not valid.", fields...))
		return
	}
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	in, err := a.gen.Store.InDeck(ctx, user, id)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if !in {
		httpx.Err(w, r, httpx.NotFound("That paper is not in your Pulse deck."))
		return
	}
	err = pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		switch body.Action {
		case "save":
			toRead := "to_read"
			if err := papers.AddToLibraryTx(ctx, tx, user, id, "pulse_save"); err != nil {
				return err
			}
			return papers.SetStateTx(ctx, tx, user, id, papers.StatePatch{State: &toRead})
		case "up", "down":
			return papers.GiveFeedbackTx(ctx, tx, user, id, body.Action == "up", papers.FeedbackPulse, body.Reason)
		case "dismiss":
			trash := "trash"
			if err := papers.SetStateTx(ctx, tx, user, id, papers.StatePatch{State: &trash}); err != nil {
				return err
			}
			return papers.GiveFeedbackTx(ctx, tx, user, id, false, papers.FeedbackDismiss, body.Reason)
		}
		return nil // open: noted by the request log alone
	})
	if errors.Is(err, papers.ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("That paper is not in your Pulse deck."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]string{"paper_id": id.String(), "action": body.Action})
}

// Explanation is GET /api/pulse/explain/{paper_id}'s answer.
type Explanation struct {
	PaperID uuid.UUID          `json:"paper_id"`
	Date    string             `json:"deck_date"`
	Score   float64            `json:"score"`
	Why     string             `json:"why"`
	Reason  string             `json:"reason,omitempty"`
	Signals map[string]float64 `json:"signals"`
	Weights score.Weights      `json:"weights"`
	// Contributions are weight × signal, by signal: what the score is made of.
	Contributions map[string]float64 `json:"contributions"`
}

// Explain answers GET /api/pulse/explain/{paper_id}: why a paper is in the
// caller's deck; 404 when it is in none of theirs.
func (a *API) Explain(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(chi.URLParam(r, "paper_id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("That paper is not in your Pulse deck."))
		return
	}
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	c, date, err := a.gen.Store.LatestCard(ctx, user, id)
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("That paper is not in your Pulse deck."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	set, err := a.gen.Store.Settings(ctx, user)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	weights := score.Effective(set.Weights, set.ClassifierOptIn)
	contrib := map[string]float64{}
	for k, v := range weights {
		contrib[k] = v * c.Signals[k]
	}
	httpx.JSON(w, http.StatusOK, Explanation{PaperID: id, Date: date, Score: c.Score, Why: c.Why, Reason: c.Reason,
		Signals: c.Signals, Weights: weights, Contributions: contrib})
}

// Weights answers GET /api/pulse/weights: the caller's weights, defaults filled in.
func (a *API) Weights(w http.ResponseWriter, r *http.Request) {
	set, err := a.gen.Store.Settings(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, set.Weights)
}

// PutWeights answers PUT /api/pulse/weights: the six required weights and any of
// the optional ones, each clamped to [0, 1].
func (a *API) PutWeights(w http.ResponseWriter, r *http.Request) {
	var body score.Weights
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	set, err := a.gen.Store.Settings(ctx, user)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	merged, err := score.Merge(set.Weights, body)
	if err != nil {
		httpx.Err(w, r, httpx.Invalid("The weights are not valid: "+err.Error()+".", httpx.FieldError{Field: "weights", Message: err.Error()}))
		return
	}
	set.Weights = merged
	if err := a.gen.Store.PutSettings(ctx, user, set); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, merged)
}

// SourceHealth answers GET /api/pulse/source-health: how each source has done
// for the caller.
func (a *API) SourceHealth(w http.ResponseWriter, r *http.Request) {
	h, err := a.search.HealthOf(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"sources": h})
}

// Recommendations answers GET /api/recommendations?limit=: papers like the
// caller's library, never one the exclusion keeps out.
func (a *API) Recommendations(w http.ResponseWriter, r *http.Request) {
	limit := 20
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			httpx.Err(w, r, httpx.Invalid("limit must be a number from 1 to 100.", httpx.FieldError{Field: "limit", Message: "must be from 1 to 100"}))
			return
		}
		limit = n
	}
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	cards, err := a.gen.Recommend(ctx, user, limit)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	out, err := a.withPapers(ctx, user, Deck{Cards: cards})
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": out.Cards})
}

type topicBody struct {
	Name       string   `json:"name"`
	Query      string   `json:"query"`
	Categories []string `json:"categories"`
}

// Topics answers GET /api/pulse/topics.
func (a *API) Topics(w http.ResponseWriter, r *http.Request) {
	t, err := a.gen.Store.Topics(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if t == nil {
		t = []Topic{}
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": t})
}

// AddTopic answers POST /api/pulse/topics {name, query?, categories?}: the query
// defaults to the name.
func (a *API) AddTopic(w http.ResponseWriter, r *http.Request) {
	var body topicBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	body.Name, body.Query = strings.TrimSpace(body.Name), strings.TrimSpace(body.Query)
	if body.Query == "" {
		body.Query = body.Name
	}
	var fields []httpx.FieldError
	if n := utf8.RuneCountInString(body.Name); n < 1 || n > 200 {
		fields = append(fields, httpx.FieldError{Field: "name", Message: "must be 1 to 200 characters"})
	}
	if utf8.RuneCountInString(body.Query) > 500 {
		fields = append(fields, httpx.FieldError{Field: "query", Message: "must be at most 500 characters"})
	}
	if len(body.Categories) > 20 {
		fields = append(fields, httpx.FieldError{Field: "categories", Message: "must be at most 20"})
	}
	for _, c := range body.Categories {
		if c == "" || len(c) > 40 || strings.ContainsAny(c, " \t\n") {
			fields = append(fields, httpx.FieldError{Field: "categories", Message: "each must be a category code such as cs.IR"})
			break
		}
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The topic is not valid.", fields...))
		return
	}
	t, err := a.gen.Store.AddTopic(r.Context(), auth.CallerFrom(r.Context()).UserID,
		Topic{Name: body.Name, Query: body.Query, Categories: body.Categories})
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusCreated, t)
}

// DeleteTopic answers DELETE /api/pulse/topics/{id}; another user's topic is 404.
func (a *API) DeleteTopic(w http.ResponseWriter, r *http.Request) {
	a.deleteOwn(w, r, a.gen.Store.DeleteTopic, "No such topic.")
}

type authorBody struct {
	Name string `json:"name"`
	S2ID string `json:"s2_author_id"`
}

// Authors answers GET /api/pulse/authors.
func (a *API) Authors(w http.ResponseWriter, r *http.Request) {
	list, err := a.gen.Store.Authors(r.Context(), auth.CallerFrom(r.Context()).UserID)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if list == nil {
		list = []Author{}
	}
	httpx.JSON(w, http.StatusOK, map[string]any{"items": list})
}

// FollowAuthor answers POST /api/pulse/authors {name, s2_author_id?}.
func (a *API) FollowAuthor(w http.ResponseWriter, r *http.Request) {
	var body authorBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	body.Name, body.S2ID = strings.Join(strings.Fields(body.Name), " "), strings.TrimSpace(body.S2ID)
	var fields []httpx.FieldError
	if n := utf8.RuneCountInString(body.Name); n < 1 || n > 300 {
		fields = append(fields, httpx.FieldError{Field: "name", Message: "must be 1 to 300 characters"})
	}
	if len(body.S2ID) > 100 {
		fields = append(fields, httpx.FieldError{Field: "s2_author_id", Message: "must be at most 100 characters"})
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The author is not valid.", fields...))
		return
	}
	au, err := a.gen.Store.FollowAuthor(r.Context(), auth.CallerFrom(r.Context()).UserID, Author{Name: body.Name, S2ID: body.S2ID})
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusCreated, au)
}

// UnfollowAuthor answers DELETE /api/pulse/authors/{id}; another user's is 404.
func (a *API) UnfollowAuthor(w http.ResponseWriter, r *http.Request) {
	a.deleteOwn(w, r, a.gen.Store.UnfollowAuthor, "No such author.")
}

func (a *API) deleteOwn(w http.ResponseWriter, r *http.Request, del func(context.Context, uuid.UUID, uuid.UUID) error, missing string) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound(missing))
		return
	}
	err = del(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound(missing))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
