package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// TestServeServesTheDashboardAndTheDashboardCommandForwards: lectern serve answers
// the dashboard's pages and the API on one address, and lectern dashboard renders
// the same pages from it over the network.
func TestServeServesTheDashboardAndTheDashboardCommandForwards(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	base, _, stop := startServe(t, map[string]string{"DATABASE_URL": dbURL})

	code, body := getPage(t, base+"/signin")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Sign in to Lectern")
	code, body = getPage(t, base+"/api/openapi.json")
	require.Equal(t, http.StatusOK, code, "the API answers on the same address")
	require.Contains(t, body, `"openapi"`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"dashboard", "--addr", "127.0.0.1:0", "--api", base}, lookup(nil), out, &syncBuffer{})
	}()
	addr := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	var dash string
	require.Eventually(t, func() bool {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			dash = m[1]
			return true
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "lectern dashboard did not start: %s", out.String())
	code, body = getPage(t, dash+"/signin")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Sign in to Lectern")
	code, body = getPage(t, dash+"/api/openapi.json")
	require.Equal(t, http.StatusOK, code, "/api/* is forwarded")
	require.True(t, strings.Contains(body, `"openapi"`))
	cancel()
	select {
	case c := <-done:
		require.Equal(t, 0, c)
	case <-time.After(time.Minute):
		t.Fatal("lectern dashboard did not stop")
	}
	require.Equal(t, 0, stop())
}

func TestDashboardRefusesABadAPIURL(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"dashboard", "--api", "localhost:3001"}, lookup(nil), &bytes.Buffer{}, &stderr)
	require.Equal(t, 2, code)
	require.Contains(t, stderr.String(), "must be an absolute http or https URL")
}

func TestTrustLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		on   bool
		in   []string
		want []string
	}{
		{"default adds loopback", true, []string{"dashboard"}, []string{"dashboard", "127.0.0.1", "::1"}},
		{"already listed", true, []string{"127.0.0.1"}, []string{"127.0.0.1", "::1"}},
		{"star stays alone", true, []string{"*"}, []string{"*"}},
		{"turned off", false, []string{"dashboard"}, []string{"dashboard"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := &config.Config{TrustedProxyLoopback: tc.on, TrustedProxyHosts: tc.in}
			trustLoopback(cfg)
			require.Equal(t, tc.want, cfg.TrustedProxyHosts)
		})
	}
}
