package infraevents

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the only SQL on infra_events.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns the store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Insert stores a batch of normalized events in one transaction: all or none.
func (s *Store) Insert(ctx context.Context, events []Event) error {
	batch := &pgx.Batch{}
	for _, e := range events {
		batch.Queue(`INSERT INTO infra_events (source, level, message, context, occurred_at)
			VALUES ($1, $2, $3, $4::jsonb, $5)`, e.Source, e.Level, e.Message, string(e.Attrs), e.Time)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("infraevents: insert %d events: %w", len(events), err)
	}
	return nil
}

// Purge deletes the events received before cutoff and returns how many went.
func (s *Store) Purge(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM infra_events WHERE received_at < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("infraevents: purge: %w", err)
	}
	return tag.RowsAffected(), nil
}
