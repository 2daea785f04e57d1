package users

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RevokedCredentials counts what RevokeAllCredentials ended.
type RevokedCredentials struct {
	Sessions      int64
	SignInLinks   int64
	PairingTokens int64
}

// RevokeAllCredentials ends every session, sign-in link and messenger pairing
// token of every user at now, in one transaction. A restore calls it on the
// restored database: whoever held a credential when the backup was taken must
// sign in again (SPEC "One-click restore"). Durable chat pairings stay: they are
// data the restore brings back, not a credential a browser holds.
func RevokeAllCredentials(ctx context.Context, db interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}, now time.Time) (RevokedCredentials, error) {
	var out RevokedCredentials
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE user_sessions SET revoked_at = $1 WHERE revoked_at IS NULL`, now)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		out.Sessions = tag.RowsAffected()
		// A link is single use: marking it used makes ConsumeSignInToken refuse it.
		tag, err = tx.Exec(ctx, `UPDATE magic_link_tokens SET used_at = $1 WHERE used_at IS NULL`, now)
		if err != nil {
			return fmt.Errorf("sign-in links: %w", err)
		}
		out.SignInLinks = tag.RowsAffected()
		// An unconsumed pairing token is deleted, as issuing a new one does.
		tag, err = tx.Exec(ctx, `DELETE FROM messenger_pairing_tokens WHERE consumed_at IS NULL`)
		if err != nil {
			return fmt.Errorf("pairing tokens: %w", err)
		}
		out.PairingTokens = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return RevokedCredentials{}, fmt.Errorf("users: revoke all credentials: %w", err)
	}
	return out, nil
}
