package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/store"
	sdkpaper "github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

// staticSource is a paper source that answers every search with one public paper.
type staticSource struct{}

func (staticSource) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return &source.Page{Papers: []sdkpaper.Paper{{Title: "Memory models for flashcard scheduling",
		IDs: sdkpaper.IDs{ArXivID: "2401.00002v1"}, Published: sdkpaper.Date{Year: 2024, Precision: sdkpaper.PrecisionYear}}}}, nil
}

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	testOpsKey    = "9d3b7c1e5a2f8046b1c9e7d3a5f2b8c4e6d0a1f3"
	testConfigKey = "c4e6d0a1f39d3b7c1e5a2f8046b1c9e7d3a5f2b8"
)

// mailbox captures the mail the host sends (sign-in links).
type mailbox struct {
	mu   sync.Mutex
	msgs []mail.Message
	// down makes Send fail, as a mail server that cannot be reached does.
	down bool
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("dial tcp: lookup smtp.example.org: no such host")
	}
	m.msgs = append(m.msgs, msg)
	return nil
}

// setDown makes the mail server unreachable, or reachable again.
func (m *mailbox) setDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
}

// link waits for the sign-in link last mailed to addr.
func (m *mailbox) link(t *testing.T, addr string) string {
	t.Helper()
	var link string
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i := len(m.msgs) - 1; i >= 0; i-- {
			if m.msgs[i].To == addr {
				link = m.msgs[i].LogFields["magic_link"]
				return true
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "no sign-in link mailed to %s", addr)
	return link
}

// stack is the whole host for a test: the API (app.Build over a fresh database, with
// a started job queue so PDFs are read) and the dashboard, each on its own
// httptest server, the dashboard forwarding to the API over the network.
type stack struct {
	pool *pgxpool.Pool
	app  *app.App
	jobs *jobs.Service
	api  *httptest.Server
	dash *httptest.Server
	web  *Server
	mail *mailbox
	// clock is the learning API's clock, which a test may move forward.
	clock *testClock
}

func newStack(t *testing.T) *stack { return newStackMode(t, false) }

// newStackMode builds the stack; inProcess serves the dashboard with the API's
// handler in process on one address, as lectern serve does.
func newStackMode(t *testing.T, inProcess bool) *stack {
	t.Helper()
	return newStackSources(t, inProcess, func() []search.Named { return []search.Named{{Name: "static", Searcher: staticSource{}}} })
}

// newStackSources is newStackMode with the paper sources sources.
func newStackSources(t *testing.T, inProcess bool, sources func() []search.Named) *stack {
	t.Helper()
	// The dashboard's address is needed first: sign-in links point at it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dashURL := "http://" + ln.Addr().String()
	vars := map[string]string{
		"SERVICE_API_KEY":     testOpsKey,
		"SERVICE_CONFIG_KEY":  testConfigKey,
		"PUBLIC_BASE_URL":     dashURL,
		"LECTERN_DATA_DIR":    t.TempDir(),
		"TRUSTED_PROXY_HOSTS": "127.0.0.1,::1",
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	pool := dbtest.NewDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("LECTERN_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)

	box := &mailbox{}
	clock := &testClock{}
	a, err := app.Build(context.Background(), app.Options{Config: cfg, Pool: pool, Logger: log, Migrator: store.NewMigrator(pool, migs),
		Version: "test", Mail: box, Now: clock.now,
		Sources: sources})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, a.Start(ctx))
	queue := a.Jobs

	api := httptest.NewServer(a.Handler)
	apiURL, err := url.Parse(api.URL)
	require.NoError(t, err)
	wcfg := Config{APIURL: apiURL, Logger: log}
	if inProcess {
		wcfg.APIURL, err = url.Parse(dashURL)
		require.NoError(t, err)
		wcfg.API = a.Handler
	}
	w, err := New(wcfg)
	require.NoError(t, err)
	dash := httptest.NewUnstartedServer(w)
	dash.Listener.Close()
	dash.Listener = ln
	dash.Start()
	t.Cleanup(func() {
		dash.CloseClientConnections()
		api.CloseClientConnections()
		queue.CloseStreams()
		dash.Close()
		api.Close()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		_ = a.Stop(stopCtx)
		a.Close()
		cancel()
	})
	return &stack{pool: pool, app: a, jobs: queue, api: api, dash: dash, web: w, mail: box, clock: clock}
}

// testClock is the learning API's clock in the stack: the wall clock moved
// forward by what the test skipped (a learning step waited out at once).
type testClock struct{ skipped atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.skipped.Load())) }

// skip moves the clock forward by d.
func (c *testClock) skip(d time.Duration) { c.skipped.Add(int64(d)) }

// browser is a plain HTTP client with a cookie jar, for the tests that need no
// JavaScript: it behaves like a browser without it.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (s *stack) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{t: t, base: s.dash.URL, c: &http.Client{Jar: jar, Timeout: 60 * time.Second}}
}

// page is one answer: its status, final URL and body.
type page struct {
	status int
	url    string
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return page{status: resp.StatusCode, url: resp.Request.URL.RequestURI(), body: string(raw)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	require.NoError(b.t, err)
	return b.do(req)
}

// post sends a form the way a browser does.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// upload posts a file in the field "file" as multipart/form-data.
func (b *browser) upload(path, name string, content []byte) page {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(b.t, err)
	_, _ = fw.Write(content)
	require.NoError(b.t, mw.Close())
	req, err := http.NewRequest(http.MethodPost, b.base+path, &buf)
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// apiJSON calls the API through the dashboard's proxy with the browser's cookies.
func (b *browser) apiJSON(method, path string, body, out any) int {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(b.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	require.NoError(b.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

// newTestServer serves h on a loopback port for the test.
func newTestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
