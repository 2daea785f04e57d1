package users

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PairingTokenTTL is how long a pairing token issued in Settings → Integrations
// may be used (SPEC "Pairing": short-lived).
const PairingTokenTTL = 15 * time.Minute

// MaxPairingTokenLen bounds what /pair accepts before it is hashed.
const MaxPairingTokenLen = 256

// Outcome is what consuming a pairing token came to (REFERENCE §7).
type Outcome string

// Outcomes of Pair.
const (
	// OutcomeInvalid: no such token.
	OutcomeInvalid Outcome = "invalid"
	// OutcomeUsed: the token was consumed before.
	OutcomeUsed Outcome = "used"
	// OutcomeExpired: the token is past its 15 minutes (and is deleted now).
	OutcomeExpired Outcome = "expired"
	// OutcomePaired: the chat now belongs to the token's user.
	OutcomePaired Outcome = "paired"
)

// ErrChatTaken refuses pairing a chat that another user has paired; the token
// stays unused, so its owner can pair another chat with it.
var ErrChatTaken = errors.New("users: the chat is paired with another account")

// Pairing is a chat paired with a live user, with what the bot needs to act for
// them and to schedule their deliveries.
type Pairing struct {
	UserID            uuid.UUID `json:"-"`
	ChatID            string    `json:"chat_id"`
	MessengerUsername string    `json:"messenger_username,omitempty"`
	PairedAt          time.Time `json:"paired_at"`
	// Timezone is the user's IANA zone (users.timezone).
	Timezone string `json:"-"`
}

// PairResult says how a /pair ended. PriorChatID is the chat the user was paired
// with before, when re-pairing moved them (the bot tells that chat).
type PairResult struct {
	Outcome     Outcome
	UserID      uuid.UUID
	PriorChatID string
}

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func hashPairingToken(token string) []byte {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return sum[:]
}

// IssuePairingToken makes a new pairing token for the user, valid for
// PairingTokenTTL from now, and replaces any token they had outstanding: only the
// latest one shown in Settings works. Only its hash is stored; the token itself
// is returned once.
func IssuePairingToken(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID, now time.Time) (string, time.Time, error) {
	raw := make([]byte, 15)
	if _, err := rand.Read(raw); err != nil {
		return "", time.Time{}, fmt.Errorf("users: pairing token: %w", err)
	}
	token := tokenEncoding.EncodeToString(raw)
	expires := now.Add(PairingTokenTTL)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := LiveByID(ctx, tx, userID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM messenger_pairing_tokens WHERE user_id = $1 AND consumed_at IS NULL`, userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO messenger_pairing_tokens (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			hashPairingToken(token), userID, now, expires)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return "", time.Time{}, err
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("users: pairing token: %w", err)
	}
	return token, expires, nil
}

// Pair consumes token once, under a row lock, and pairs chatID with the token's
// user: the outcome is invalid, used, expired (the row is deleted) or paired. A
// user already paired elsewhere moves to chatID (PriorChatID names the old chat).
// A chat paired with another user is refused with ErrChatTaken and the token
// stays unused.
func Pair(ctx context.Context, pool *pgxpool.Pool, token, chatID, username string, now time.Time) (PairResult, error) {
	var res PairResult
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		res, err = pairTx(ctx, tx, hashPairingToken(token), chatID, username, now)
		return err
	})
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505":
		// A concurrent /pair took the chat between our check and our write.
		return PairResult{}, ErrChatTaken
	case errors.Is(err, ErrChatTaken):
		return PairResult{}, err
	case err != nil:
		return PairResult{}, fmt.Errorf("users: pair: %w", err)
	}
	return res, nil
}

func pairTx(ctx context.Context, tx pgx.Tx, hash []byte, chatID, username string, now time.Time) (PairResult, error) {
	var (
		userID   uuid.UUID
		expires  time.Time
		consumed *time.Time
	)
	err := tx.QueryRow(ctx, `
		SELECT t.user_id, t.expires_at, t.consumed_at FROM messenger_pairing_tokens t
		  JOIN users u ON u.id = t.user_id AND u.deleted_at IS NULL
		 WHERE t.token_hash = $1 FOR UPDATE OF t`, hash).Scan(&userID, &expires, &consumed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return PairResult{Outcome: OutcomeInvalid}, nil
	case err != nil:
		return PairResult{}, err
	case consumed != nil:
		return PairResult{Outcome: OutcomeUsed}, nil
	case !now.Before(expires):
		_, err := tx.Exec(ctx, `DELETE FROM messenger_pairing_tokens WHERE token_hash = $1`, hash)
		return PairResult{Outcome: OutcomeExpired}, err
	}
	var owner uuid.UUID
	err = tx.QueryRow(ctx, `SELECT user_id FROM messenger_user_pairings WHERE chat_id = $1 FOR UPDATE`, chatID).Scan(&owner)
	if err == nil && owner != userID {
		return PairResult{}, ErrChatTaken
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return PairResult{}, err
	}
	res := PairResult{Outcome: OutcomePaired, UserID: userID}
	err = tx.QueryRow(ctx, `SELECT chat_id FROM messenger_user_pairings WHERE user_id = $1 FOR UPDATE`, userID).Scan(&res.PriorChatID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return PairResult{}, err
	}
	if res.PriorChatID == chatID {
		res.PriorChatID = ""
	}
	var name *string
	if username != "" {
		name = &username
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO messenger_user_pairings (user_id, chat_id, messenger_username, paired_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id) DO UPDATE SET chat_id = EXCLUDED.chat_id, messenger_username = EXCLUDED.messenger_username, paired_at = EXCLUDED.paired_at`,
		userID, chatID, name, now); err != nil {
		return PairResult{}, err
	}
	_, err = tx.Exec(ctx, `UPDATE messenger_pairing_tokens SET consumed_at = $2 WHERE token_hash = $1`, hash, now)
	return res, err
}

// Unpair removes the user's pairing and every pairing token they have
// outstanding. It is idempotent: the chat it removed, or "" when there was none.
func Unpair(ctx context.Context, pool *pgxpool.Pool, userID uuid.UUID) (string, error) {
	var chatID string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM messenger_pairing_tokens WHERE user_id = $1`, userID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `DELETE FROM messenger_user_pairings WHERE user_id = $1 RETURNING chat_id`, userID).Scan(&chatID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("users: unpair: %w", err)
	}
	return chatID, nil
}

const pairingColumns = `p.user_id, p.chat_id, coalesce(p.messenger_username, ''), p.paired_at, u.timezone`

func scanPairing(row pgx.Row) (Pairing, error) {
	var p Pairing
	err := row.Scan(&p.UserID, &p.ChatID, &p.MessengerUsername, &p.PairedAt, &p.Timezone)
	if errors.Is(err, pgx.ErrNoRows) {
		return Pairing{}, ErrNotFound
	}
	return p, err
}

// PairingByChat is the live user paired with chatID; ErrNotFound when the chat
// is unpaired (or its user was deleted).
func PairingByChat(ctx context.Context, q Querier, chatID string) (Pairing, error) {
	p, err := scanPairing(q.QueryRow(ctx, `SELECT `+pairingColumns+` FROM messenger_user_pairings p
		JOIN users u ON u.id = p.user_id AND u.deleted_at IS NULL WHERE p.chat_id = $1`, chatID))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Pairing{}, fmt.Errorf("users: pairing of chat: %w", err)
	}
	return p, err
}

// PairingOf is the user's pairing; ErrNotFound when they have none.
func PairingOf(ctx context.Context, q Querier, userID uuid.UUID) (Pairing, error) {
	p, err := scanPairing(q.QueryRow(ctx, `SELECT `+pairingColumns+` FROM messenger_user_pairings p
		JOIN users u ON u.id = p.user_id AND u.deleted_at IS NULL WHERE p.user_id = $1`, userID))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Pairing{}, fmt.Errorf("users: pairing: %w", err)
	}
	return p, err
}

// Pairings lists every live user's pairing, oldest first: the users the
// scheduler delivers to.
func Pairings(ctx context.Context, q Querier) ([]Pairing, error) {
	rows, err := q.Query(ctx, `SELECT `+pairingColumns+` FROM messenger_user_pairings p
		JOIN users u ON u.id = p.user_id AND u.deleted_at IS NULL ORDER BY p.paired_at, p.user_id`)
	if err != nil {
		return nil, fmt.Errorf("users: pairings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Pairing, error) { return scanPairing(r) })
	if err != nil {
		return nil, fmt.Errorf("users: pairings: %w", err)
	}
	return out, nil
}

// PairingTokenExpiry is when the user's outstanding (unused, unexpired) pairing
// token expires; nil when they have none.
func PairingTokenExpiry(ctx context.Context, q Querier, userID uuid.UUID, now time.Time) (*time.Time, error) {
	var t *time.Time
	err := q.QueryRow(ctx, `SELECT max(expires_at) FROM messenger_pairing_tokens
		WHERE user_id = $1 AND consumed_at IS NULL AND expires_at > $2`, userID, now).Scan(&t)
	if err != nil {
		return nil, fmt.Errorf("users: pairing token: %w", err)
	}
	return t, nil
}
