package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A job whose process died (killed with -9, the machine lost) stays "running" in
// River's table: River's own rescuer gives it back only an hour after its timeout.
// A paper whose ingest.pdf job was in flight would read "Lectern is reading it" for
// that long. The liveness lock rescues such a job as soon as any Lectern process
// notices, without ever taking a job from a process that is still working on it,
// on one host or several sharing the database:
//
//   - Every Service runs River under a client ID of its own (instanceID), and holds
//     a session advisory lock keyed by that ID on a connection of its own for as
//     long as it runs (holdLiveness). It takes the lock before River fetches a job,
//     so no job is attempted by an ID whose lock was never held.
//   - PostgreSQL drops a session's locks when the session ends, which it does when
//     the process exits or is killed (the kernel closes its socket).
//   - At start, and every Config.RescueInterval, rescueAbandoned looks at the
//     running jobs attempted by another ID: when the lock of that ID can be taken,
//     no process holds it, so its jobs were abandoned, and each goes back to the
//     queue for its next attempt at once (retryable, or discarded after its last
//     attempt, as River's rescuer does).
//
// The one window: when PostgreSQL itself restarts, every lock is dropped until
// each live process has reconnected and taken its lock again (within
// livenessRetry). A rescue by another process inside that window can run a job a
// second time; River runs every job at least once (a retry runs it again), so
// jobs are written to be run again, and that costs work, not data.

// DefaultRescueInterval is how often a running Service looks for jobs abandoned by
// a dead process.
const DefaultRescueInterval = time.Minute

// maxRescues is how many times a job may be given back without its abandoned
// attempt counting against it.
const maxRescues = 3

// livenessRetry is how soon a Service whose liveness connection broke tries again.
const livenessRetry = time.Second

// livenessClass is the first key of the liveness locks (two-key advisory locks,
// apart from the one-key locks the rest of the host takes).
const livenessClass = "lectern.jobs.instance"

// abandonedError is the error a rescued job's attempt records; its owner reads it
// in the job's envelope while the job waits for its next attempt.
const abandonedError = "The process running this job stopped (it was killed, or lost its database); the job was given back to the queue."

// newInstanceID is a River client ID unique to this process: the host name for
// people reading River's tables, and random bits so that a restarted process on
// the same host is a new instance.
func newInstanceID() string {
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, host)
	if len(host) > 60 {
		host = host[:60]
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "lectern_" + host + "_" + hex.EncodeToString(b)
}

// liveness holds this Service's liveness lock on a connection of its own.
type liveness struct {
	rt   *runtime
	id   string
	conn *pgx.Conn // nil while not held
}

// acquire connects and takes the lock. The lock is free: no other process uses
// this ID.
func (l *liveness) acquire(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.rt.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("jobs: liveness: connect: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1), hashtext($2))`, livenessClass, l.id); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("jobs: liveness: lock: %w", err)
	}
	l.conn = conn
	return nil
}

// hold keeps the lock until ctx ends: it checks the connection every
// livenessRetry and, when it broke (PostgreSQL restarted), connects and locks again.
func (l *liveness) hold(ctx context.Context) {
	t := time.NewTicker(livenessRetry)
	defer t.Stop()
	defer func() {
		if l.conn != nil {
			_ = l.conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if l.conn != nil {
			if err := l.conn.Ping(ctx); err == nil {
				continue
			}
			_ = l.conn.Close(ctx)
			l.conn = nil
		}
		if err := l.acquire(ctx); err != nil {
			if ctx.Err() == nil {
				l.rt.log.Warn("jobs: the liveness lock is not held; trying again", "error", err)
			}
			continue
		}
		l.rt.log.Info("jobs: liveness lock taken again after the database connection broke", "instance", l.id)
	}
}

// rescueLoop rescues abandoned jobs now and every interval until ctx ends.
func (rt *runtime) rescueLoop(ctx context.Context, own string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := rt.rescueAbandoned(ctx, own)
		switch {
		case err != nil && ctx.Err() == nil:
			rt.log.Warn("jobs: look for jobs abandoned by a stopped process", "error", err)
		case n > 0:
			rt.log.Info("jobs: gave back jobs a stopped process had abandoned", "jobs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rescueAbandoned gives back to the queue every running job attempted by a client
// other than own whose liveness lock no session holds, and returns how many.
func (rt *runtime) rescueAbandoned(ctx context.Context, own string) (int64, error) {
	rows, err := rt.pool.Query(ctx, `
		SELECT DISTINCT attempted_by[cardinality(attempted_by)] FROM river_job
		 WHERE state = 'running' AND cardinality(attempted_by) > 0
		   AND attempted_by[cardinality(attempted_by)] <> $1`, own)
	if err != nil {
		return 0, fmt.Errorf("jobs: rescue: list running jobs: %w", err)
	}
	clients, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("jobs: rescue: list running jobs: %w", err)
	}
	var total int64
	for _, client := range clients {
		dead, err := rt.lockFree(ctx, client)
		if err != nil {
			return total, err
		}
		if !dead {
			continue
		}
		n, err := rt.giveBack(ctx, client)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// lockFree reports whether no session holds client's liveness lock: it takes the
// lock and at once lets it go.
func (rt *runtime) lockFree(ctx context.Context, client string) (bool, error) {
	conn, err := rt.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("jobs: rescue: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))`, livenessClass, client).Scan(&got); err != nil {
		return false, fmt.Errorf("jobs: rescue: check %s: %w", client, err)
	}
	if got {
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, livenessClass, client); err != nil {
			// A lock left on a pooled session would make client look alive forever.
			conn.Conn().PgConn().Close(context.WithoutCancel(ctx)) //nolint:errcheck
			return false, fmt.Errorf("jobs: rescue: release the check of %s: %w", client, err)
		}
	}
	return got, nil
}

// giveBack moves the running jobs of a dead client to their next attempt, now.
// The attempt the process died in is not the job's failure, so it does not count
// (max_attempts grows by one) for the first maxRescues rescues of a job; after
// that it counts like any failure, so a job that kills its process every time
// ends. A job whose cancel was asked for is cancelled. River's scheduler makes a
// retryable job available.
func (rt *runtime) giveBack(ctx context.Context, client string) (int64, error) {
	tag, err := rt.pool.Exec(ctx, `
		WITH rescue AS (
		    SELECT id, coalesce((metadata->>'lectern:rescues')::int, 0) < $3 AS free,
		           metadata ? 'cancel_attempted_at' AS cancel
		      FROM river_job
		     WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = $1
		       FOR UPDATE)
		UPDATE river_job AS j SET
		    max_attempts = CASE WHEN r.free THEN greatest(j.max_attempts, j.attempt + 1) ELSE j.max_attempts END,
		    state = (CASE WHEN r.cancel THEN 'cancelled'
		                  WHEN NOT r.free AND j.attempt >= j.max_attempts THEN 'discarded'
		                  ELSE 'retryable' END)::river_job_state,
		    finalized_at = CASE WHEN r.cancel OR (NOT r.free AND j.attempt >= j.max_attempts) THEN now() END,
		    scheduled_at = CASE WHEN r.cancel OR (NOT r.free AND j.attempt >= j.max_attempts) THEN j.scheduled_at ELSE now() END,
		    errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', greatest(j.attempt, 0), 'error', $2::text, 'trace', '')),
		    metadata = j.metadata || jsonb_build_object('lectern:rescued_from', $1::text,
		        'lectern:rescues', coalesce((j.metadata->>'lectern:rescues')::int, 0) + 1)
		  FROM rescue AS r
		 WHERE j.id = r.id AND j.state = 'running'`, client, abandonedError, maxRescues)
	if err != nil {
		return 0, fmt.Errorf("jobs: rescue: give back the jobs of %s: %w", client, err)
	}
	if n := tag.RowsAffected(); n > 0 {
		rt.log.Warn("jobs: a stopped process left running jobs; they were given back to the queue", "instance", client, "jobs", n)
	}
	return tag.RowsAffected(), nil
}
