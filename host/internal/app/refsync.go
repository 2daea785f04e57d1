package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/projects"
	"github.com/lectern-research/lectern/host/internal/refsync"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// zoteroPlugin is the reference-manager plugin the sync uses (plugins.toml).
const zoteroPlugin = "zotero"

// newRefSync is the Zotero sync over the App's plugin host and settings.
func (a *App) newRefSync(now func() time.Time) *refsync.Syncer {
	return &refsync.Syncer{Pool: a.Pool, Logger: a.Logger, Now: now,
		Manager: func() (refmanager.Manager, error) {
			if a.Plugins == nil {
				return nil, errors.New("no plugin host")
			}
			// A disabled plugin still has a client whose calls fail as if Zotero
			// were down; say instead that it is off.
			st, err := a.Plugins.StatusOf(zoteroPlugin)
			if err != nil {
				return nil, err
			}
			if !st.Enabled {
				return nil, errors.New("the zotero plugin is disabled")
			}
			return a.Plugins.RefManager(zoteroPlugin)
		},
		Account: a.zoteroAccount}
}

// zoteroAccount reads the user's Zotero settings: the sealed zotero.api_key, and
// zotero.library_type and zotero.group_id choosing a group library.
func (a *App) zoteroAccount(ctx context.Context, userID uuid.UUID) (refsync.Account, error) {
	key, err := a.Settings.Secret(ctx, userID, "zotero.api_key")
	if errors.Is(err, userconfig.ErrNotFound) || (err == nil && strings.TrimSpace(key) == "") {
		return refsync.Account{}, refsync.ErrNotConfigured
	}
	if err != nil {
		return refsync.Account{}, fmt.Errorf("read the Zotero key: %w", err)
	}
	acct := refsync.Account{Credentials: map[string]string{"api_key": strings.TrimSpace(key)}}
	kind, err := a.plainSetting(ctx, userID, "zotero.library_type")
	if err != nil {
		return refsync.Account{}, err
	}
	if kind == "group" {
		group, err := a.plainSetting(ctx, userID, "zotero.group_id")
		if err != nil {
			return refsync.Account{}, err
		}
		if n, perr := strconv.ParseInt(group, 10, 64); perr != nil || n <= 0 {
			return refsync.Account{}, errors.New("zotero.library_type is group but zotero.group_id is not a group's number: set it in Settings, Integrations")
		}
		acct.LibraryID = "groups/" + group
	}
	return acct, nil
}

// plainSetting is one of the user's non-secret settings as text ("" when unset).
func (a *App) plainSetting(ctx context.Context, userID uuid.UUID, key string) (string, error) {
	e, err := a.Settings.Get(ctx, userID, key)
	if errors.Is(err, userconfig.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", key, err)
	}
	return strings.Trim(strings.TrimSpace(string(e.Value)), `"`), nil
}

// refSyncAPI is the Zotero integration's HTTP API over the App's queue.
func (a *App) refSyncAPI() *refsync.API {
	return refsync.NewAPI(a.RefSync, func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error) {
		return a.Jobs.Enqueue(ctx, owner, refsync.SyncArgs{})
	})
}

// projectPapers lists the user's active projects with their papers, for the push
// into Zotero collections.
func (a *App) projectPapers(ctx context.Context, userID uuid.UUID) ([]refsync.ProjectPapers, error) {
	st := projects.New(a.Pool)
	ps, err := st.Projects(ctx, userID, "active")
	if err != nil {
		return nil, err
	}
	var out []refsync.ProjectPapers
	for _, p := range ps {
		id, err := uuid.Parse(p.ID)
		if err != nil {
			return nil, fmt.Errorf("project %q: %w", p.ID, err)
		}
		ids, err := st.PaperIDs(ctx, userID, id)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			out = append(out, refsync.ProjectPapers{Name: p.Name, Papers: ids})
		}
	}
	return out, nil
}
