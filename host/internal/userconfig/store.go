// Package userconfig stores per-user configuration (user_config): plain values as
// JSONB, secret values sealed under SERVICE_CONFIG_KEY in encrypted_value and masked
// whenever they are read back (SPEC ownership rule 10), and re-sealed by the key
// rotation.
package userconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/secrets"
)

// Limits on what a user may store.
const (
	MaxValueBytes  = 16 << 10
	MaxSecretChars = 8192
)

var (
	// ErrNotFound means the caller has no value under the key.
	ErrNotFound = errors.New("userconfig: not found")
	// ErrBadKey means the key is not a dotted lowercase name.
	ErrBadKey = errors.New("userconfig: key must be dotted lowercase words, e.g. zotero.api_key")
	// ErrSystemKey means the key is deployment-wide, set by admins elsewhere.
	ErrSystemKey = errors.New("userconfig: this key is deployment-wide and set by an admin")
	// ErrBadValue means the value does not fit the key.
	ErrBadValue = errors.New("userconfig: invalid value")
)

var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$`)

// systemKeys are deployment-wide keys: stored with a NULL owner, written by admin
// routes, never through a user's settings.
var systemKeys = []string{"llm.", "messenger.bot_token", "messenger.owner_chat_id", "system.", "pulse.cron", "pulse.enabled",
	"zotero.instance_api_key", "zotero.instance_groups"}

// IsSystemKey reports whether key is deployment-wide.
func IsSystemKey(key string) bool {
	for _, p := range systemKeys {
		if key == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(key, p)) {
			return true
		}
	}
	return false
}

var secretNames = map[string]bool{
	"api_key": true, "password": true, "secret": true, "token": true, "access_token": true,
	"refresh_token": true, "bot_token": true, "client_secret": true, "private_key": true,
}

// IsSecretKey reports whether values under key are credentials, stored encrypted
// and never shown in full again: the last dotted part is api_key, password, secret,
// token (and the like), or ends in _api_key, _password, _secret or _token.
func IsSecretKey(key string) bool {
	last := key[strings.LastIndexByte(key, '.')+1:]
	if secretNames[last] {
		return true
	}
	for _, suffix := range []string{"_api_key", "_password", "_secret", "_token"} {
		if strings.HasSuffix(last, suffix) {
			return true
		}
	}
	return false
}

// ValidateKey checks a key's form.
func ValidateKey(key string) error {
	if len(key) > 200 || !keyPattern.MatchString(key) {
		return ErrBadKey
	}
	return nil
}

// Entry is a stored value as the owner may see it. A secret shows only Masked.
type Entry struct {
	Key       string          `json:"key"`
	Secret    bool            `json:"secret"`
	Value     json.RawMessage `json:"value,omitempty"`
	Masked    string          `json:"masked,omitempty"`
	Readable  bool            `json:"readable"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Store reads and writes user_config.
type Store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
}

// New returns a Store sealing secrets with keys.
func New(pool *pgxpool.Pool, keys *secrets.Keyring) *Store {
	return &Store{pool: pool, keys: keys}
}

// aad binds a sealed value to its row.
func aad(owner *uuid.UUID, key string) []byte {
	o := "system"
	if owner != nil {
		o = owner.String()
	}
	return []byte("user_config|" + o + "|" + key)
}

// mask shows at most the last four characters of a long secret.
func mask(s string) string {
	if len(s) < 12 {
		return "••••"
	}
	return "••••" + s[len(s)-4:]
}

type row struct {
	key     string
	value   []byte
	sealed  []byte
	keyID   *string
	updated time.Time
}

func (s *Store) entry(owner *uuid.UUID, r row) Entry {
	e := Entry{Key: r.key, UpdatedAt: r.updated, Readable: true}
	if r.sealed == nil {
		e.Value = r.value
		return e
	}
	e.Secret = true
	plain, err := s.keys.Open(r.sealed, deref(r.keyID), aad(owner, r.key))
	if err != nil {
		e.Readable, e.Masked = false, "(sealed under a key this host does not have)"
		return e
	}
	e.Masked = mask(string(plain))
	return e
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

const rowColumns = `key, value, encrypted_value, key_id, updated_at`

func scanRow(r pgx.Row) (row, error) {
	var out row
	err := r.Scan(&out.key, &out.value, &out.sealed, &out.keyID, &out.updated)
	return out, err
}

// List returns every value the user stored, secrets masked.
func (s *Store) List(ctx context.Context, userID uuid.UUID) ([]Entry, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+rowColumns+` FROM user_config WHERE user_id = $1 ORDER BY key`, userID)
	if err != nil {
		return nil, fmt.Errorf("userconfig: list: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) { return scanRow(r) })
	if err != nil {
		return nil, fmt.Errorf("userconfig: list: %w", err)
	}
	out := make([]Entry, 0, len(list))
	for _, r := range list {
		out = append(out, s.entry(&userID, r))
	}
	return out, nil
}

// Get returns one of the user's values, a secret masked.
func (s *Store) Get(ctx context.Context, userID uuid.UUID, key string) (Entry, error) {
	r, err := scanRow(s.pool.QueryRow(ctx, `SELECT `+rowColumns+` FROM user_config WHERE user_id = $1 AND key = $2`, userID, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("userconfig: get: %w", err)
	}
	return s.entry(&userID, r), nil
}

// Put stores value under key for the user; a secret key's value (a JSON string) is
// sealed and only its mask is returned.
func (s *Store) Put(ctx context.Context, userID uuid.UUID, key string, value json.RawMessage) (Entry, error) {
	if err := ValidateKey(key); err != nil {
		return Entry{}, err
	}
	if IsSystemKey(key) {
		return Entry{}, ErrSystemKey
	}
	plainCol, sealedCol, keyID, err := s.seal(&userID, key, value)
	if err != nil {
		return Entry{}, err
	}
	r, err := scanRow(s.pool.QueryRow(ctx, `
		INSERT INTO user_config (user_id, scope, key, value, encrypted_value, key_id)
		VALUES ($1, 'user', $2, $3, $4, $5)
		ON CONFLICT (user_id, key) DO UPDATE
		   SET value = EXCLUDED.value, encrypted_value = EXCLUDED.encrypted_value,
		       key_id = EXCLUDED.key_id, updated_at = now()
		RETURNING `+rowColumns, userID, key, plainCol, sealedCol, keyID))
	if err != nil {
		return Entry{}, fmt.Errorf("userconfig: put: %w", err)
	}
	return s.entry(&userID, r), nil
}

// seal checks value and returns the columns to store: the plain JSON, or for a
// secret key the sealed string and the sealing key's id.
func (s *Store) seal(owner *uuid.UUID, key string, value json.RawMessage) (plain, sealed, keyID any, err error) {
	if len(value) == 0 || len(value) > MaxValueBytes || !json.Valid(value) {
		return nil, nil, nil, fmt.Errorf("%w: must be JSON of at most %d bytes", ErrBadValue, MaxValueBytes)
	}
	if !IsSecretKey(key) {
		return []byte(value), nil, nil, nil
	}
	var secret string
	if err := json.Unmarshal(value, &secret); err != nil || secret == "" || len([]rune(secret)) > MaxSecretChars {
		return nil, nil, nil, fmt.Errorf("%w: a secret must be a non-empty string of at most %d characters", ErrBadValue, MaxSecretChars)
	}
	b, id, err := s.keys.Seal([]byte(secret), aad(owner, key))
	if err != nil {
		return nil, nil, nil, err
	}
	return nil, b, id, nil
}

// Delete removes the user's value under key.
func (s *Store) Delete(ctx context.Context, userID uuid.UUID, key string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM user_config WHERE user_id = $1 AND key = $2`, userID, key)
	if err != nil {
		return fmt.Errorf("userconfig: delete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// Secret returns the plaintext of the user's secret under key, for use in memory
// only (a call to a plugin). It is never sent to a client.
func (s *Store) Secret(ctx context.Context, userID uuid.UUID, key string) (string, error) {
	r, err := scanRow(s.pool.QueryRow(ctx, `SELECT `+rowColumns+` FROM user_config WHERE user_id = $1 AND key = $2`, userID, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("userconfig: secret: %w", err)
	}
	if r.sealed == nil {
		return "", fmt.Errorf("%w: %s is not a secret", ErrBadValue, key)
	}
	plain, err := s.keys.Open(r.sealed, deref(r.keyID), aad(&userID, key))
	if err != nil {
		return "", err
	}
	return string(plain), nil
}

// RotationReport counts what a key rotation finds and does.
type RotationReport struct {
	Current    int  // already sealed under SERVICE_CONFIG_KEY
	Resealed   int  // moved from SERVICE_CONFIG_KEY_OLD to SERVICE_CONFIG_KEY
	Unreadable int  // sealed under neither key, or failing to open: left as they are
	Applied    bool // false for a dry run
}

// Rotate re-seals every secret sealed under SERVICE_CONFIG_KEY_OLD with
// SERVICE_CONFIG_KEY. With apply false it only counts (a dry run). It runs in one
// transaction, so a failure leaves every value as it was.
func (s *Store) Rotate(ctx context.Context, apply bool) (RotationReport, error) {
	if s.keys.KeyID() == "" {
		return RotationReport{}, secrets.ErrNoKey
	}
	rep := RotationReport{Applied: apply}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT id, user_id, key, encrypted_value, key_id FROM user_config
			 WHERE encrypted_value IS NOT NULL FOR UPDATE`)
		if err != nil {
			return err
		}
		type sealedRow struct {
			id     uuid.UUID
			owner  *uuid.UUID
			key    string
			sealed []byte
			keyID  string
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealedRow, error) {
			var sr sealedRow
			err := r.Scan(&sr.id, &sr.owner, &sr.key, &sr.sealed, &sr.keyID)
			return sr, err
		})
		if err != nil {
			return err
		}
		for _, sr := range list {
			if sr.keyID == s.keys.KeyID() {
				rep.Current++
				continue
			}
			plain, err := s.keys.Open(sr.sealed, sr.keyID, aad(sr.owner, sr.key))
			if err != nil {
				rep.Unreadable++
				continue
			}
			rep.Resealed++
			if !apply {
				continue
			}
			sealed, id, err := s.keys.Seal(plain, aad(sr.owner, sr.key))
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE user_config SET encrypted_value = $2, key_id = $3, updated_at = now() WHERE id = $1`,
				sr.id, sealed, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return RotationReport{}, fmt.Errorf("userconfig: rotate: %w", err)
	}
	return rep, nil
}

// UsersWithKey returns the users who have a value under key (a scheduler's list
// of who set up an integration).
func (s *Store) UsersWithKey(ctx context.Context, key string) (map[uuid.UUID]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT user_id FROM user_config WHERE key = $1 AND user_id IS NOT NULL`, key)
	if err != nil {
		return nil, fmt.Errorf("userconfig: users with %s: %w", key, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("userconfig: users with %s: %w", key, err)
	}
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
