package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

const version = "0.1.0"

// Credentials the host passes per call.
const (
	// CredAPIKey is the user's Zotero API key. Required.
	CredAPIKey = "api_key"
)

// Zotero is the reference-manager plugin over the Zotero Web API. Its settings
// (all optional):
//
//	base_url   the API root (default https://api.zotero.org)
//	max_wait   the longest Backoff or Retry-After a call waits through, e.g. "10m"
//
// Library ids are "users/<id>" and "groups/<id>", as in the API's paths.
type Zotero struct {
	log *slog.Logger
	// clock is nil for the wall clock; tests set a fake one.
	clock webapi.Clock

	mu      sync.Mutex
	baseURL string
	maxWait time.Duration
	// clients holds one client per API key (by its hash), so a Backoff Zotero
	// asked of a key holds back every later call with that key.
	clients map[[sha256.Size]byte]*webapi.Client
}

var _ refmanager.Manager = (*Zotero)(nil)

// New returns the plugin with its default settings.
func New(log *slog.Logger) *Zotero {
	return &Zotero{log: log, baseURL: webapi.DefaultBaseURL, maxWait: 10 * time.Minute,
		clients: map[[sha256.Size]byte]*webapi.Client{}}
}

// Describe names the plugin.
func (z *Zotero) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "zotero", Version: version,
		Description: "Zotero libraries (yours and your groups'): two-way sync of items, notes and PDF annotations, and pushes into collections."}, nil
}

// Configure applies the settings; unknown keys and bad values are refused and the
// previous settings stay.
func (z *Zotero) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	base, wait := webapi.DefaultBaseURL, 10*time.Minute
	for k, v := range req.Settings {
		switch k {
		case "base_url":
			u, err := sourcehttp.URLSetting(k, v)
			if err != nil {
				return nil, err
			}
			base = strings.TrimRight(u.String(), "/")
		case "max_wait":
			d, err := sourcehttp.PositiveDurationSetting(k, v)
			if err != nil {
				return nil, err
			}
			wait = d
		default:
			return nil, protocol.BadRequest("unknown setting %q (known: base_url, max_wait)", k)
		}
	}
	z.mu.Lock()
	z.baseURL, z.maxWait = base, wait
	clear(z.clients)
	z.mu.Unlock()
	return &protocol.ConfigureResponse{}, nil
}

// client returns the client of the call's API key.
func (z *Zotero) client(creds map[string]string) (*webapi.Client, error) {
	key := strings.TrimSpace(creds[CredAPIKey])
	if key == "" {
		return nil, protocol.Unauthorized("no Zotero API key is set: add one in Settings, Integrations")
	}
	h := sha256.Sum256([]byte(key))
	z.mu.Lock()
	defer z.mu.Unlock()
	c, ok := z.clients[h]
	if !ok {
		if len(z.clients) > 1000 {
			clear(z.clients)
		}
		c = webapi.New(webapi.Config{BaseURL: z.baseURL, APIKey: key, Clock: z.clock, MaxWait: z.maxWait})
		z.clients[h] = c
	}
	return c, nil
}

// library reads a library id ("users/1", "groups/2").
func library(id string) (webapi.Library, error) {
	kind, num, ok := strings.Cut(id, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || (kind != "users" && kind != "groups") {
		return webapi.Library{}, protocol.BadRequest("library id %q is not users/<id> or groups/<id>", id)
	}
	return webapi.Library{Type: strings.TrimSuffix(kind, "s"), ID: n}, nil
}

func libraryID(l webapi.Library) string { return l.Type + "s/" + strconv.FormatInt(l.ID, 10) }

// Libraries lists the key's own library and the groups it can read, with whether
// it may write to each.
func (z *Zotero) Libraries(ctx context.Context, req *refmanager.LibrariesRequest) (*refmanager.LibrariesResponse, error) {
	c, err := z.client(req.Credentials)
	if err != nil {
		return nil, err
	}
	key, err := c.CurrentKey(ctx)
	if err != nil {
		return nil, typed(err)
	}
	out := &refmanager.LibrariesResponse{}
	if key.Access.User.Library {
		out.Libraries = append(out.Libraries, refmanager.Library{ID: libraryID(webapi.User(key.UserID)),
			Name: cmp.Or(key.Username, "My Library"), Type: refmanager.LibraryUser, Writable: key.Access.User.Write})
	}
	if len(key.Access.Groups) == 0 {
		return out, nil
	}
	groups, err := c.Groups(ctx, key.UserID)
	if err != nil {
		return nil, typed(err)
	}
	for _, g := range groups {
		a, ok := key.Access.Groups[strconv.FormatInt(g.ID, 10)]
		if !ok {
			a, ok = key.Access.Groups["all"]
		}
		if !ok || !a.Library {
			continue
		}
		out.Libraries = append(out.Libraries, refmanager.Library{ID: libraryID(webapi.Group(g.ID)), Name: g.Name,
			Type: refmanager.LibraryGroup, Version: g.Version, Writable: a.Write})
	}
	return out, nil
}

// typed maps the client's errors to the protocol's, in words.
func typed(err error) error {
	var e *webapi.Error
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if !errors.As(err, &e) {
		return protocol.Unavailable(err, "zotero: %s", err.Error())
	}
	switch e.Kind {
	case webapi.ErrUnauthorized:
		return protocol.Unauthorized("zotero refused the API key (HTTP %d): check it in Settings, Integrations, and that it may read this library", e.Status)
	case webapi.ErrNotFound:
		return protocol.NotFound("zotero: %s", e.Error())
	case webapi.ErrRateLimited:
		return protocol.RateLimited(0, "zotero: %s", e.Error())
	case webapi.ErrRejected, webapi.ErrPrecondition:
		return protocol.BadRequest("zotero: %s", e.Error())
	}
	return protocol.Unavailable(err, "zotero: %s", e.Error())
}

func isNotFound(err error) bool { return errors.Is(err, webapi.ErrNotFound) }
