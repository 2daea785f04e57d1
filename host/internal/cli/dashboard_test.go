package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

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

	dash, stopDashboard := startDashboard(t, base)
	code, body = getPage(t, dash+"/signin")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "Sign in to Lectern")
	code, body = getPage(t, dash+"/api/openapi.json")
	require.Equal(t, http.StatusOK, code, "/api/* is forwarded")
	require.True(t, strings.Contains(body, `"openapi"`))
	require.Equal(t, 0, stopDashboard(), "lectern dashboard stops cleanly")
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
