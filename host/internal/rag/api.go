package rag

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/ratelimit"
	"github.com/lectern-research/lectern/host/internal/sse"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// API serves the RAG, summary and extraction routes (auth.UserSession).
type API struct {
	svc   *Service
	queue *jobs.Service
	// asks bounds each user's questions: each may cost a model call.
	asks *ratelimit.Limiter
}

// AsksPerMinute is how many questions a user may ask a minute (REFERENCE: 20).
const AsksPerMinute = 20

// NewAPI returns the API; queue may be nil (the job routes then answer 503).
func NewAPI(svc *Service, queue *jobs.Service) *API {
	return &API{svc: svc, queue: queue, asks: ratelimit.New("questions", AsksPerMinute, time.Minute)}
}

// SSE events of an answer, before the stream's done marker.
const (
	EventToken     = "token"
	EventCitations = "citations"
	EventError     = "error"
	// EventReset withdraws the text streamed so far ({"message"}): the assigned
	// model failed after its answer had begun, and the builtin method's answer
	// follows in new token events.
	EventReset = "reset"
)

// Done is the data of the done marker that ends an answer's stream: how the answer
// was made, or, after an error event, the error's code (openapi.json AnswerDone).
type Done struct {
	// Model is the model that wrote the answer; empty when none did.
	Model string `json:"model"`
	// Method is how the answer was made: generative, or the builtin extractive
	// method.
	Method string `json:"method"`
	// Answered is false when the passages held no answer, or the answer failed.
	Answered bool `json:"answered"`
	// Fallback says why the builtin method answered in place of the assigned
	// model; absent when it did not.
	Fallback *Fallback `json:"fallback,omitempty"`
	// Error is the code of the error event the stream sent; absent on success.
	Error string `json:"error,omitempty"`
}

// StreamError is the data of the error event of an answer's stream: the answer
// failed after it had begun (openapi.json StreamError).
type StreamError struct {
	// Message says what went wrong, in a sentence for people.
	Message string `json:"message"`
	// Code is the error's stable code (docs/api-errors.md).
	Code string `json:"code"`
}

// Ask answers POST /api/rag/ask over server-sent events: `token` events carry the
// answer's text as it comes ({"text"}), then one `citations` event maps its
// [S1]-style markers to passages ({"citations": [...], "sentences": [...]}, each
// citation and cited sentence with its "verified" flag), then the done marker
// says how it was made ({"model", "method", "answered"}, and "fallback" with the
// role, provider, endpoint and reason when the assigned model failed and the builtin
// method answered). When the model fails after its answer began, a `reset` event
// withdraws its text and the builtin method's answer follows. The stream opens with
// the first piece of the answer, so a request that fails before (bad input, a
// scope the caller cannot see, the model unreachable) gets a plain error answer:
// 422, 404, 502 for a provider error, 504 when the provider timed out.
func (a *API) Ask(w http.ResponseWriter, r *http.Request) {
	user := auth.CallerFrom(r.Context()).UserID
	if ok, wait := a.asks.Allow(user.String()); !ok {
		a.asks.Refuse(w, r, wait)
		return
	}
	var q Question
	if !httpx.DecodeJSON(w, r, &q, httpx.MaxJSONBody) {
		return
	}
	var stream *sse.Writer
	open := func() error {
		if stream != nil {
			return nil
		}
		var err error
		stream, err = sse.Open(w)
		return err
	}
	ans, err := a.svc.AskTo(r.Context(), user, q, Sink{
		Token: func(text string) error {
			if err := open(); err != nil {
				return err
			}
			return stream.JSON(EventToken, "", map[string]string{"text": text})
		},
		Reset: func(message string) error {
			if err := open(); err != nil {
				return err
			}
			return stream.JSON(EventReset, "", map[string]string{"message": message})
		},
	})
	if err != nil {
		if stream == nil {
			httpx.Err(w, r, askError(err))
			return
		}
		// The answer has begun: the error goes on the stream, which still ends
		// with the done marker.
		e := askError(err)
		_ = stream.JSON(EventError, "", StreamError{Message: e.Detail, Code: e.Code})
		_ = stream.Done(Done{Error: e.Code})
		return
	}
	if err := open(); err != nil {
		return
	}
	if err := stream.JSON(EventCitations, "", map[string]any{"citations": ans.Citations, "sentences": ans.Sentences}); err != nil {
		return
	}
	_ = stream.Done(Done{Model: ans.Model, Method: ans.Method, Answered: ans.Answered, Fallback: ans.Fallback})
}

func askError(err error) *httpx.Error {
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		return httpx.Invalid("The question cannot be asked: "+fe.Field+" "+fe.Message+".", httpx.FieldError{Field: fe.Field, Message: fe.Message})
	case errors.Is(err, ErrNotFound):
		return httpx.NotFound("A project or paper of the scope was not found.")
	case errors.Is(err, context.DeadlineExceeded):
		return httpx.GatewayTimeout("The model did not answer in time; try again, or ask a narrower question.", err)
	case errors.Is(err, llmgw.ErrUnavailable), errors.Is(err, llmgw.ErrNoKey), errors.Is(err, llmgw.ErrNoBaseURL):
		return httpx.Unavailable("The model for answers is not available: an admin can check Settings → LLM providers.", err)
	case errors.Is(err, protocol.ErrUnavailable), errors.Is(err, protocol.ErrRateLimited), errors.Is(err, protocol.ErrUnauthorized),
		errors.Is(err, protocol.ErrBadRequest), errors.Is(err, protocol.ErrInternal):
		return httpx.BadGateway("The model failed to answer; try again later.", err)
	}
	return httpx.Internal(err)
}

// RegisterJobs adds summary.generate and extract.paper, which any user may
// enqueue for themselves (also through POST /api/jobs).
func RegisterJobs(reg *jobs.Registry, svc *Service) error {
	if err := jobs.Register(reg, jobs.KindSpec[SummaryArgs]{
		Worker: &SummaryWorker{Svc: svc}, Queue: "llm", MaxAttempts: 2, Timeout: 10 * time.Minute, Enqueuers: jobs.EnqueueUser,
	}); err != nil {
		return err
	}
	return jobs.Register(reg, jobs.KindSpec[ExtractArgs]{
		Worker: &ExtractWorker{Svc: svc}, Queue: "llm", MaxAttempts: 2, Timeout: 10 * time.Minute, Enqueuers: jobs.EnqueueUser,
	})
}

func paperID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(chi.URLParam(r, "id"))
	if err != nil {
		httpx.Err(w, r, httpx.NotFound("Paper not found."))
		return uuid.Nil, false
	}
	return id, true
}

// visible reports whether the caller may see the paper.
func (a *API) visible(w http.ResponseWriter, r *http.Request, id uuid.UUID) bool {
	ok, err := papers.New(a.svc.Pool).Visible(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return false
	}
	if !ok {
		httpx.Err(w, r, httpx.NotFound("Paper not found."))
	}
	return ok
}

func (a *API) enqueue(w http.ResponseWriter, r *http.Request, args river.JobArgs) {
	if a.queue == nil {
		httpx.Err(w, r, httpx.Unavailable("The job queue is not running on this host.", nil))
		return
	}
	env, err := a.queue.Enqueue(r.Context(), auth.CallerFrom(r.Context()).UserID, args)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusAccepted, map[string]any{"job": env})
}

// Summarize answers POST /api/papers/{id}/summary {"force"?}: 202 with the
// summary.generate job.
func (a *API) Summarize(w http.ResponseWriter, r *http.Request) {
	id, ok := paperID(w, r)
	if !ok || !a.visible(w, r, id) {
		return
	}
	var body struct {
		Force bool `json:"force"`
	}
	if r.ContentLength != 0 && !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	a.enqueue(w, r, SummaryArgs{PaperID: id, Force: body.Force})
}

// GetSummary answers GET /api/papers/{id}/summary: the summary by the current
// summarize model, or else the newest; 404 when there is none yet.
func (a *API) GetSummary(w http.ResponseWriter, r *http.Request) {
	id, ok := paperID(w, r)
	if !ok {
		return
	}
	s, err := a.svc.LatestSummary(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("The paper has no summary yet; ask for one with POST."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, s)
}

// Extract answers POST /api/papers/{id}/extract: 202 with the extract.paper job.
func (a *API) Extract(w http.ResponseWriter, r *http.Request) {
	id, ok := paperID(w, r)
	if !ok || !a.visible(w, r, id) {
		return
	}
	a.enqueue(w, r, ExtractArgs{PaperID: id})
}

// GetExtractions answers GET /api/papers/{id}/extractions: the caller's
// extraction of record, each item with its quote's verification status.
func (a *API) GetExtractions(w http.ResponseWriter, r *http.Request) {
	id, ok := paperID(w, r)
	if !ok {
		return
	}
	x, err := a.svc.Extraction(r.Context(), auth.CallerFrom(r.Context()).UserID, id)
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("You have no extraction of this paper yet; ask for one with POST /api/papers/{id}/extract."))
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, x)
}
