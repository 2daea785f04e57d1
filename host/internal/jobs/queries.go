package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lectern-research/lectern/host/internal/users"
)

// The SQL of the envelope layer. River's own tables are read through River's
// client; these queries touch only job_progress and system_events.

// progressChannel is the LISTEN/NOTIFY channel of new job_progress rows; the
// trigger of migration 0004 sends "<job_id>:<seq>" on it.
const progressChannel = "lectern_job_progress"

// querier is what the queries need: a pool, a connection or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertProgressBatch appends one event to each job of batch, numbering it after
// the job's last event. A batch holds at most one event per job (the writer sees
// to it), so max(seq)+1 never collides.
func insertProgressBatch(ctx context.Context, db querier, batch []*progressReq) error {
	n := len(batch)
	jobIDs, currents := make([]int64, n), make([]int64, n)
	totals, messages, datas := make([]*int64, n), make([]*string, n), make([][]byte, n)
	for i, r := range batch {
		jobIDs[i], currents[i] = r.jobID, r.p.Current
		if r.p.Total > 0 {
			totals[i] = &r.p.Total
		}
		if r.p.Message != "" {
			messages[i] = &r.p.Message
		}
		if len(r.p.Data) > 0 {
			datas[i] = r.p.Data
		}
	}
	_, err := db.Exec(ctx, `
		INSERT INTO job_progress (job_id, seq, current, total, message, data)
		SELECT e.job_id,
		       coalesce((SELECT max(p.seq) FROM job_progress AS p WHERE p.job_id = e.job_id), 0) + 1,
		       e.current, e.total, e.message, e.data
		  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::jsonb[])
		       AS e(job_id, current, total, message, data)`,
		jobIDs, currents, totals, messages, datas)
	if err != nil {
		return fmt.Errorf("jobs: report progress: %w", err)
	}
	return nil
}

const progressColumns = `seq, coalesce(current, 0), coalesce(total, 0), coalesce(message, ''), data, created_at`

func scanProgress(row pgx.CollectableRow) (ProgressEvent, error) {
	var ev ProgressEvent
	var data []byte
	err := row.Scan(&ev.Seq, &ev.Current, &ev.Total, &ev.Message, &data, &ev.At)
	if len(data) > 0 {
		ev.Data = json.RawMessage(data)
	}
	return ev, err
}

// progressSince returns up to limit events of the job after seq, in order.
func progressSince(ctx context.Context, db querier, jobID, after int64, limit int) ([]ProgressEvent, error) {
	rows, err := db.Query(ctx, `SELECT `+progressColumns+`
		  FROM job_progress WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, jobID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("jobs: read progress of job %d: %w", jobID, err)
	}
	evs, err := pgx.CollectRows(rows, scanProgress)
	if err != nil {
		return nil, fmt.Errorf("jobs: read progress of job %d: %w", jobID, err)
	}
	return evs, nil
}

// latestProgress returns the newest event of each of the jobs that has one.
func latestProgress(ctx context.Context, db querier, jobIDs []int64) (map[int64]ProgressEvent, error) {
	out := make(map[int64]ProgressEvent, len(jobIDs))
	if len(jobIDs) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `
		SELECT p.job_id, `+progressColumns+`
		  FROM unnest($1::bigint[]) AS j(id)
		  CROSS JOIN LATERAL (
		        SELECT * FROM job_progress WHERE job_id = j.id ORDER BY seq DESC LIMIT 1) AS p`, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("jobs: read latest progress: %w", err)
	}
	_, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
		var id int64
		var ev ProgressEvent
		var data []byte
		if err := row.Scan(&id, &ev.Seq, &ev.Current, &ev.Total, &ev.Message, &data, &ev.At); err != nil {
			return struct{}{}, err
		}
		if len(data) > 0 {
			ev.Data = json.RawMessage(data)
		}
		out[id] = ev
		return struct{}{}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: read latest progress: %w", err)
	}
	return out, nil
}

// insertFailureEvent writes the owner-visible record of a job that failed for good.
func insertFailureEvent(ctx context.Context, db querier, ev FailureEvent) error {
	ctxJSON, err := json.Marshal(map[string]any{
		"job_id": ev.JobID, "kind": ev.Kind, "attempt": ev.Attempt, "error_code": ev.Error.Code,
	})
	if err != nil {
		return fmt.Errorf("jobs: encode failure context: %w", err)
	}
	message := truncate(fmt.Sprintf("Job %d (%s) failed: %s", ev.JobID, ev.Kind, ev.Error.Message), 4000)
	_, err = db.Exec(ctx, `
		INSERT INTO system_events (user_id, level, category, source, message, context, created_at)
		VALUES ($1, 'error', 'job', 'jobs', $2, $3, $4)`,
		ev.UserID, message, ctxJSON, ev.At)
	if err != nil {
		return fmt.Errorf("jobs: write system event: %w", err)
	}
	return nil
}

// userZone is a live user and the timezone their deliveries follow.
type userZone struct {
	ID       uuid.UUID
	Timezone string
}

// liveUsers lists every user that is not deleted, with their timezone; package
// users owns the table.
func liveUsers(ctx context.Context, db querier) ([]userZone, error) {
	live, err := users.ListLive(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("jobs: list users: %w", err)
	}
	out := make([]userZone, len(live))
	for i, u := range live {
		out[i] = userZone{ID: u.ID, Timezone: u.Timezone}
	}
	return out, nil
}

// pruneProgress deletes the progress of jobs River no longer keeps, once they are
// older than grace (so a job inserted in a transaction not yet visible keeps its
// events).
func pruneProgress(ctx context.Context, db querier, grace time.Duration) (int64, error) {
	tag, err := db.Exec(ctx, `
		DELETE FROM job_progress AS p
		 WHERE p.created_at < now() - make_interval(secs => $1)
		   AND NOT EXISTS (SELECT 1 FROM river_job AS j WHERE j.id = p.job_id)`, grace.Seconds())
	if err != nil {
		return 0, fmt.Errorf("jobs: prune progress: %w", err)
	}
	return tag.RowsAffected(), nil
}

// notifyStates announces on progressChannel that the jobs' states changed, as
// "<job_id>:state", so that the streams of every host wake (a stream reads what
// changed from the database; the payload only names the job).
func notifyStates(ctx context.Context, db querier, ids []int64) error {
	_, err := db.Exec(ctx, `SELECT pg_notify($1, id::text || ':state') FROM unnest($2::bigint[]) AS id`, progressChannel, ids)
	if err != nil {
		return fmt.Errorf("jobs: announce job states: %w", err)
	}
	return nil
}
