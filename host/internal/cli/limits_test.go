package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/httpapi"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/store"
)

// The tests of this file run the server of lectern serve (newBoundedServer) on a
// real listener with one limit shortened to a fraction of a second, and play the
// client byte by byte on a raw connection, so each bound is seen to act, not only
// to be set (TestServersAreBounded checks the production values).

// short is the shortened limit; the other limits keep their production values
// unless a test says otherwise, so only the limit under test can act.
const short = 200 * time.Millisecond

// cutWithin bounds how long after its limit a cut may come on a loaded machine;
// a client that is never cut trickles on past it and fails the test.
const cutWithin = 3 * time.Second

// serveBounded serves handler with lim on a loopback port until the test ends.
func serveBounded(t *testing.T, handler http.Handler, lim httpapi.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := newBoundedServer(context.Background(), handler, lim, slog.New(slog.DiscardHandler))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawConn is a client connection the test writes by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
	// closed receives how long after dialling the server closed the connection,
	// once the test calls watchClose.
	closed chan time.Duration
	start  time.Time
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	start := time.Now() // before the server can start any clock of its own
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReader(c), start: start, closed: make(chan time.Duration, 1)}
}

// watchClose reads and drops whatever the server sends until it closes the
// connection, and then reports when.
func (c *rawConn) watchClose() {
	go func() {
		_, _ = io.Copy(io.Discard, c.r)
		c.closed <- time.Since(c.start)
	}()
}

// trickle writes piece every 50 ms until the server closes the connection or
// cutWithin has passed, and returns when the connection closed (or false).
func (c *rawConn) trickle(piece string) (time.Duration, bool) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(cutWithin)
	for {
		select {
		case d := <-c.closed:
			return d, true
		case <-giveUp:
			return 0, false
		case <-tick.C:
			// A write may still succeed after the server has closed; the read
			// side reports the close.
			_, _ = c.Write([]byte(piece))
		}
	}
}

// TestSlowHeadersAreCutAfterReadHeaderTimeout: a client that sends its headers a
// line at a time (slowloris) is disconnected once ReadHeaderTimeout has passed,
// although each line comes well within it, and no handler ever runs for it.
func TestSlowHeadersAreCutAfterReadHeaderTimeout(t *testing.T) {
	t.Parallel()
	lim := httpapi.DefaultLimits()
	lim.ReadHeaderTimeout = short
	var handled atomic.Int32
	addr := serveBounded(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		handled.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}), lim)

	c := dialRaw(t, addr)
	_, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: lectern.test\r\n"))
	require.NoError(t, err)
	c.watchClose()
	after, closed := c.trickle("X-Slow: 1\r\n")
	require.True(t, closed, "a client still sending headers after %s was not disconnected", cutWithin)
	require.GreaterOrEqual(t, after, short, "cut before ReadHeaderTimeout")
	require.Zero(t, handled.Load(), "no handler runs for a request whose headers never ended")
}

// TestHeadersOverMaxHeaderBytesGet431: with the production header limit, a header
// block over MaxHeaderBytes is answered 431 and one just under it is served.
func TestHeadersOverMaxHeaderBytesGet431(t *testing.T) {
	t.Parallel()
	addr := serveBounded(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), httpapi.DefaultLimits())

	cases := []struct {
		name   string
		size   int
		status int
	}{
		{"under the limit", httpapi.MaxHeaderBytes - 4<<10, http.StatusNoContent},
		// net/http reads 4 KB past MaxHeaderBytes before it refuses.
		{"over the limit", httpapi.MaxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			_, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: lectern.test\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", tc.size))
			require.NoError(t, err)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(c.r, nil)
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
		})
	}
}

// holdArgs is a job kind no worker runs here: its job stays queued, so its
// stream sends nothing but heartbeats.
type holdArgs struct{}

func (holdArgs) Kind() string { return "limits_test.hold" }

type holdWorker struct{ river.WorkerDefaults[holdArgs] }

func (holdWorker) Work(context.Context, *river.Job[holdArgs]) error { return nil }

// testHost is the API handler of lectern serve over a new database, with a job
// queue that is built but not started, and the signed-in first admin.
type testHost struct {
	handler http.Handler
	queue   *jobs.Service
	userID  uuid.UUID
	cookie  string
}

func newTestHost(t *testing.T, heartbeat time.Duration) *testHost {
	t.Helper()
	cfg, err := config.Load(lookup(map[string]string{"LECTERN_DATA_DIR": t.TempDir()}))
	require.NoError(t, err)
	pool := dbtest.NewDB(t)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	host, err := app.Build(context.Background(), app.Options{Config: cfg, Pool: pool, Logger: log, Migrator: store.NewMigrator(pool, migs),
		Version: "test", QueueFunc: func(c *jobs.Config) error {
			c.HeartbeatInterval = heartbeat
			return jobs.Register(c.Registry, jobs.KindSpec[holdArgs]{Worker: holdWorker{}, Enqueuers: jobs.EnqueueUser})
		}})
	require.NoError(t, err)
	t.Cleanup(host.Close)
	queue := host.Jobs

	// Onboard the first admin through an unbounded server: setting up is not
	// what these tests time.
	setupSrv := httptest.NewServer(host.Handler)
	defer setupSrv.Close()
	resp, err := http.Post(setupSrv.URL+"/api/onboarding/admin", "application/json", strings.NewReader(`{"email":"limits@example.org"}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var me struct{ ID uuid.UUID }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&me))
	th := &testHost{handler: host.Handler, queue: queue, userID: me.ID}
	for _, c := range resp.Cookies() {
		if c.Name == "service_session" {
			th.cookie = c.Name + "=" + c.Value
		}
	}
	require.NotEmpty(t, th.cookie, "onboarding signs the admin in")
	return th
}

// TestSlowBodyIsCutAfterReadTimeout: on an ordinary JSON route of the real router,
// a client that sends its body a byte at a time is cut off once ReadTimeout has
// passed since the request began, although each byte comes well within it. It
// gets a 400 in a sentence, and the connection is closed.
func TestSlowBodyIsCutAfterReadTimeout(t *testing.T) {
	t.Parallel()
	th := newTestHost(t, 0)
	lim := httpapi.DefaultLimits()
	lim.ReadTimeout = short
	// The answer to the cut must still be written.
	lim.WriteTimeout = 10 * time.Second
	addr := serveBounded(t, th.handler, lim)

	c := dialRaw(t, addr)
	_, err := c.Write([]byte("POST /api/auth/magic-link HTTP/1.1\r\nHost: lectern.test\r\n" +
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"email\":\""))
	require.NoError(t, err)
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			answered <- nil
			c.closed <- time.Since(c.start)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		answered <- resp
		_, _ = io.Copy(io.Discard, c.r)
		c.closed <- time.Since(c.start)
	}()
	after, closed := c.trickle("a")
	require.True(t, closed, "a client still sending its body after %s was not cut off", cutWithin)
	require.GreaterOrEqual(t, after, short, "cut before ReadTimeout")

	resp := <-answered
	require.NotNil(t, resp, "the cut request gets an answer before the connection closes")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body struct{ Code, Detail string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "bad_request", body.Code)
	require.Equal(t, "The body could not be read; send it again.", body.Detail)
}

// TestLargeBodyRouteOutlivesReadTimeout: a route that declares a large body limit
// (POST /api/reviews/batch, 2 MB) lifts its read deadline, so a body that takes
// longer than ReadTimeout to arrive is read whole and answered on its content.
func TestLargeBodyRouteOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	th := newTestHost(t, 0)
	lim := httpapi.DefaultLimits()
	lim.ReadTimeout = short
	lim.WriteTimeout = short
	addr := serveBounded(t, th.handler, lim)

	const pieces = 12 // 12 × 50 ms: three times ReadTimeout
	body := `{"reviews": [` + strings.Repeat(" ", pieces) + `]}`
	c := dialRaw(t, addr)
	_, err := fmt.Fprintf(c, "POST /api/reviews/batch HTTP/1.1\r\nHost: lectern.test\r\nCookie: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"reviews\": [", th.cookie, len(body))
	require.NoError(t, err)
	for range pieces {
		time.Sleep(50 * time.Millisecond)
		_, err := c.Write([]byte(" "))
		require.NoError(t, err)
	}
	_, err = c.Write([]byte("]}"))
	require.NoError(t, err)
	require.Greater(t, time.Since(c.start), 2*short)

	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(c.r, nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var answer struct {
		Code   string
		Fields []struct{ Field string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
	// The whole body was read: the answer is about its content (no reviews).
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	require.Equal(t, "validation_error", answer.Code)
	require.Len(t, answer.Fields, 1)
	require.Equal(t, "reviews", answer.Fields[0].Field)
}

// TestEventStreamOutlivesWriteTimeout: a job's event stream on the real router
// keeps streaming well past WriteTimeout while it sends (here heartbeats every
// 50 ms), because each event renews the write deadline. /api/rag/ask streams
// through the same writer (package sse).
func TestEventStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	th := newTestHost(t, 50*time.Millisecond)
	env, err := th.queue.Enqueue(context.Background(), th.userID, holdArgs{})
	require.NoError(t, err)
	lim := httpapi.DefaultLimits()
	lim.ReadTimeout, lim.WriteTimeout, lim.IdleTimeout = short, short, short
	addr := serveBounded(t, th.handler, lim)

	c := dialRaw(t, addr)
	_, err = fmt.Fprintf(c, "GET /api/jobs/%d/stream HTTP/1.1\r\nHost: lectern.test\r\nCookie: %s\r\n\r\n", env.ID, th.cookie)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(c.r, nil)
	require.NoError(t, err)
	// Closing the body would read the stream to its end; closing the connection
	// (at cleanup) ends it.
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")

	// Read until five times WriteTimeout has passed; the stream must still be
	// sending heartbeats then.
	lines := bufio.NewScanner(resp.Body)
	heartbeats, late := 0, 0
	for time.Since(c.start) < 5*lim.WriteTimeout {
		if !lines.Scan() {
			require.Fail(t, "the stream ended", "after %s, with %d heartbeats: %v",
				time.Since(c.start).Round(time.Millisecond), heartbeats, lines.Err())
		}
		if lines.Text() == ": heartbeat" {
			heartbeats++
			if time.Since(c.start) > 2*lim.WriteTimeout {
				late++
			}
		}
	}
	require.Positive(t, late, "heartbeats arrive after twice WriteTimeout")
}
