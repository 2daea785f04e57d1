package refsync

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

// InstanceConfig is the instance's Zotero setup as an admin sees it: whether the
// key is set (only its mask is ever shown) and the group libraries it syncs.
type InstanceConfig struct {
	KeySet    bool
	KeyMasked string
	// Groups are Zotero group ids ("12345").
	Groups []string
}

// InstanceStore keeps the instance's Zotero setup (deployment-wide settings).
type InstanceStore interface {
	InstanceConfig(ctx context.Context) (InstanceConfig, error)
	// PutInstanceConfig sets what is not nil; an empty key removes it.
	PutInstanceConfig(ctx context.Context, key *string, groups *[]string) error
}

// InstanceAPI serves /api/admin/zotero: the group libraries an admin sets up for
// the whole instance, their syncs' status, and "sync now". Admins only.
type InstanceAPI struct {
	syncer  *Syncer
	store   InstanceStore
	enqueue func(ctx context.Context) (*jobs.Envelope, error)
}

// NewInstanceAPI returns the API; enqueue starts refmanager.sync_instance.
func NewInstanceAPI(s *Syncer, store InstanceStore, enqueue func(ctx context.Context) (*jobs.Envelope, error)) *InstanceAPI {
	return &InstanceAPI{syncer: s, store: store, enqueue: enqueue}
}

// InstanceAnswer is what GET and PUT /api/admin/zotero answer.
type InstanceAnswer struct {
	APIKeySet    bool     `json:"api_key_set"`
	APIKeyMasked string   `json:"api_key_masked,omitempty"`
	GroupIDs     []string `json:"group_ids"`
	// Libraries are the configured groups' syncs that have run.
	Libraries []Status `json:"libraries"`
}

// Get answers GET /api/admin/zotero.
func (a *InstanceAPI) Get(w http.ResponseWriter, r *http.Request) {
	out, err := a.answer(r.Context())
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}

func (a *InstanceAPI) answer(ctx context.Context) (InstanceAnswer, error) {
	cfg, err := a.store.InstanceConfig(ctx)
	if err != nil {
		return InstanceAnswer{}, err
	}
	st, err := instanceStatuses(ctx, a.syncer.Pool)
	if err != nil {
		return InstanceAnswer{}, err
	}
	out := InstanceAnswer{APIKeySet: cfg.KeySet, APIKeyMasked: cfg.KeyMasked, GroupIDs: cfg.Groups, Libraries: []Status{}}
	if out.GroupIDs == nil {
		out.GroupIDs = []string{}
	}
	for _, s := range st {
		if slices.Contains(cfg.Groups, strings.TrimPrefix(s.LibraryID, "groups/")) {
			out.Libraries = append(out.Libraries, s)
		}
	}
	return out, nil
}

type instanceBody struct {
	APIKey   *string   `json:"api_key"`
	GroupIDs *[]string `json:"group_ids"`
}

// Put answers PUT /api/admin/zotero {api_key?, group_ids?}: a field left out
// stays, an empty key removes it, an empty list stops the instance's sync.
func (a *InstanceAPI) Put(w http.ResponseWriter, r *http.Request) {
	var body instanceBody
	if !httpx.DecodeJSON(w, r, &body, httpx.MaxJSONBody) {
		return
	}
	var fields []httpx.FieldError
	if k := body.APIKey; k != nil && (len(*k) > 256 || strings.IndexFunc(*k, unicode.IsSpace) >= 0) {
		fields = append(fields, httpx.FieldError{Field: "api_key", Message: "must be the key zotero.org/settings/keys gave, without spaces, at most 256 characters"})
	}
	var groups []string
	if body.GroupIDs != nil {
		var msg string
		groups, msg = cleanGroups(*body.GroupIDs)
		if msg != "" {
			fields = append(fields, httpx.FieldError{Field: "group_ids", Message: msg})
		}
	}
	if len(fields) > 0 {
		httpx.Err(w, r, httpx.Invalid("The instance's Zotero settings were not saved.", fields...))
		return
	}
	var gp *[]string
	if body.GroupIDs != nil {
		gp = &groups
	}
	if err := a.store.PutInstanceConfig(r.Context(), body.APIKey, gp); err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	a.Get(w, r)
}

// cleanGroups checks and de-duplicates group ids, keeping their order; the
// message says what is wrong, "" when nothing is.
func cleanGroups(in []string) ([]string, string) {
	out := make([]string, 0, len(in))
	for _, g := range in {
		g = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(g), "groups/"))
		if n, err := strconv.ParseInt(g, 10, 64); err != nil || n <= 0 || strconv.FormatInt(n, 10) != g {
			return nil, "each must be a Zotero group's number, as in zotero.org/groups/<number>"
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	if len(out) > MaxInstanceLibraries {
		return nil, "at most " + strconv.Itoa(MaxInstanceLibraries) + " group libraries"
	}
	return out, ""
}

// Sync answers POST /api/admin/zotero/sync: 202 with the job, 409 while one is
// queued or running or when nothing is set up.
func (a *InstanceAPI) Sync(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	cfg, err := a.store.InstanceConfig(ctx)
	if err != nil {
		httpx.Err(w, r, httpx.Internal(err))
		return
	}
	if !cfg.KeySet || len(cfg.Groups) == 0 {
		httpx.Err(w, r, &httpx.Error{Status: http.StatusConflict, Code: "not_configured",
			Detail: "Set the instance's Zotero key and at least one group library first."})
		return
	}
	if a.enqueue == nil {
		startSync(w, r, nil, "")
		return
	}
	startSync(w, r, func() (*jobs.Envelope, error) { return a.enqueue(ctx) },
		"A sync of the instance's group libraries is already under way.")
}
