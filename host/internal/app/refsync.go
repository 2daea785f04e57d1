package app

import (
	"context"
	"encoding/json"
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
		Account: a.zoteroAccount, Instance: a.zoteroInstance}
}

// The instance's Zotero setup (deployment-wide settings, admins only).
const (
	keyZoteroInstanceKey    = "zotero.instance_api_key"
	keyZoteroInstanceGroups = "zotero.instance_groups"
)

// zoteroInstance reads the group libraries an admin set up for the instance.
func (a *App) zoteroInstance(ctx context.Context) (refsync.InstanceAccount, error) {
	cfg, err := (zoteroInstanceStore{a.Settings}).InstanceConfig(ctx)
	if err != nil {
		return refsync.InstanceAccount{}, err
	}
	if !cfg.KeySet || len(cfg.Groups) == 0 {
		return refsync.InstanceAccount{}, refsync.ErrInstanceNotConfigured
	}
	key, err := a.Settings.SystemSecret(ctx, keyZoteroInstanceKey)
	if err != nil {
		return refsync.InstanceAccount{}, fmt.Errorf("read the instance's Zotero key: %w", err)
	}
	acct := refsync.InstanceAccount{Credentials: map[string]string{"api_key": strings.TrimSpace(key)}}
	for _, g := range cfg.Groups {
		acct.Libraries = append(acct.Libraries, "groups/"+g)
	}
	return acct, nil
}

// zoteroInstanceAPI is the admin's setup of the instance's group libraries.
func (a *App) zoteroInstanceAPI() *refsync.InstanceAPI {
	return refsync.NewInstanceAPI(a.RefSync, zoteroInstanceStore{a.Settings}, func(ctx context.Context) (*jobs.Envelope, error) {
		return a.Jobs.Enqueue(ctx, uuid.Nil, refsync.SyncInstanceArgs{})
	})
}

// zoteroInstanceStore keeps the instance's Zotero setup in deployment-wide
// settings: the key sealed like every secret, the groups as a JSON list.
type zoteroInstanceStore struct{ settings *userconfig.Store }

func (s zoteroInstanceStore) InstanceConfig(ctx context.Context) (refsync.InstanceConfig, error) {
	var out refsync.InstanceConfig
	entries, err := s.settings.ListSystem(ctx, "zotero.instance_")
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		switch e.Key {
		case keyZoteroInstanceKey:
			out.KeySet, out.KeyMasked = true, e.Masked
		case keyZoteroInstanceGroups:
			if err := json.Unmarshal(e.Value, &out.Groups); err != nil {
				return out, fmt.Errorf("read %s: %w", keyZoteroInstanceGroups, err)
			}
		}
	}
	return out, nil
}

func (s zoteroInstanceStore) PutInstanceConfig(ctx context.Context, key *string, groups *[]string) error {
	if key != nil {
		if err := s.putOrDelete(ctx, keyZoteroInstanceKey, *key, *key == ""); err != nil {
			return err
		}
	}
	if groups != nil {
		if err := s.putOrDelete(ctx, keyZoteroInstanceGroups, *groups, len(*groups) == 0); err != nil {
			return err
		}
	}
	return nil
}

func (s zoteroInstanceStore) putOrDelete(ctx context.Context, key string, v any, remove bool) error {
	if remove {
		if err := s.settings.DeleteSystem(ctx, key); err != nil && !errors.Is(err, userconfig.ErrNotFound) {
			return err
		}
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.settings.PutSystem(ctx, key, raw)
	return err
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
	api := refsync.NewAPI(a.RefSync, func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error) {
		return a.Jobs.Enqueue(ctx, owner, refsync.SyncArgs{})
	})
	api.Instance = a.zoteroInstanceAPI()
	return api
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
