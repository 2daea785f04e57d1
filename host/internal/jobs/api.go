package jobs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/sse"
)

// Limits of the API.
const (
	maxCreateBody    = 1 << 20
	defaultListLimit = 50
	maxListLimit     = 200
	// progressPage is how many progress events a stream reads per query.
	progressPage = 500
)

// Stream event names besides sse.DoneEvent.
const (
	// EventProgress carries one ProgressEvent; its SSE id is the event's seq.
	EventProgress = "progress"
	// EventState carries the envelope whenever the job's state changes.
	EventState = "state"
)

// API serves /api/jobs. Mount each method on its route with the resolver
// current_user_id_with_owner_override: the caller may be a user session, the ops
// key with X-Owner-User-Id, or the ops key alone (then only system jobs, which
// have no owner). An anonymous caller gets 401; a job the caller may not see gets
// 404, never 403.
//
//	POST /api/jobs                  Create
//	GET  /api/jobs                  List
//	GET  /api/jobs/{id}             Get
//	POST /api/jobs/{id}/cancel      Cancel
//	GET  /api/jobs/{id}/stream      Stream
type API struct {
	rt *runtime
}

// API returns the HTTP handlers of the service.
func (s *Service) API() *API { return &API{rt: s.rt} }

// callerOrDeny returns the caller, or answers 401 when no identity resolved.
func callerOrDeny(w http.ResponseWriter, r *http.Request) (auth.Caller, bool) {
	c := auth.CallerFrom(r.Context())
	if !c.HasUser() && !c.OpsKey {
		httpx.Err(w, r, httpx.Unauthorized("authentication_required", "Sign in, or call with the ops key."))
		return c, false
	}
	return c, true
}

// jobID reads {id}; a malformed id cannot name a job, so it is a 404.
func jobID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		httpx.Err(w, r, httpx.NotFound("job not found"))
		return 0, false
	}
	return id, true
}

// notFoundOr answers 404 for ErrNotFound and 500 otherwise.
func notFoundOr(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrNotFound) {
		httpx.Err(w, r, httpx.NotFound("job not found"))
		return
	}
	httpx.Err(w, r, err)
}

type createRequest struct {
	Kind string          `json:"kind"`
	Args json.RawMessage `json:"args"`
}

// Create enqueues a job: body {"kind": "...", "args": {...}}, answer 202 with the
// envelope and a Location header. An unknown kind is a 400 naming the known ones;
// a kind the caller may not enqueue is a 403; bad args are a 422 naming the
// fields.
func (a *API) Create(w http.ResponseWriter, r *http.Request) {
	caller, ok := callerOrDeny(w, r)
	if !ok {
		return
	}
	var req createRequest
	if !httpx.DecodeJSON(w, r, &req, maxCreateBody) {
		return
	}
	if req.Kind == "" {
		httpx.Err(w, r, httpx.Invalid("A job kind is required.", httpx.FieldError{Field: "kind", Message: "is required"}))
		return
	}
	k, known := a.rt.reg.lookup(req.Kind)
	if !known {
		httpx.Err(w, r, &httpx.Error{
			Status: http.StatusBadRequest, Code: "unknown_job_kind",
			Detail: fmt.Sprintf("Unknown job kind %q. Known kinds: %s.", req.Kind, strings.Join(a.rt.reg.apiKinds(), ", ")),
		})
		return
	}
	if !k.enqueuers.allows(caller) {
		detail := fmt.Sprintf("You may not start jobs of kind %s.", k.name)
		if k.enqueuers == 0 {
			detail = fmt.Sprintf("Jobs of kind %s are started by the host only.", k.name)
		}
		httpx.Err(w, r, httpx.Forbidden("job_kind_forbidden", detail))
		return
	}
	args, err := k.decodeFunc(req.Args)
	if err != nil {
		var argsErr *ArgsError
		if errors.As(err, &argsErr) {
			fields := make([]httpx.FieldError, len(argsErr.Fields))
			for i, f := range argsErr.Fields {
				fields[i] = httpx.FieldError{Field: f.Field, Message: f.Message}
			}
			httpx.Err(w, r, httpx.Invalid("The job's arguments are not valid.", fields...))
			return
		}
		httpx.Err(w, r, err)
		return
	}
	row, err := a.rt.insert(r.Context(), caller.UserID, args)
	if errors.Is(err, ErrAlreadyActive) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "job_already_active",
			Detail: fmt.Sprintf("A %s job of yours is already queued or running; wait for it to finish.", k.name)})
		return
	}
	if err != nil {
		httpx.Err(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/jobs/"+strconv.FormatInt(row.ID, 10))
	httpx.JSON(w, http.StatusAccepted, newEnvelope(row, nil))
}

// Get answers the envelope of one job.
func (a *API) Get(w http.ResponseWriter, r *http.Request) {
	caller, ok := callerOrDeny(w, r)
	if !ok {
		return
	}
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	row, err := a.rt.visibleJob(r.Context(), caller, id)
	if err != nil {
		notFoundOr(w, r, err)
		return
	}
	env, err := a.rt.envelope(r.Context(), row)
	if err != nil {
		httpx.Err(w, r, err)
		return
	}
	httpx.JSON(w, http.StatusOK, env)
}

// ListResponse is the body of GET /api/jobs.
type ListResponse struct {
	// Jobs are the envelopes, newest first.
	Jobs []*Envelope `json:"jobs"`
	// NextCursor fetches the next page (?cursor=); null on the last page.
	NextCursor *string `json:"next_cursor"`
}

// List answers the caller's jobs, newest first. Query parameters: state
// (repeatable or comma-separated; a public state or "active"), kind (same),
// limit (1-200, default 50) and cursor (from next_cursor).
func (a *API) List(w http.ResponseWriter, r *http.Request) {
	caller, ok := callerOrDeny(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	params := river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	var fieldErrs []httpx.FieldError

	if names := splitParam(q["state"]); len(names) > 0 {
		var states []rivertype.JobState
		for _, name := range names {
			public, err := parseState(name)
			if err != nil {
				fieldErrs = append(fieldErrs, httpx.FieldError{Field: "state",
					Message: fmt.Sprintf("%q is not a state; use one of %s or active", name, joinStates())})
				continue
			}
			for _, s := range public {
				states = append(states, riverStates(s)...)
			}
		}
		params = params.States(states...)
	}
	if kinds := splitParam(q["kind"]); len(kinds) > 0 {
		for _, k := range kinds {
			if !a.rt.reg.has(k) {
				fieldErrs = append(fieldErrs, httpx.FieldError{Field: "kind",
					Message: fmt.Sprintf("%q is not a job kind; known kinds: %s", k, strings.Join(a.rt.reg.Kinds(), ", "))})
			}
		}
		params = params.Kinds(kinds...)
	}
	limit := defaultListLimit
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxListLimit {
			fieldErrs = append(fieldErrs, httpx.FieldError{Field: "limit", Message: fmt.Sprintf("must be an integer from 1 to %d", maxListLimit)})
		}
		limit = n
	}
	if raw := q.Get("cursor"); raw != "" {
		before, err := decodeCursor(raw)
		if err != nil {
			fieldErrs = append(fieldErrs, httpx.FieldError{Field: "cursor", Message: "is not a cursor this API returned"})
		}
		params = params.Where("id < @lectern_before_id", river.NamedArgs{"lectern_before_id": before})
	}
	if len(fieldErrs) > 0 {
		httpx.Err(w, r, httpx.Invalid("The list parameters are not valid.", fieldErrs...))
		return
	}
	params, _ = scope(params.First(limit), caller)

	res, err := a.rt.client.JobList(r.Context(), params)
	if err != nil {
		httpx.Err(w, r, fmt.Errorf("jobs: list: %w", err))
		return
	}
	envs, err := a.rt.envelopes(r.Context(), res.Jobs)
	if err != nil {
		httpx.Err(w, r, err)
		return
	}
	body := ListResponse{Jobs: envs}
	if len(res.Jobs) == limit {
		next := encodeCursor(res.Jobs[len(res.Jobs)-1].ID)
		body.NextCursor = &next
	}
	httpx.JSON(w, http.StatusOK, body)
}

// splitParam flattens repeated and comma-separated query values.
func splitParam(values []string) []string {
	var out []string
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func joinStates() string {
	names := make([]string, 0, len(States()))
	for _, s := range States() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// A cursor is the id of the last job of a page, opaque to clients.
func encodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("j" + strconv.FormatInt(id, 10)))
}

func decodeCursor(s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, fmt.Errorf("jobs: cursor: %w", err)
	}
	digits, ok := strings.CutPrefix(string(b), "j")
	if !ok {
		return 0, errors.New("jobs: cursor: not a job cursor")
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, errors.New("jobs: cursor: not a job cursor")
	}
	return id, nil
}

// Cancel cancels a job. A queued (or retrying) job is cancelled at once: 200 with
// the cancelled envelope. A running job's context is cancelled and it ends as
// cancelled shortly: 202 with cancel_requested true. A finished job: 409.
func (a *API) Cancel(w http.ResponseWriter, r *http.Request) {
	caller, ok := callerOrDeny(w, r)
	if !ok {
		return
	}
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	row, err := a.rt.visibleJob(ctx, caller, id)
	if err != nil {
		notFoundOr(w, r, err)
		return
	}
	if state := PublicState(row.State); state.Terminal() {
		httpx.Err(w, r, finished(id, state))
		return
	}
	row, err = a.rt.client.JobCancel(ctx, id)
	if errors.Is(err, rivertype.ErrNotFound) {
		notFoundOr(w, r, ErrNotFound)
		return
	}
	if err != nil {
		httpx.Err(w, r, fmt.Errorf("jobs: cancel job %d: %w", id, err))
		return
	}
	a.rt.hub.wake(id)
	env, err := a.rt.envelope(ctx, row)
	if err != nil {
		httpx.Err(w, r, err)
		return
	}
	switch {
	case env.State == StateCancelled:
		httpx.JSON(w, http.StatusOK, env)
	case env.State.Terminal(): // it finished before the cancel reached it
		httpx.Err(w, r, finished(id, env.State))
	default:
		httpx.JSON(w, http.StatusAccepted, env)
	}
}

func finished(id int64, state State) *httpx.Error {
	return &httpx.Error{Status: http.StatusConflict, Code: "job_finished",
		Detail: fmt.Sprintf("Job %d has already finished (%s).", id, state)}
}

// Stream answers the job's progress as server-sent events: every progress event
// so far (after Last-Event-ID when the client resumes), then live ones, a state
// event on each state change, a heartbeat comment when idle, and finally the done
// marker carrying the final envelope once the job is finished.
func (a *API) Stream(w http.ResponseWriter, r *http.Request) {
	caller, ok := callerOrDeny(w, r)
	if !ok {
		return
	}
	id, ok := jobID(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	// Subscribe before the first read, so that no change slips in between.
	wake, unsubscribe := a.rt.hub.subscribe(id)
	defer unsubscribe()
	row, err := a.rt.visibleJob(ctx, caller, id)
	if err != nil {
		notFoundOr(w, r, err)
		return
	}
	// A Last-Event-ID that is not one of ours replays from the start.
	after, _ := strconv.ParseInt(sse.LastEventID(r), 10, 64)
	sw, err := sse.Open(w)
	if err != nil {
		a.rt.log.ErrorContext(ctx, "jobs: open stream", "job_id", id, "error", err)
		return
	}
	st := &stream{rt: a.rt, sw: sw, id: id, after: max(after, 0)}
	if err := st.run(ctx, row, wake); err != nil && ctx.Err() == nil {
		a.rt.log.WarnContext(ctx, "jobs: stream ended early", "job_id", id, "error", err)
	}
}

// stream is one client's stream of one job.
type stream struct {
	rt    *runtime
	sw    *sse.Writer
	id    int64
	after int64 // seq of the last progress event sent
}

func (s *stream) run(ctx context.Context, row *rivertype.JobRow, wake <-chan struct{}) error {
	heartbeat := time.NewTicker(s.rt.cfg.HeartbeatInterval)
	defer heartbeat.Stop()
	poll := time.NewTicker(s.rt.cfg.PollInterval)
	defer poll.Stop()
	var lastState State
	for {
		if err := s.sendProgress(ctx); err != nil {
			return err
		}
		if row == nil {
			var err error
			if row, err = s.rt.client.JobGet(ctx, s.id); err != nil {
				return fmt.Errorf("jobs: stream job %d: %w", s.id, err)
			}
		}
		state := PublicState(row.State)
		if state.Terminal() {
			// Events written before the job finished are all committed now.
			if err := s.sendProgress(ctx); err != nil {
				return err
			}
			env, err := s.rt.envelope(ctx, row)
			if err != nil {
				return err
			}
			return s.sw.Done(env)
		}
		if state != lastState {
			env, err := s.rt.envelope(ctx, row)
			if err != nil {
				return err
			}
			if err := s.sw.JSON(EventState, "", env); err != nil {
				return err
			}
			lastState = state
		}
		row = nil
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-s.rt.closing:
				return nil // the host is shutting down; the client resumes elsewhere
			case <-wake:
				break wait
			case <-poll.C:
				break wait
			case <-heartbeat.C:
				if err := s.sw.Comment("heartbeat"); err != nil {
					return err
				}
			}
		}
	}
}

// sendProgress sends every progress event after s.after.
func (s *stream) sendProgress(ctx context.Context) error {
	for {
		evs, err := progressSince(ctx, s.rt.pool, s.id, s.after, progressPage)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := s.sw.JSON(EventProgress, strconv.FormatInt(ev.Seq, 10), ev); err != nil {
				return err
			}
			s.after = ev.Seq
		}
		if len(evs) < progressPage {
			return nil
		}
	}
}
