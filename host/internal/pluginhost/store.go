package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Override is an admin's run-time choice for one plugin (a plugin_settings row).
type Override struct {
	// Name is the plugin's name.
	Name string
	// Enabled overrides plugins.toml's flag; nil follows the file.
	Enabled *bool
	// Settings are the overridden setting keys, merged over the file's settings.
	Settings map[string]any
	// UpdatedAt is when the row last changed.
	UpdatedAt time.Time
	// UpdatedBy is the admin who changed it; uuid.Nil when unknown.
	UpdatedBy uuid.UUID
}

// Store keeps Overrides in the plugin_settings table.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a Store on pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

func scanOverride(row pgx.Row) (Override, error) {
	var (
		o   Override
		raw []byte
		by  *uuid.UUID
	)
	if err := row.Scan(&o.Name, &o.Enabled, &raw, &o.UpdatedAt, &by); err != nil {
		return Override{}, err
	}
	if err := json.Unmarshal(raw, &o.Settings); err != nil {
		return Override{}, fmt.Errorf("settings of %s: %w", o.Name, err)
	}
	if by != nil {
		o.UpdatedBy = *by
	}
	return o, nil
}

// List returns every override, by plugin name.
func (s *Store) List(ctx context.Context) (map[string]Override, error) {
	rows, err := s.pool.Query(ctx, `SELECT plugin_name, enabled, settings, updated_at, updated_by FROM plugin_settings`)
	if err != nil {
		return nil, fmt.Errorf("pluginhost: list plugin settings: %w", err)
	}
	defer rows.Close()
	out := map[string]Override{}
	for rows.Next() {
		o, err := scanOverride(rows)
		if err != nil {
			return nil, fmt.Errorf("pluginhost: list plugin settings: %w", err)
		}
		out[o.Name] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pluginhost: list plugin settings: %w", err)
	}
	return out, nil
}

// Update changes one plugin's override inside a transaction: it locks the row, calls
// change with the current override (the zero Override with Name set when none), writes
// what change returns, and commits only when change succeeded. change may apply the
// new state to the running plugin; when it fails nothing is stored.
func (s *Store) Update(ctx context.Context, name string, by uuid.UUID, change func(cur Override) (Override, error)) (Override, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return Override{}, fmt.Errorf("pluginhost: update plugin settings: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	cur, err := scanOverride(tx.QueryRow(ctx,
		`SELECT plugin_name, enabled, settings, updated_at, updated_by FROM plugin_settings WHERE plugin_name = $1 FOR UPDATE`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, err = Override{Name: name, Settings: map[string]any{}}, nil
	}
	if err != nil {
		return Override{}, fmt.Errorf("pluginhost: read plugin settings of %s: %w", name, err)
	}
	next, err := change(cur)
	if err != nil {
		return Override{}, err
	}
	if next.Settings == nil {
		next.Settings = map[string]any{}
	}
	raw, err := json.Marshal(next.Settings)
	if err != nil {
		return Override{}, fmt.Errorf("pluginhost: encode settings of %s: %w", name, err)
	}
	var byArg *uuid.UUID
	if by != uuid.Nil {
		byArg = &by
	}
	saved, err := scanOverride(tx.QueryRow(ctx, `
		INSERT INTO plugin_settings (plugin_name, enabled, settings, updated_at, updated_by)
		VALUES ($1, $2, $3, now(), $4)
		ON CONFLICT (plugin_name) DO UPDATE
		   SET enabled = EXCLUDED.enabled, settings = EXCLUDED.settings,
		       updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
		RETURNING plugin_name, enabled, settings, updated_at, updated_by`,
		name, next.Enabled, raw, byArg))
	if err != nil {
		return Override{}, fmt.Errorf("pluginhost: write plugin settings of %s: %w", name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Override{}, fmt.Errorf("pluginhost: commit plugin settings of %s: %w", name, err)
	}
	return saved, nil
}
