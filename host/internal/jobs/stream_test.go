package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/sse"
)

// streamResult is what a client read from a job stream.
type streamResult struct {
	seqs   []int64        // progress event seqs, in order
	states []jobs.State   // states of the state events
	done   *jobs.Envelope // the done marker's envelope; nil if the stream did not end
	lastID string
}

// openStream opens the job's stream as caller, resuming after lastEventID when set.
func (b *testBundle) openStream(t *testing.T, c auth.Caller, id int64, lastEventID string) *http.Response {
	t.Helper()
	h := http.Header{}
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	resp := b.send(t, c, http.MethodGet, fmt.Sprintf("/api/jobs/%d/stream", id), nil, h)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	return resp
}

// readStream reads events until the done marker, or until stopAfter progress
// events when stopAfter > 0. It fails if the stream ends without done, or if
// anything follows done.
func readStream(t *testing.T, body io.Reader, stopAfter int) streamResult {
	t.Helper()
	r := sse.NewReader(body)
	var res streamResult
	for {
		ev, err := r.Next()
		require.NoError(t, err, "the stream ended before the done marker")
		switch ev.Name {
		case jobs.EventProgress:
			var p jobs.ProgressEvent
			require.NoError(t, json.Unmarshal(ev.Data, &p))
			require.Equal(t, fmt.Sprint(p.Seq), ev.ID, "a progress event's id is its seq")
			require.Equal(t, p.Seq, p.Current, "the test worker reports current = seq")
			res.seqs = append(res.seqs, p.Seq)
			if stopAfter > 0 && len(res.seqs) == stopAfter {
				res.lastID = r.LastEventID()
				return res
			}
		case jobs.EventState:
			var env jobs.Envelope
			require.NoError(t, json.Unmarshal(ev.Data, &env))
			res.states = append(res.states, env.State)
		case sse.DoneEvent:
			var env jobs.Envelope
			require.NoError(t, json.Unmarshal(ev.Data, &env))
			res.done = &env
			res.lastID = r.LastEventID()
			_, err := r.Next()
			require.ErrorIs(t, err, io.EOF, "nothing follows the done marker")
			return res
		default:
			require.Failf(t, "unexpected event", "event %q", ev.Name)
		}
	}
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestStreamSendsEveryEventThenDone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.progress", map[string]any{"n": 100, "gate": true})

	resp := b.openStream(t, user, env.ID, "")
	defer resp.Body.Close()
	close(b.kinds.progressGate) // let the job finish while the client watches
	res := readStream(t, resp.Body, 0)

	require.Equal(t, seqRange(1, 100), res.seqs, "all 100 events, in order, once each")
	require.NotNil(t, res.done)
	require.Equal(t, jobs.StateSucceeded, res.done.State)
	require.JSONEq(t, `{"steps":100}`, string(res.done.Result))
	require.Equal(t, int64(100), res.done.Progress.Seq)
	require.NotEmpty(t, res.states, "a state event announces the job's state")
}

func TestStreamResumesWithLastEventID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.progress", map[string]any{"n": 100, "gate": true})

	// The worker holds after event 50 until the gate opens: the client leaves
	// half-way through a running job.
	first := b.openStream(t, user, env.ID, "")
	half := readStream(t, first.Body, 50)
	require.NoError(t, first.Body.Close())
	require.Equal(t, seqRange(1, 50), half.seqs)
	require.Equal(t, "50", half.lastID)

	second := b.openStream(t, user, env.ID, half.lastID)
	defer second.Body.Close()
	close(b.kinds.progressGate)
	rest := readStream(t, second.Body, 0)
	require.Equal(t, seqRange(51, 100), rest.seqs, "the rest: no gap, no repeat")
	require.NotNil(t, rest.done)
	require.Equal(t, jobs.StateSucceeded, rest.done.State)

	// After the job finished, a resume replays from the stored events.
	third := b.openStream(t, user, env.ID, "97")
	defer third.Body.Close()
	tail := readStream(t, third.Body, 0)
	require.Equal(t, seqRange(98, 100), tail.seqs)
	require.NotNil(t, tail.done)

	// A client that saw everything gets just the done marker.
	fourth := b.openStream(t, user, env.ID, "100")
	defer fourth.Body.Close()
	none := readStream(t, fourth.Body, 0)
	require.Empty(t, none.seqs)
	require.NotNil(t, none.done)
}

func TestStreamEndsWithDoneWhenCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.block", nil)
	<-b.kinds.blockStarted

	resp := b.openStream(t, user, env.ID, "")
	defer resp.Body.Close()
	status, body := b.do(t, user, http.MethodPost, fmt.Sprintf("/api/jobs/%d/cancel", env.ID), nil)
	require.Equal(t, http.StatusAccepted, status, "%s", body)
	res := readStream(t, resp.Body, 0)
	require.NotNil(t, res.done)
	require.Equal(t, jobs.StateCancelled, res.done.State)
}

func TestStreamSendsHeartbeats(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.block", nil)
	<-b.kinds.blockStarted

	ctx, cancel := context.WithTimeout(context.Background(), stateDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/jobs/%d/stream", b.server.URL, env.ID), nil)
	require.NoError(t, err)
	raw, err := json.Marshal(user)
	require.NoError(t, err)
	req.Header.Set(callerHeader, string(raw))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()

	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), ": heartbeat") {
			return
		}
	}
	require.Fail(t, "no heartbeat comment before the deadline", "%v", sc.Err())
}

func TestReportProgressOutsideJob(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, jobs.ReportProgress(context.Background(), 1, 2, "x"), jobs.ErrNotInJob)
	require.ErrorIs(t, jobs.SetResult(context.Background(), 1), jobs.ErrNotInJob)
}

func TestConcurrentProgressIsNumberedPerJob(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	var ids []int64
	for range 20 {
		ids = append(ids, b.create(t, user, "test.progress", map[string]any{"n": 50}).ID)
	}
	for _, id := range ids {
		b.waitState(t, user, id, jobs.StateSucceeded)
	}
	rows, err := b.pool.Query(context.Background(), `
		SELECT job_id, count(*), min(seq), max(seq), count(DISTINCT seq)
		  FROM job_progress WHERE job_id = ANY($1) GROUP BY job_id`, ids)
	require.NoError(t, err)
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var id, n, lo, hi, distinct int64
		require.NoError(t, rows.Scan(&id, &n, &lo, &hi, &distinct))
		require.Equal(t, []int64{50, 1, 50, 50}, []int64{n, lo, hi, distinct}, "job %d: seq 1..50 once each", id)
		seen++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(ids), seen)
}

func TestCloseStreamsEndsOpenStreams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := userCaller(b.userA)
	env := b.create(t, user, "test.block", nil)
	<-b.kinds.blockStarted

	resp := b.openStream(t, user, env.ID, "")
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	ev, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, jobs.EventState, ev.Name)

	b.svc.CloseStreams()
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.NotEqual(t, sse.DoneEvent, ev.Name, "a closed stream is not a finished job")
	}
	require.Equal(t, jobs.StateRunning, b.get(t, user, env.ID).State, "the job runs on")
}
