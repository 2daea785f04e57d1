package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// delivery is the idempotency key of one scheduled message: per user, kind and
// the user's local date (and ref, to tell apart several of one kind that day).
type delivery struct {
	user uuid.UUID
	kind string
	date string // YYYY-MM-DD in the user's time zone
	ref  string
	chat string
}

// ledger is the bot's record of scheduled deliveries (messenger_deliveries).
type ledger struct{ pool *pgxpool.Pool }

// claim takes d for this run; false when it was claimed before (sent, or being
// sent, or judged to have nothing to say): then nothing is to be sent.
func (l ledger) claim(ctx context.Context, d delivery, now time.Time) (bool, error) {
	tag, err := l.pool.Exec(ctx, `
		INSERT INTO messenger_deliveries (user_id, kind, local_date, ref, chat_id, claimed_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT DO NOTHING`, d.user, d.kind, d.date, d.ref, d.chat, now)
	if err != nil {
		return false, fmt.Errorf("bot: claim %s delivery: %w", d.kind, err)
	}
	return tag.RowsAffected() == 1, nil
}

// claimedSince is the set of deliveries claimed at or after since, keyed
// without their chat.
func (l ledger) claimedSince(ctx context.Context, since time.Time) (map[delivery]bool, error) {
	rows, err := l.pool.Query(ctx, `SELECT user_id, kind, local_date::text, ref FROM messenger_deliveries WHERE claimed_at >= $1`, since)
	if err != nil {
		return nil, fmt.Errorf("bot: read the deliveries: %w", err)
	}
	defer rows.Close()
	out := map[delivery]bool{}
	for rows.Next() {
		var d delivery
		if err := rows.Scan(&d.user, &d.kind, &d.date, &d.ref); err != nil {
			return nil, fmt.Errorf("bot: read the deliveries: %w", err)
		}
		out[d] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bot: read the deliveries: %w", err)
	}
	return out, nil
}

// sent marks d delivered: the messenger confirmed messageID ("" when there was
// nothing to say that day, which also counts as done).
func (l ledger) sent(ctx context.Context, d delivery, messageID string, now time.Time) error {
	var id *string
	if messageID != "" {
		id = &messageID
	}
	_, err := l.pool.Exec(ctx, `
		UPDATE messenger_deliveries SET sent_at = $6, message_id = $5
		 WHERE user_id = $1 AND kind = $2 AND local_date = $3 AND ref = $4`, d.user, d.kind, d.date, d.ref, id, now)
	if err != nil {
		return fmt.Errorf("bot: mark %s delivery sent: %w", d.kind, err)
	}
	return nil
}

// release gives a claim back after a failed attempt, so a later tick tries
// again.
func (l ledger) release(ctx context.Context, d delivery) error {
	_, err := l.pool.Exec(ctx, `
		DELETE FROM messenger_deliveries WHERE user_id = $1 AND kind = $2 AND local_date = $3 AND ref = $4 AND sent_at IS NULL`,
		d.user, d.kind, d.date, d.ref)
	if err != nil {
		return fmt.Errorf("bot: release %s delivery: %w", d.kind, err)
	}
	return nil
}

// prune forgets deliveries older than keep: their dates cannot come again.
func (l ledger) prune(ctx context.Context, before time.Time) error {
	if _, err := l.pool.Exec(ctx, `DELETE FROM messenger_deliveries WHERE claimed_at < $1`, before); err != nil {
		return fmt.Errorf("bot: prune deliveries: %w", err)
	}
	return nil
}
