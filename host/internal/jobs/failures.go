package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RecordedFailure is a job failure as system_events recorded it: the messenger
// bot reports these to the owner's chat.
type RecordedFailure struct {
	// EventID is the system_events row: it tells one alert from another.
	EventID int64
	UserID  uuid.UUID
	JobID   int64
	Kind    string
	Code    string
	At      time.Time
}

// RecentFailures lists the jobs of any user that failed for good at or after
// since, oldest first, at most limit of them. It reads across users: only the
// operator's alerts use it, and they name no user's data.
func RecentFailures(ctx context.Context, db querier, since time.Time, limit int) ([]RecordedFailure, error) {
	rows, err := db.Query(ctx, `
		SELECT id, user_id, coalesce((context->>'job_id')::bigint, 0), coalesce(context->>'kind', ''),
		       coalesce(context->>'error_code', ''), created_at
		  FROM system_events
		 WHERE category = 'job' AND level = 'error' AND user_id IS NOT NULL AND created_at >= $1
		 ORDER BY created_at, id LIMIT $2`, since, limit)
	if err != nil {
		return nil, fmt.Errorf("jobs: recent failures: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RecordedFailure, error) {
		var f RecordedFailure
		err := r.Scan(&f.EventID, &f.UserID, &f.JobID, &f.Kind, &f.Code, &f.At)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: recent failures: %w", err)
	}
	return out, nil
}
