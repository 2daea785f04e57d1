package papers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// ResolveFunc finds a paper the corpus lacks by DOI or arXiv id through the paper
// sources, adds it to the corpus and returns its id; ErrNotFound when no source
// knows it, ErrSourcesUnreachable when none could be asked.
type ResolveFunc func(ctx context.Context, userID uuid.UUID, doi, arxivID string) (uuid.UUID, error)

// SourcesRetryAfter is the Retry-After of a 503 sources_unreachable: about when a
// source that timed out is worth asking again.
const SourcesRetryAfter = 30 * time.Second

// API serves the feed, paper details, state changes and library membership. Every
// route acts for the resolved caller only.
type API struct {
	store   *Store
	resolve ResolveFunc
}

// NewAPI returns the papers API. resolve may be nil: then only papers already in
// the corpus can be added by identifier.
func NewAPI(store *Store, resolve ResolveFunc) *API { return &API{store: store, resolve: resolve} }

// Feed answers GET /api/papers?view=&scope=&sort=&q=&cursor=&limit=.
func (a *API) Feed(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := FeedParams{View: q.Get("view"), Scope: q.Get("scope"), Sort: q.Get("sort"), Query: q.Get("q"), Cursor: q.Get("cursor")}
	if utf8.RuneCountInString(p.Query) > MaxQueryLen {
		httpx.Err(w, r, httpx.Invalid("The filter text is too long.", httpx.FieldError{Field: "q", Message: "must be at most " + strconv.Itoa(MaxQueryLen) + " characters"}))
		return
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			httpx.Err(w, r, httpx.Invalid("limit must be a number from 1 to 100.", httpx.FieldError{Field: "limit", Message: "must be from 1 to 100"}))
			return
		}
		p.Limit = n
	}
	page, err := a.store.Feed(r.Context(), auth.CallerFrom(r.Context()).UserID, p)
	var ve *ViewError
	switch {
	case errors.As(err, &ve):
		httpx.Err(w, r, httpx.Invalid(ve.Error(), httpx.FieldError{Field: ve.Field, Message: "must be one of " + strings.Join(ve.Valid, ", ")}))
	case errors.Is(err, ErrBadCursor):
		httpx.Err(w, r, httpx.Invalid("The cursor is not valid; start again without it.", httpx.FieldError{Field: "cursor", Message: "is not a cursor this server issued"}))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		httpx.JSON(w, http.StatusOK, page)
	}
}

// Get answers one paper with the caller's overlay; 404 for a paper they may not see.
func (a *API) Get(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	userID := auth.CallerFrom(r.Context()).UserID
	it, err := a.store.Get(r.Context(), userID, id)
	if errors.Is(err, ErrNotFound) {
		if to, merr := a.store.MergedInto(r.Context(), userID, id); merr == nil {
			w.Header().Set("Location", "/api/papers/"+to.String())
			httpx.Err(w, r, &httpx.Error{Status: http.StatusPermanentRedirect, Code: CodeMerged,
				Detail: "This paper was merged with another copy of the same work; it now lives at /api/papers/" + to.String() + "."})
			return
		}
	}
	a.answer(w, r, it, err)
}

// CodeMerged is the error code of a paper id that was merged into another paper:
// the answer is 308 with the survivor in Location.
const CodeMerged = "paper_merged"

type stateBody struct {
	State   *string         `json:"state"`
	Starred *bool           `json:"starred"`
	Rating  json.RawMessage `json:"rating"`
	Flagged *bool           `json:"flagged"`
	Notes   *string         `json:"notes"`
}

// SetState answers PATCH /api/papers/{id}/state: any of state, starred, rating (1-5,
// or null to clear), flagged, notes.
func (a *API) SetState(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var body stateBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	patch := StatePatch{State: body.State, Starred: body.Starred, Flagged: body.Flagged, Notes: body.Notes}
	var fields []httpx.FieldError
	if body.State != nil && !slices.Contains(States, *body.State) {
		fields = append(fields, httpx.FieldError{Field: "state", Message: "must be one of " + strings.Join(States, ", ")})
	}
	switch {
	case len(body.Rating) == 0:
	case string(body.Rating) == "null":
		patch.ClearRating = true
	default:
		var n int
		if err := json.Unmarshal(body.Rating, &n); err != nil || n < 1 || n > 5 {
			fields = append(fields, httpx.FieldError{Field: "rating", Message: "must be a whole number from 1 to 5, or null"})
		} else {
			patch.Rating = &n
		}
	}
	if body.Notes != nil && len(*body.Notes) > 100000 {
		fields = append(fields, httpx.FieldError{Field: "notes", Message: "must be at most 100000 characters"})
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("Some fields are not valid.", fields...))
		return
	}
	it, err := a.store.SetState(r.Context(), auth.CallerFrom(r.Context()).UserID, id, patch)
	a.answer(w, r, it, err)
}

type libraryBody struct {
	PaperID string `json:"paper_id"`
	DOI     string `json:"doi"`
	ArxivID string `json:"arxiv_id"`
}

// AddToLibrary answers POST /api/library with one of paper_id, doi or arxiv_id of a
// paper in the corpus that the caller may see.
func (a *API) AddToLibrary(w http.ResponseWriter, r *http.Request) {
	var body libraryBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	user := auth.CallerFrom(r.Context()).UserID
	var id uuid.UUID
	var err error
	switch {
	case body.PaperID != "":
		if id, err = uuid.Parse(body.PaperID); err != nil {
			httpx.Err(w, r, httpx.Invalid("paper_id is not a paper id.", httpx.FieldError{Field: "paper_id", Message: "must be a UUID"}))
			return
		}
	case body.DOI != "" || body.ArxivID != "":
		doi := NormalizeDOI(body.DOI)
		arxiv, _, okArxiv := NormalizeArxivID(body.ArxivID)
		if (body.DOI != "" && doi == "") || (body.ArxivID != "" && !okArxiv) {
			httpx.Err(w, r, httpx.Invalid("The identifier is not valid.", httpx.FieldError{Field: "doi/arxiv_id", Message: "is not a DOI or arXiv id"}))
			return
		}
		id, err = a.store.FindVisible(r.Context(), user, doi, arxiv)
		if errors.Is(err, ErrNotFound) && a.resolve != nil {
			// Not in the corpus (or only as someone else's private paper): ask the
			// sources for the public record.
			id, err = a.resolve(r.Context(), user, doi, arxiv)
		}
		if err != nil {
			a.answer(w, r, Item{}, err)
			return
		}
	default:
		httpx.Err(w, r, httpx.Invalid("Name the paper by paper_id, doi or arxiv_id.", httpx.FieldError{Field: "paper_id", Message: "one of paper_id, doi, arxiv_id is required"}))
		return
	}
	if err := AddToLibraryTx(r.Context(), a.store.pool, user, id, "manual_save"); err != nil {
		a.answer(w, r, Item{}, err)
		return
	}
	it, err := a.store.Get(r.Context(), user, id)
	if err == nil {
		httpx.JSON(w, http.StatusCreated, it)
		return
	}
	a.answer(w, r, it, err)
}

// RemoveFromLibrary answers DELETE /api/library/{paper_id}.
func (a *API) RemoveFromLibrary(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "paper_id")
	if !ok {
		return
	}
	err := a.store.RemoveFromLibrary(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	if errors.Is(err, ErrNotInLibrary) {
		httpx.Err(w, r, httpx.NotFound("This paper is not in your library."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) answer(w http.ResponseWriter, r *http.Request, it Item, err error) {
	switch {
	case errors.Is(err, ErrSourcesUnreachable):
		// Checked before ErrNotFound: a source that was down might know the paper.
		detail := "The paper sources could not be reached; try again later."
		if errors.Is(err, ErrNotFound) {
			detail = "Some paper sources could not be reached, and those that answered do not know this paper; try again later."
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(SourcesRetryAfter.Seconds())))
		httpx.Err(w, r, &httpx.Error{Status: http.StatusServiceUnavailable, Code: "sources_unreachable",
			Detail: detail, Cause: err})
	case errors.Is(err, ErrNotFound):
		httpx.Err(w, r, httpx.NotFound("No such paper."))
	case err != nil:
		httpx.Err(w, r, httpx.Internal(err))
	default:
		httpx.JSON(w, http.StatusOK, it)
	}
}

func pathID(w http.ResponseWriter, r *http.Request, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, name))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("No such paper."))
		return uuid.Nil, false
	}
	return id, true
}
