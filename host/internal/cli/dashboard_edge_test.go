package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// startDashboard runs `lectern dashboard` against api and returns its base URL, and
// stop, which ends it and returns its exit code (-1 when it did not stop within a
// minute). The test's cleanup stops it too.
func startDashboard(t *testing.T, api string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"dashboard", "--addr", "127.0.0.1:0", "--api", api}, lookup(nil), out, &syncBuffer{})
	}()
	var once sync.Once
	code := -1
	stop := func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(time.Minute):
			}
		})
		return code
	}
	t.Cleanup(func() {
		if stop() == -1 {
			t.Error("lectern dashboard did not stop")
		}
	})
	addr := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	var dash string
	require.Eventually(t, func() bool {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			dash = m[1]
			return true
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "lectern dashboard did not start: %s", out.String())
	return dash, stop
}

// TestRemoteBrowserThroughAStandaloneDashboardCannotOnboard: a browser elsewhere on
// the network reaches a standalone dashboard through a reverse proxy on the same
// machine (both on loopback, which lectern serve trusts by default). The dashboard
// must pass the browser's address on, not the front proxy's loopback address, so the
// API refuses to let that browser create the first admin, by the dashboard's form
// and by /api/*. A browser on the machine itself still can.
func TestRemoteBrowserThroughAStandaloneDashboardCannotOnboard(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	base, _, stop := startServe(t, map[string]string{"DATABASE_URL": dbURL})
	defer func() { require.Equal(t, 0, stop()) }()
	dash, _ := startDashboard(t, base)

	// The front proxy says what Caddy or nginx would for a browser at 203.0.113.5.
	dashURL, err := url.Parse(dash)
	require.NoError(t, err)
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(dashURL)
		pr.Out.Host = pr.In.Host
		pr.Out.Header.Set("X-Forwarded-For", "203.0.113.5")
	}})
	defer front.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noRedirect.Post(front.URL+"/api/onboarding/admin", "application/json", strings.NewReader(`{"email":"intruder@example.org"}`))
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), "onboarding_not_local")

	resp, err = noRedirect.PostForm(front.URL+"/onboarding/admin", url.Values{"email": {"intruder@example.org"}})
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, string(raw))
	for _, c := range resp.Cookies() {
		require.NotEqual(t, "service_session", c.Name, "no session for the remote browser")
	}

	code, body := getPage(t, base+"/api/onboarding")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"needed":true}`, body, "no account was created")

	// A browser on the machine itself, straight to the dashboard, is local.
	resp, err = noRedirect.Post(dash+"/api/onboarding/admin", "application/json", strings.NewReader(`{"email":"root@example.org"}`))
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(raw))
}

// TestServersAreBounded: lectern serve and lectern dashboard share one server
// setup with every timeout and the header limit set.
func TestServersAreBounded(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(context.Background(), http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	require.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)
	require.Equal(t, time.Minute, srv.ReadTimeout)
	require.Equal(t, 2*time.Minute, srv.WriteTimeout)
	require.Equal(t, 2*time.Minute, srv.IdleTimeout)
	require.Equal(t, 64<<10, srv.MaxHeaderBytes)
}
