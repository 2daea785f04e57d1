package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/sse"
)

// The scale-out test's workload: scaleJobs test.noop jobs: scaleFirst that wait
// nothing, then scaleLong that wait scaleLongSleep (one of them is running when a
// worker is killed), then the rest, which wait nothing.
const (
	scaleJobs      = 500
	scaleFirst     = 100
	scaleLong      = 4
	scaleLongSleep = 5 * time.Second
	// scaleRescueAfter is the cluster's JOBS_RESCUE_AFTER. River rescues a job
	// once it has run this long and past its kind's timeout (test.noop: 7 s), on
	// its rescuer's next pass (every 30 s), on the leader (re-elected within
	// about 15 s when the killed worker led).
	scaleRescueAfter = 5 * time.Second
)

// scaleNode is one lectern serve process of the test's cluster.
type scaleNode struct {
	name string
	role string
	base string // http://127.0.0.1:port
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// TestTwoAPIAndTwoWorkerHosts is issue 22's scale-out check with real
// processes: two `lectern serve --role api` and two `--role worker` on one
// PostgreSQL database. 500 test.noop jobs are enqueued through both API hosts;
// one worker is killed with SIGKILL while it runs a job. Every job finishes
// exactly once (a "finished" progress row is written in the transaction that
// completes the job, so it counts completions), none is lost, the killed job is
// rescued and run again on the other worker, the API hosts run nothing, and a
// stream opened on the API host that did not enqueue a job follows it to its
// done marker.
func TestTwoAPIAndTwoWorkerHosts(t *testing.T) {
	t.Parallel()
	bin, dir, pool, env := scaleCluster(t)

	nodes := []*scaleNode{
		startScaleNode(t, bin, dir, "api1", "api", env),
		startScaleNode(t, bin, dir, "api2", "api", env),
		startScaleNode(t, bin, dir, "worker1", "worker", env),
		startScaleNode(t, bin, dir, "worker2", "worker", env),
	}
	for _, n := range nodes {
		n.waitHealthy(t, 3*time.Minute)
	}
	api1, api2, workers := nodes[0], nodes[1], nodes[2:]

	// The long jobs go first, so that they are running while the rest flow.
	begin := time.Now()
	apis := []*scaleNode{api1, api2}
	// A first hundred, so that both workers are busy, then the long ones, in
	// order, then the rest, which flow in while a worker is killed.
	first, err := postNoops(apis, scaleFirst)
	require.NoError(t, err)
	long := make([]int64, scaleLong)
	for i := range long {
		long[i] = enqueueNoop(t, apis[i%2].base, scaleLongSleep)
	}
	bulk := make(chan []int64, 1)
	bulkErr := make(chan error, 1)
	go func() {
		ids, err := postNoops(apis, scaleJobs-scaleFirst-scaleLong)
		bulk <- ids
		bulkErr <- err
	}()

	// A stream on the API host that did not enqueue each long job.
	var streams sync.WaitGroup
	streamErrs := make([]error, scaleLong)
	for i, id := range long {
		streams.Add(1)
		go func() {
			defer streams.Done()
			streamErrs[i] = followToDone(t.Context(), apis[(i+1)%2].base, id, 3*time.Minute)
		}()
	}

	// Kill the worker that runs a long job, mid-job.
	victim, victimJob, extra := waitForLongJobOnWorker(t, pool, long, workers, api1)
	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	killedAt := time.Now()
	<-victim.done
	t.Logf("killed %s (pid %d) while it ran job %d", victim.name, victim.cmd.Process.Pid, victimJob)

	rest := <-bulk
	require.NoError(t, <-bulkErr)
	ids := slices.Concat(first, long, rest, extra)
	require.Len(t, ids, scaleJobs+len(extra))
	waitAllCompleted(t, pool, ids, 3*time.Minute)
	streams.Wait()
	for i, err := range streamErrs {
		require.NoError(t, err, "the stream of job %d on the other API host", long[i])
	}

	checkExactlyOnce(t, pool, ids, nodes, victim)
	rescue := rescueTime(t, pool, victimJob, victim, killedAt)
	rate := throughput(t, pool, ids)
	t.Logf("scale-out: %d jobs through 2 API and 2 worker hosts, %.0f jobs/s (first enqueue to last completion of the jobs never on the killed worker); "+
		"job %d rescued and started again %.1f s after the kill; whole run %.1f s",
		len(ids), rate, victimJob, rescue.Seconds(), time.Since(begin).Seconds())
}

// scaleCluster builds lectern and prepares what the nodes share: a fresh
// database, a plugins file with no plugin, and the environment.
func scaleCluster(t testing.TB) (bin, dir string, pool *pgxpool.Pool, env []string) {
	t.Helper()
	bin = filepath.Join(t.TempDir(), "lectern")
	goBuild(t, bin, "host/cmd/lectern")
	pool = dbtest.NewDB(t)
	dir = t.TempDir()
	plugins := filepath.Join(dir, "plugins.toml")
	require.NoError(t, os.WriteFile(plugins, []byte("# the scale-out test: no plugins\n"), 0o644))
	env = []string{
		"ENVIRONMENT=development",
		"DATABASE_URL=" + pool.Config().ConnString(),
		"SERVICE_API_KEY=" + goodAPIKey,
		"SERVICE_CONFIG_KEY=" + goodConfigKey,
		"LECTERN_PLUGINS_FILE=" + plugins,
		"DASHBOARD_ENABLED=false",
		"DEV_SMTP_LOG_ONLY=true",
		"LECTERN_TEST_JOBS=true",
		"JOBS_RESCUE_AFTER=" + scaleRescueAfter.String(),
	}
	return bin, dir, pool, env
}

// startScaleNode starts `lectern serve --role role` on a free loopback port,
// logging to dir/name.log, and stops it (SIGTERM, then SIGKILL) at cleanup.
func startScaleNode(t testing.TB, bin, dir, name, role string, env []string) *scaleNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	n := &scaleNode{name: name, role: role, base: "http://" + addr, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logFile, err := os.Create(n.log)
	require.NoError(t, err)
	defer logFile.Close()
	n.cmd = exec.Command(bin, "serve", "--role", role, "--addr", addr)
	n.cmd.Env = append(scrubbedEnviron(), env...)
	n.cmd.Env = append(n.cmd.Env, "LECTERN_DATA_DIR="+filepath.Join(dir, name), "PUBLIC_BASE_URL=http://"+addr)
	n.cmd.Stdout, n.cmd.Stderr = logFile, logFile
	require.NoError(t, n.cmd.Start())
	go func() {
		_ = n.cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(45 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		if t.Failed() {
			if b, err := os.ReadFile(n.log); err == nil {
				t.Logf("--- log of %s (%s) ---\n%s", n.name, n.role, tail(string(b), 4000))
			}
		}
	})
	return n
}

// scrubbedEnviron is the test's environment without the variables that would
// change what a node runs.
func scrubbedEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LECTERN_ROLE" || name == "LISTEN_ADDR" || name == "QDRANT_URL" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// waitHealthy polls the node's /healthz until it answers 200.
func (n *scaleNode) waitHealthy(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		select {
		case <-n.done:
			require.Failf(t, "a node exited while starting", "%s: see its log below", n.name)
		default:
		}
		resp, err := http.Get(n.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		require.True(t, time.Now().Before(deadline), "%s did not answer /healthz within %s", n.name, within)
		time.Sleep(200 * time.Millisecond)
	}
}

// enqueueScaleJobs posts total test.noop jobs, alternating between the API
// hosts: first long ones waiting scaleLongSleep, in order, then the rest, eight
// requests at a time. It returns the job ids in that order.
func enqueueScaleJobs(t testing.TB, apis []*scaleNode, total, long int) []int64 {
	t.Helper()
	ids := make([]int64, 0, total)
	for i := range long {
		ids = append(ids, enqueueNoop(t, apis[i%len(apis)].base, scaleLongSleep))
	}
	rest, err := postNoops(apis, total-long)
	require.NoError(t, err)
	return append(ids, rest...)
}

// postNoops posts n test.noop jobs that wait nothing, alternating between the
// API hosts, eight requests at a time, and returns their ids. It reports the
// failures rather than failing the test, so that it may run in a goroutine.
func postNoops(apis []*scaleNode, n int) ([]int64, error) {
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				ids[i], errs[i] = postNoop(apis[i%len(apis)].base, 0)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return ids, errors.Join(errs...)
}

func enqueueNoop(t testing.TB, base string, sleep time.Duration) int64 {
	t.Helper()
	id, err := postNoop(base, sleep)
	require.NoError(t, err)
	return id
}

// postNoop enqueues one test.noop through base's API with the ops key.
func postNoop(base string, sleep time.Duration) (int64, error) {
	body := fmt.Sprintf(`{"kind":%q,"args":{"sleep_ms":%d}}`, jobs.KindTestNoop, sleep.Milliseconds())
	req, err := http.NewRequest(http.MethodPost, base+"/api/jobs", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", goodAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("POST %s/api/jobs: %d %s", base, resp.StatusCode, raw)
	}
	var env jobs.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return 0, err
	}
	return env.ID, nil
}

// followToDone reads the job's stream on base until its done marker and checks
// that the job succeeded and that the stream carried its finished event.
func followToDone(ctx context.Context, base string, id int64, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/jobs/%d/stream", base, id), nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", goodAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stream of job %d: status %d", id, resp.StatusCode)
	}
	r := sse.NewReader(resp.Body)
	finished := false
	for {
		ev, err := r.Next()
		if err != nil {
			return fmt.Errorf("stream of job %d ended before done: %w", id, err)
		}
		switch ev.Name {
		case jobs.EventProgress:
			var p jobs.ProgressEvent
			if err := json.Unmarshal(ev.Data, &p); err != nil {
				return err
			}
			finished = finished || p.Message == jobs.MessageTestFinished
		case sse.DoneEvent:
			var env jobs.Envelope
			if err := json.Unmarshal(ev.Data, &env); err != nil {
				return err
			}
			if env.State != jobs.StateSucceeded || !finished {
				return fmt.Errorf("stream of job %d: done with state %s, finished event seen: %v", id, env.State, finished)
			}
			return nil
		}
	}
}

// waitForLongJobOnWorker waits until one of the long jobs has started on a
// worker and has not finished, and returns that worker and the job. When every
// long job finished before it could catch one (a very slow poll), it enqueues
// another long job through api and returns those extra jobs too.
func waitForLongJobOnWorker(t *testing.T, pool *pgxpool.Pool, long []int64, workers []*scaleNode, api *scaleNode) (*scaleNode, int64, []int64) {
	t.Helper()
	byPID := map[int]*scaleNode{}
	for _, w := range workers {
		byPID[w.cmd.Process.Pid] = w
	}
	watched := append([]int64{}, long...)
	var extra []int64
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rows, err := pool.Query(t.Context(), `
			SELECT s.job_id, (s.data->>'pid')::int
			  FROM job_progress s
			 WHERE s.job_id = ANY($1) AND s.message = $2
			   AND NOT EXISTS (SELECT 1 FROM job_progress f WHERE f.job_id = s.job_id AND f.message = $3)
			 ORDER BY s.created_at`, watched, jobs.MessageTestStarted, jobs.MessageTestFinished)
		require.NoError(t, err)
		for rows.Next() {
			var id int64
			var pid int
			require.NoError(t, rows.Scan(&id, &pid))
			if w, ok := byPID[pid]; ok {
				rows.Close()
				return w, id, extra
			}
		}
		require.NoError(t, rows.Err())
		require.True(t, time.Now().Before(deadline), "no long job was caught running on a worker within 2 minutes")
		var finished int
		require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(DISTINCT job_id) FROM job_progress WHERE job_id = ANY($1) AND message = $2`,
			watched, jobs.MessageTestFinished).Scan(&finished))
		if finished == len(watched) {
			id := enqueueNoop(t, api.base, scaleLongSleep)
			watched, extra = append(watched, id), append(extra, id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAllCompleted waits until River holds every job of ids as completed.
func waitAllCompleted(t testing.TB, pool *pgxpool.Pool, ids []int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var completed int
		require.NoError(t, pool.QueryRow(t.Context(),
			`SELECT count(*) FROM river_job WHERE id = ANY($1) AND state = 'completed'`, ids).Scan(&completed))
		if completed == len(ids) {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d of %d jobs completed within %s", completed, len(ids), within)
		time.Sleep(200 * time.Millisecond)
	}
}

// checkExactlyOnce checks the traces of the run: every job finished exactly
// once; a job never started on the killed worker started exactly once (no
// duplicate execution); the jobs the killed worker held were started again on
// the other worker; no API host ran a job; the surviving worker ran jobs.
func checkExactlyOnce(t *testing.T, pool *pgxpool.Pool, ids []int64, nodes []*scaleNode, victim *scaleNode) {
	t.Helper()
	var total int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = $1`, jobs.KindTestNoop).Scan(&total))
	require.Equal(t, len(ids), total, "the queue holds exactly the jobs the API accepted")

	rows, err := pool.Query(t.Context(), `
		SELECT j.id,
		       count(*) FILTER (WHERE p.message = $2),
		       count(*) FILTER (WHERE p.message = $3),
		       count(*) FILTER (WHERE p.message = $2 AND (p.data->>'pid')::int = $4),
		       coalesce(array_agg(DISTINCT (p.data->>'pid')::int) FILTER (WHERE p.message = $3), '{}')
		  FROM river_job j LEFT JOIN job_progress p ON p.job_id = j.id
		 WHERE j.id = ANY($1)
		 GROUP BY j.id`, ids, jobs.MessageTestStarted, jobs.MessageTestFinished, victim.cmd.Process.Pid)
	require.NoError(t, err)
	defer rows.Close()
	ranOn := map[int]int{}
	seen, rerun := 0, 0
	for rows.Next() {
		var id, started, finished, startedOnVictim int64
		var finishers []int32
		require.NoError(t, rows.Scan(&id, &started, &finished, &startedOnVictim, &finishers))
		seen++
		require.Equal(t, int64(1), finished, "job %d finished %d times", id, finished)
		require.Len(t, finishers, 1)
		ranOn[int(finishers[0])]++
		if startedOnVictim == 0 || int(finishers[0]) == victim.cmd.Process.Pid {
			require.Equal(t, int64(1), started, "job %d started %d times without meeting the killed worker", id, started)
			continue
		}
		require.Equal(t, int64(2), started, "job %d: its run on the killed worker and one more", id)
		rerun++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(ids), seen)
	require.GreaterOrEqual(t, rerun, 1, "the job running on the killed worker ran again")
	for _, n := range nodes {
		switch {
		case n.role == "api":
			require.Zero(t, ranOn[n.cmd.Process.Pid], "API host %s ran jobs", n.name)
		case n != victim: // the killed worker may not have finished any before the kill
			require.Positive(t, ranOn[n.cmd.Process.Pid], "worker %s ran no job", n.name)
		}
	}
	t.Logf("finished per process: %v; %d job(s) held by the killed worker ran again", ranOn, rerun)
}

// rescueTime is how long after the kill the killed job started again.
func rescueTime(t *testing.T, pool *pgxpool.Pool, job int64, victim *scaleNode, killedAt time.Time) time.Duration {
	t.Helper()
	var again time.Time
	require.NoError(t, pool.QueryRow(t.Context(), `
		SELECT created_at FROM job_progress
		 WHERE job_id = $1 AND message = $2 AND (data->>'pid')::int <> $3`,
		job, jobs.MessageTestStarted, victim.cmd.Process.Pid).Scan(&again))
	var attempt int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT attempt FROM river_job WHERE id = $1`, job).Scan(&attempt))
	require.Equal(t, 2, attempt, "the killed job finished on its second attempt")
	return again.Sub(killedAt)
}

// throughput is the jobs per second of the jobs that never met the killed
// worker, from the first enqueue to the last of their completions.
func throughput(t testing.TB, pool *pgxpool.Pool, ids []int64) float64 {
	t.Helper()
	var n int
	var secs float64
	require.NoError(t, pool.QueryRow(t.Context(), `
		SELECT count(*), extract(epoch FROM max(finalized_at) - min(created_at))::float8
		  FROM river_job WHERE id = ANY($1) AND attempt = 1`, ids).Scan(&n, &secs))
	require.Positive(t, secs)
	return float64(n) / secs
}
