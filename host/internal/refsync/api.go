package refsync

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// API serves /api/integrations/zotero: the caller's sync status, a check of
// their key, and "sync now". Every route acts for the resolved caller only.
type API struct {
	syncer  *Syncer
	enqueue func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error)
	// Instance serves the admin's setup of the instance's group libraries
	// (/api/admin/zotero); nil: not offered.
	Instance *InstanceAPI
}

// NewAPI returns the API; enqueue starts the caller's refmanager.sync.
func NewAPI(s *Syncer, enqueue func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error)) *API {
	return &API{syncer: s, enqueue: enqueue}
}

// StatusAnswer is GET /api/integrations/zotero's answer.
type StatusAnswer struct {
	// Configured is true when the caller has set a Zotero API key.
	Configured bool     `json:"configured"`
	Libraries  []Status `json:"libraries"`
}

// Status answers GET /api/integrations/zotero.
func (a *API) Status(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	_, err := a.syncer.Account(ctx, user)
	if err != nil && !errors.Is(err, ErrNotConfigured) {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	st, serr := statuses(ctx, a.syncer.Pool, user)
	if serr != nil {
		httpx.Err(w, r, httpx.Internal(serr))
		return
	}
	httpx.JSON(w, http.StatusOK, StatusAnswer{Configured: err == nil, Libraries: st})
}

// LibraryAnswer is one library the key may read.
type LibraryAnswer struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Writable bool   `json:"writable"`
}

// TestAnswer is POST /api/integrations/zotero/test's answer.
type TestAnswer struct {
	OK        bool            `json:"ok"`
	Libraries []LibraryAnswer `json:"libraries"`
	// Message says what the key may do, in a sentence.
	Message string `json:"message"`
}

// Test answers POST /api/integrations/zotero/test: it asks Zotero what the
// caller's key may read and write.
func (a *API) Test(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	acct, err := a.syncer.Account(ctx, auth.CallerFrom(ctx).UserID)
	if errors.Is(err, ErrNotConfigured) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "not_configured", Detail: ErrNotConfigured.Error()})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	m, err := a.syncer.Manager()
	if err != nil {
		httpx.Err(w, r, httpx.Unavailable("The Zotero plugin is not running on this host; an admin can enable it under Plugins.", err))
		return
	}
	libs, err := m.Libraries(ctx, &refmanager.LibrariesRequest{Credentials: acct.Credentials})
	switch protocol.CodeOf(err) {
	case "":
	case protocol.CodeUnauthorized:
		httpx.Err(w, r, &httpx.Error{Status: http.StatusUnprocessableEntity, Code: "key_refused",
			Detail: "Zotero refused this API key. Check it at zotero.org/settings/keys and save it again."})
		return
	case protocol.CodeRateLimited:
		httpx.Err(w, r, &httpx.Error{Status: http.StatusTooManyRequests, Code: "rate_limited",
			Detail: "Zotero asked us to slow down; try again in a minute."})
		return
	default:
		httpx.Err(w, r, httpx.Unavailable("Zotero could not be reached; try again in a minute.", err))
		return
	}
	out := TestAnswer{OK: true, Libraries: []LibraryAnswer{}}
	writable := 0
	for _, l := range libs.Libraries {
		kind := "user"
		if l.Type == refmanager.LibraryGroup {
			kind = "group"
		}
		if l.Writable {
			writable++
		}
		out.Libraries = append(out.Libraries, LibraryAnswer{ID: l.ID, Name: l.Name, Type: kind, Writable: l.Writable})
	}
	out.Message = "The key reads " + strconv.Itoa(len(out.Libraries)) + " librar" + plural(len(out.Libraries), "y", "ies") +
		" and may write to " + strconv.Itoa(writable) + "."
	httpx.JSON(w, http.StatusOK, out)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Sync answers POST /api/integrations/zotero/sync: 202 with the job, 409 while
// one is queued or running.
func (a *API) Sync(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	user := auth.CallerFrom(ctx).UserID
	if _, err := a.syncer.Account(ctx, user); errors.Is(err, ErrNotConfigured) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "not_configured", Detail: ErrNotConfigured.Error()})
		return
	} else if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if a.enqueue == nil {
		startSync(w, r, nil, "")
		return
	}
	startSync(w, r, func() (*jobs.Envelope, error) { return a.enqueue(ctx, user) },
		"A sync of your library is already under way.")
}

// startSync queues a sync job with enqueue (nil: no job queue runs) and answers
// 202 with the job, or 409 with busy while one is queued or running.
func startSync(w http.ResponseWriter, r *http.Request, enqueue func() (*jobs.Envelope, error), busy string) {
	if enqueue == nil {
		httpx.Err(w, r, httpx.Unavailable("The job queue is not running, so no sync can start now.", nil))
		return
	}
	env, err := enqueue()
	if errors.Is(err, jobs.ErrAlreadyActive) {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "job_already_active", Detail: busy})
		return
	}
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	w.Header().Set("Location", "/api/jobs/"+strconv.FormatInt(env.ID, 10))
	httpx.JSON(w, http.StatusAccepted, env)
}
