package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/pgembed"
)

// privateCluster is a PostgreSQL cluster of the test's own, which it may crash
// without disturbing the cluster the other tests share.
type privateCluster struct {
	t       *testing.T
	dir     string
	cluster *pgembed.Cluster
}

func newPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	// Under the temp folder itself: when the tests run as root, the postgres
	// system user must be able to reach the cluster's folder.
	dir, err := os.MkdirTemp("", "lectern-faulttest-")
	require.NoError(t, err)
	c := &privateCluster{t: t, dir: dir}
	c.start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.cluster.Remove(ctx); err != nil {
			t.Errorf("remove the test's PostgreSQL cluster: %v", err)
		}
	})
	require.NoError(t, c.cluster.EnsureDatabase(context.Background(), "lectern"))
	return c
}

func (c *privateCluster) start() {
	c.t.Helper()
	cluster, err := pgembed.Start(context.Background(), pgembed.Options{Dir: c.dir, Durable: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(c.t, err, "start a private PostgreSQL cluster")
	c.cluster = cluster
}

// url is the database's connection URL.
func (c *privateCluster) url() string { return c.cluster.ConnString("lectern") }

// restart crashes the server (pg_ctl stop -m immediate: every session cut, no
// checkpoint) and starts it again after pause, as a database that died and was
// brought back by its supervisor.
func (c *privateCluster) restart(pause time.Duration) {
	c.t.Helper()
	require.NoError(c.t, c.cluster.Crash(context.Background()))
	time.Sleep(pause)
	c.start()
}

// pool connects to the test's database.
func (c *privateCluster) pool() *pgxpool.Pool {
	c.t.Helper()
	pool, err := pgxpool.New(context.Background(), c.url())
	require.NoError(c.t, err)
	c.t.Cleanup(pool.Close)
	return pool
}

// TestPostgresRestartMidIngestFinishesTheJobOnce is the fault "PostgreSQL restarts
// in the middle of an ingest": the job is inside the transaction that stores the
// paper's text when the server crashes; it comes back a second later. The job
// waits for the database and runs again without using up its one attempt, and
// finishes once: the paper has its text and each passage exactly once.
func TestPostgresRestartMidIngestFinishesTheJobOnce(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/arxiv_2304.02623v1_beyond_summarization.pdf")
	pg := newPrivateCluster(t)
	held := newGate(t)
	dataDir := t.TempDir()
	h := startHost(t, hostConfig{DatabaseURL: pg.url(), DataDir: dataDir, PathPrefix: held.dir})
	pool := pg.pool()
	_, cookie := signedInUser(t, pool, "ann@example.org")

	status, body := h.upload(t, cookie, "beyond.pdf", pdf)
	require.Equal(t, http.StatusAccepted, status, string(body))
	var res uploadResult
	decode(t, body, &res)
	held.waitHeld(t)
	// The job is to be caught inside its transaction that stores the text: the
	// test holds the paper's row, which that transaction locks first.
	ctx := context.Background()
	blocker, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer blocker.Rollback(ctx) //nolint:errcheck
	_, err = blocker.Exec(ctx, `SELECT 1 FROM papers WHERE id = $1 FOR UPDATE`, res.PaperID)
	require.NoError(t, err)
	held.release(t)
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
		return waiting > 0
	}, 2*time.Minute, 20*time.Millisecond, "the job reached its transaction")

	pg.restart(time.Second)

	attempts := waitJobDone(t, pool, res.Job.ID, 2*time.Minute)
	require.Equal(t, 1, attempts, "one attempt: a lost database does not use one up")
	requireReadOnce(t, pool, res.PaperID)
	require.Contains(t, h.log(), "the database went away during the job", "the job met the lost database and waited for it")
	var jobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'ingest.pdf'`).Scan(&jobs))
	require.Equal(t, 1, jobs, "one job")

	// The host goes on serving: a second upload is read as well.
	other := fixturetest.Read(t, "pdfs/arxiv_2501.10120v1_pasa.pdf")
	status, body = h.upload(t, cookie, "pasa.pdf", other)
	require.Equal(t, http.StatusAccepted, status, string(body))
	var res2 uploadResult
	decode(t, body, &res2)
	waitJobDone(t, pool, res2.Job.ID, 2*time.Minute)
	requireReadOnce(t, pool, res2.PaperID)
}

// batchReview is one review of a batch, as an offline client sends it.
type batchReview struct {
	CardID     uuid.UUID `json:"card_id"`
	Rating     int       `json:"rating"`
	ClientID   string    `json:"client_id"`
	ReviewedAt time.Time `json:"reviewed_at"`
}

// TestPostgresRestartMidReviewBatchIsAllOrNothing is the fault "PostgreSQL
// restarts in the middle of a review batch": clients keep posting offline review
// batches while the server crashes and comes back. Every batch is answered (200,
// or 503 with a sentence, never a 500), a refused batch left none of its reviews
// behind, and sending the refused batches again applies each review exactly once.
func TestPostgresRestartMidReviewBatchIsAllOrNothing(t *testing.T) {
	t.Parallel()
	pg := newPrivateCluster(t)
	h := startHost(t, hostConfig{DatabaseURL: pg.url(), DataDir: t.TempDir()})
	pool := pg.pool()
	ctx := context.Background()
	user, cookie := signedInUser(t, pool, "ann@example.org")

	const batches, perBatch = 24, 100
	store := learning.New(pool)
	deck, err := store.CreateDeck(ctx, user, learning.DeckParams{Name: "Faults", DesiredRetention: 0.9, MaximumInterval: 365})
	require.NoError(t, err)
	bodies := make([][]byte, batches)
	at := time.Now().Add(-time.Hour).UTC()
	for b := range batches {
		reviews := make([]batchReview, perBatch)
		for i := range reviews {
			c, err := store.CreateCard(ctx, user, learning.NewCard{DeckID: deck.ID, CardType: "basic",
				Front: fmt.Sprintf("front %d.%d", b, i), Back: "back", Tags: []string{}, Status: "active"})
			require.NoError(t, err)
			reviews[i] = batchReview{CardID: c.ID, Rating: 3, ClientID: fmt.Sprintf("b%02d-r%03d", b, i), ReviewedAt: at}
		}
		bodies[b], err = json.Marshal(map[string]any{"reviews": reviews})
		require.NoError(t, err)
	}

	// Four clients post the batches one after another; the server crashes while
	// they do.
	first := make([]int, batches)
	var acked atomic.Int32
	var wg sync.WaitGroup
	next := make(chan int, batches)
	for b := range batches {
		next <- b
	}
	close(next)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				status, body := h.do(t, cookie, http.MethodPost, "/api/reviews/batch", bytes.NewReader(bodies[b]), "application/json")
				first[b] = status
				switch {
				case status == http.StatusOK:
					acked.Add(1)
				case status != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("nothing was changed")):
					t.Errorf("batch %d: a batch the database went away under is a 503 with a sentence, got %d: %s", b, status, body)
				}
			}
		}()
	}
	// The crash comes once some batches are in, so others are on their way.
	require.Eventually(t, func() bool { return acked.Load() >= 2 }, time.Minute, 5*time.Millisecond)
	pg.restart(time.Second)
	wg.Wait()

	perBatchCount := func() map[string]int {
		rows, err := pool.Query(ctx, `SELECT left(client_id, 3), count(*) FROM review_logs WHERE user_id = $1 GROUP BY 1`, user)
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var prefix string
			var n int
			require.NoError(t, rows.Scan(&prefix, &n))
			out[prefix] = n
		}
		require.NoError(t, rows.Err())
		return out
	}
	counts := perBatchCount()
	refused := 0
	for b := range batches {
		prefix := fmt.Sprintf("b%02d", b)
		if first[b] == http.StatusOK {
			require.Equal(t, perBatch, counts[prefix], "an acknowledged batch is all there")
			continue
		}
		refused++
		require.Zero(t, counts[prefix], "a refused batch left none of its reviews behind")
	}
	require.Positive(t, refused, "the crash refused at least one batch (else the fault was not injected)")
	require.Less(t, refused, batches, "batches before the crash were acknowledged")
	t.Logf("%d of %d batches were refused during the restart", refused, batches)

	// The clients send the refused batches again.
	for b := range batches {
		if first[b] == http.StatusOK {
			continue
		}
		require.Eventually(t, func() bool {
			status, _ := h.do(t, cookie, http.MethodPost, "/api/reviews/batch", bytes.NewReader(bodies[b]), "application/json")
			return status == http.StatusOK
		}, time.Minute, 200*time.Millisecond, "batch %d is applied once the database is back", b)
	}
	var total, distinct, cardsTwice int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT count(*), count(DISTINCT client_id),
		       (SELECT count(*) FROM (SELECT card_id FROM review_logs WHERE user_id = $1 GROUP BY card_id HAVING count(*) > 1) x)
		  FROM review_logs WHERE user_id = $1`, user).Scan(&total, &distinct, &cardsTwice))
	require.Equal(t, batches*perBatch, total, "every review is in, once")
	require.Equal(t, total, distinct)
	require.Zero(t, cardsTwice, "no card was reviewed twice")
}
