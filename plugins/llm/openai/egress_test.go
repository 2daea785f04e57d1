package main

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// fakeLookup answers names from a table, as DNS would at connect time.
func fakeLookup(table map[string]string) LookupFunc {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		s, ok := table[host]
		if !ok {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return []netip.Addr{netip.MustParseAddr(s)}, nil
	}
}

// chatTo is a chat request whose credentials point at baseURL.
func chatTo(baseURL string) *llm.ChatRequest {
	req := chatRequest()
	req.Credentials = map[string]string{llm.CredAPIKey: testKey, llm.CredBaseURL: baseURL}
	return req
}

func requireBadRequest(t *testing.T, err error, contains string) {
	t.Helper()
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, protocol.CodeBadRequest, pe.Code, pe.Message)
	require.Contains(t, pe.Message, contains)
	require.NotContains(t, pe.Message, testKey)
}

func TestEgressRedirects(t *testing.T) {
	t.Parallel()
	ok := fixture(t, "chat_stream.txt", "text/event-stream")
	t.Run("a redirect to another host is refused and not retried", func(t *testing.T) {
		t.Parallel()
		other := newFake(t, ok)
		u, err := url.Parse(other.srv.URL)
		require.NoError(t, err)
		// Another host name for the same loopback server: only the redirect rule
		// can refuse it.
		elsewhere := "http://localhost:" + u.Port() + "/v1/chat/completions"
		b := setup(t, nil, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere, http.StatusTemporaryRedirect)
		})
		_, err = llm.Collect(t.Context(), b.p, chatRequest())
		requireBadRequest(t, err, "redirect to another host")
		requireClean(t, err, b.up.srv.URL)
		require.Len(t, b.up.requests(), 1, "a refused redirect is not retried")
		require.Empty(t, other.requests(), "the prompt never reaches the other host")
	})
	t.Run("a redirect within the origin is followed", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, ok, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
		})
		resp, err := llm.Collect(t.Context(), b.p, chatRequest())
		require.NoError(t, err)
		require.Equal(t, "Graph neural networks [S1].", resp.Text)
		reqs := b.up.requests()
		require.Len(t, reqs, 2)
		require.Equal(t, "/moved/chat/completions", reqs[1].path)
		require.Equal(t, reqs[0].body, reqs[1].body)
	})
}

// TestEgressDialCheck: the address a name resolves to when the plugin connects is
// checked, whatever it was when the host saved the URL.
func TestEgressDialCheck(t *testing.T) {
	t.Parallel()
	ok := fixture(t, "chat_stream.txt", "text/event-stream")
	up := newFake(t, ok)
	port := up.srv.URL[strings.LastIndex(up.srv.URL, ":")+1:]
	lookup := fakeLookup(map[string]string{
		"model.example":   "169.254.169.254",
		"alibaba.example": "100.100.100.200",
		"cgnat.example":   "100.64.0.7",
		"aws6.example":    "fd00:ec2::254",
		"class-e.example": "240.0.0.1",
		"lan.example":     "10.0.0.5",
		"runtime.local":   "127.0.0.1",
	})
	cases := []struct {
		base string
		want string // "" succeeds
	}{
		{"https://model.example/v1", "refused to connect to 169.254.169.254, a link-local address"},
		{"http://model.example:" + port + "/v1", "link-local"},
		{"https://alibaba.example/v1", "refused to connect to 100.100.100.200, a cloud metadata"},
		{"https://cgnat.example/v1", "carrier-grade NAT"},
		{"https://aws6.example/v1", "refused to connect to fd00:ec2::254, a cloud metadata"},
		{"https://class-e.example/v1", "reserved"},
		{"http://lan.example:" + port + "/v1", "plain http"},
		{"https://169.254.169.254/v1", "link-local"},
		{"http://runtime.local:" + port + "/v1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.base, func(t *testing.T) {
			t.Parallel()
			p := configured(t, up.srv.URL, map[string]any{"max_retries": float64(2)})
			p.http = newHTTPClient(lookup)
			resp, err := llm.Collect(t.Context(), p, chatTo(tc.base))
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, "Graph neural networks [S1].", resp.Text)
				return
			}
			requireBadRequest(t, err, tc.want)
			require.NotContains(t, err.Error(), tc.base)
		})
	}
}

// TestEgressOperatorEndpoint: the operator's gateway is exempt, as at save time;
// nothing else is.
func TestEgressOperatorEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy dialPolicy
		addr   string
		want   bool // allowed
	}{
		{dialPolicy{scheme: "http", operator: true}, "10.0.0.5:4000", true},
		{dialPolicy{scheme: "http"}, "10.0.0.5:4000", false},
		{dialPolicy{scheme: "https"}, "10.0.0.5:443", true},
		{dialPolicy{scheme: "https"}, "100.100.100.200:443", false},
		{dialPolicy{scheme: "http"}, "127.0.0.1:11434", true},
	} {
		err := controlEgress(withDialPolicy(t.Context(), tc.policy), "tcp", tc.addr, nil)
		require.Equal(t, tc.want, err == nil, "%+v %s: %v", tc.policy, tc.addr, err)
	}
	require.Error(t, controlEgress(t.Context(), "tcp", "169.254.169.254:80", nil), "a context without a policy is checked too")

	p := New(nil)
	c, err := p.call(map[string]string{llm.CredBaseURL: "http://llm-gateway:4000", llm.CredOperatorEndpoint: "true"})
	require.NoError(t, err)
	require.Equal(t, dialPolicy{scheme: "http", operator: true}, c.dialPolicy())
	c, err = p.call(map[string]string{llm.CredOperatorEndpoint: "true"})
	require.NoError(t, err)
	require.False(t, c.dialPolicy().operator, "the flag marks a base URL the host sent, never the settings'")
}
