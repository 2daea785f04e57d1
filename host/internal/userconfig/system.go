package userconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ListSystem returns the deployment-wide values whose keys start with prefix,
// secrets masked. Only admin routes call it.
func (s *Store) ListSystem(ctx context.Context, prefix string) ([]Entry, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+rowColumns+` FROM user_config
		WHERE user_id IS NULL AND scope = 'system' AND starts_with(key, $1) ORDER BY key`, prefix)
	if err != nil {
		return nil, fmt.Errorf("userconfig: list system: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) { return scanRow(r) })
	if err != nil {
		return nil, fmt.Errorf("userconfig: list system: %w", err)
	}
	out := make([]Entry, 0, len(list))
	for _, r := range list {
		out = append(out, s.entry(nil, r))
	}
	return out, nil
}

// PutSystem stores a deployment-wide value (NULL owner, scope system); a secret
// key's value is sealed like a user's. Only admin routes call it.
func (s *Store) PutSystem(ctx context.Context, key string, value json.RawMessage) (Entry, error) {
	if err := ValidateKey(key); err != nil {
		return Entry{}, err
	}
	if !IsSystemKey(key) {
		return Entry{}, fmt.Errorf("%w: %s is not a deployment-wide key", ErrBadKey, key)
	}
	plain, sealed, keyID, err := s.seal(nil, key, value)
	if err != nil {
		return Entry{}, err
	}
	r, err := scanRow(s.pool.QueryRow(ctx, `
		INSERT INTO user_config (user_id, scope, key, value, encrypted_value, key_id)
		VALUES (NULL, 'system', $1, $2, $3, $4)
		ON CONFLICT (user_id, key) DO UPDATE
		   SET value = EXCLUDED.value, encrypted_value = EXCLUDED.encrypted_value,
		       key_id = EXCLUDED.key_id, updated_at = now()
		RETURNING `+rowColumns, key, plain, sealed, keyID))
	if err != nil {
		return Entry{}, fmt.Errorf("userconfig: put system: %w", err)
	}
	return s.entry(nil, r), nil
}

// SystemSecret returns the plaintext of a deployment-wide secret, for use in memory
// only (a call to a provider or the LLM gateway). It is never sent to a client.
func (s *Store) SystemSecret(ctx context.Context, key string) (string, error) {
	r, err := s.systemRow(ctx, key)
	if err != nil {
		return "", err
	}
	if r.sealed == nil {
		return "", fmt.Errorf("%w: %s is not a secret", ErrBadValue, key)
	}
	plain, err := s.keys.Open(r.sealed, deref(r.keyID), aad(nil, key))
	if err != nil {
		return "", err
	}
	return string(plain), nil
}

// SystemValue returns a deployment-wide plain value; ErrNotFound when unset.
func (s *Store) SystemValue(ctx context.Context, key string) (json.RawMessage, error) {
	r, err := s.systemRow(ctx, key)
	if err != nil {
		return nil, err
	}
	if r.sealed != nil {
		return nil, fmt.Errorf("%w: %s is a secret", ErrBadValue, key)
	}
	return r.value, nil
}

// DeleteSystem removes a deployment-wide value; ErrNotFound when unset.
func (s *Store) DeleteSystem(ctx context.Context, key string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM user_config WHERE user_id IS NULL AND scope = 'system' AND key = $1`, key)
	if err != nil {
		return fmt.Errorf("userconfig: delete system: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// systemRow reads one deployment-wide row; ErrNotFound when unset.
func (s *Store) systemRow(ctx context.Context, key string) (row, error) {
	r, err := scanRow(s.pool.QueryRow(ctx, `SELECT `+rowColumns+` FROM user_config
		WHERE user_id IS NULL AND scope = 'system' AND key = $1`, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return row{}, ErrNotFound
	}
	if err != nil {
		return row{}, fmt.Errorf("userconfig: system %s: %w", key, err)
	}
	return r, nil
}
