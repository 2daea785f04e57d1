package userconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is a pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The functions below read and write a user's plain (never secret) values for other
// areas that keep their settings in user_config, such as the fitted FSRS parameters.
// They need no keyring, and run on a pool, in the caller's transaction or in the
// caller's batch.

// PlainValue returns the user's plain value under key; ErrNotFound when unset. A
// secret key has no plain value: its value reads as null.
func PlainValue(ctx context.Context, q Querier, userID uuid.UUID, key string) (json.RawMessage, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT value::text FROM user_config WHERE user_id = $1 AND key = $2`, userID, key).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("userconfig: plain value: %w", err)
	}
	return raw, nil
}

// QueuePlainValue queues on b the read of the user's plain value under key. When
// the batch runs, *dst holds the value, or nil when the user has none; an unset key
// is not an error here, so one missing setting does not fail the whole batch.
func QueuePlainValue(b *pgx.Batch, userID uuid.UUID, key string, dst *json.RawMessage) {
	b.Queue(`SELECT (SELECT value::text FROM user_config WHERE user_id = $1 AND key = $2)`, userID, key).
		QueryRow(func(row pgx.Row) error {
			var raw []byte
			if err := row.Scan(&raw); err != nil {
				return fmt.Errorf("userconfig: plain value: %w", err)
			}
			*dst = raw
			return nil
		})
}

// PutPlainValue stores value under key for the user, replacing what was there. The
// caller owns the key and its format: no key or secret checks apply.
func PutPlainValue(ctx context.Context, q Querier, userID uuid.UUID, key string, value json.RawMessage) error {
	if _, err := q.Exec(ctx, `
		INSERT INTO user_config (user_id, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
		userID, key, []byte(value)); err != nil {
		return fmt.Errorf("userconfig: put plain value: %w", err)
	}
	return nil
}

// PlainValuesOf returns every user's plain value under key, by user: what a
// schedule reads once for all users (their chosen hour, say). Users without a
// value are absent.
func PlainValuesOf(ctx context.Context, pool interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, key string) (map[uuid.UUID]json.RawMessage, error) {
	rows, err := pool.Query(ctx, `SELECT user_id, value::text FROM user_config WHERE key = $1 AND user_id IS NOT NULL AND value IS NOT NULL`, key)
	if err != nil {
		return nil, fmt.Errorf("userconfig: plain values: %w", err)
	}
	defer rows.Close()
	out := map[uuid.UUID]json.RawMessage{}
	for rows.Next() {
		var id uuid.UUID
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("userconfig: plain values: %w", err)
		}
		out[id] = raw
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("userconfig: plain values: %w", err)
	}
	return out, nil
}
