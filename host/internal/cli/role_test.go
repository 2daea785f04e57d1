package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestServeRefusesAnUnknownRole: a role that is neither api, worker nor all
// stops serve before it binds or connects anything, with a sentence listing the
// roles, from the flag (status 2) and from LECTERN_ROLE (a configuration
// refusal, status 1).
func TestServeRefusesAnUnknownRole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"flag", []string{"--role", "both"}, map[string]string{}, 2, `lectern: --role: must be api, worker or all (got "both")`},
		{"variable", nil, map[string]string{"LECTERN_ROLE": "workers"}, 1, `LECTERN_ROLE: must be api, worker or all (got "workers")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := runServe(t.Context(), c.args, lookup(c.env), &stdout, &stderr)
			require.Equal(t, c.code, code, stderr.String())
			require.Contains(t, stderr.String(), c.want)
			require.NotContains(t, stderr.String(), "listening")
		})
	}
}

// TestWorkerHealth: a worker's listener answers /healthz and /readyz (503 with
// a sentence when the database does not answer) and nothing of the API.
func TestWorkerHealth(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	srv := httptest.NewServer(workerHealth(pool))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/healthz")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok","role":"worker","version":"`+versionOf(t, body)+`"}`, body)
	code, body = get("/readyz")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ready","role":"worker"}`, body)
	code, _ = get("/api/jobs")
	require.Equal(t, http.StatusNotFound, code, "a worker serves no API")

	pool.Close()
	code, body = get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "The database does not answer")
}

func versionOf(t *testing.T, body string) string {
	t.Helper()
	var v struct{ Version string }
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return v.Version
}
