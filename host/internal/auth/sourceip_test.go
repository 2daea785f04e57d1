package auth

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	const proxy = "10.9.0.5:1234"
	for _, tc := range []struct {
		name    string
		trusted []string
		peer    string
		xff     []string // one element per header line
		want    string   // "" for the zero Addr
	}{
		{"untrusted peer, no header", nil, "198.51.100.7:40000", nil, "198.51.100.7"},
		{"untrusted peer's header is ignored", nil, "198.51.100.7:40000", []string{"127.0.0.1"}, "198.51.100.7"},
		{"untrusted loopback peer's header is ignored", nil, "127.0.0.1:40000", []string{"203.0.113.5"}, "127.0.0.1"},
		{"unparsable peer", []string{"*"}, "unix:/run/lectern.sock", []string{"127.0.0.1"}, ""},
		{"IPv4-mapped peer is unmapped", nil, "[::ffff:198.51.100.7]:40000", nil, "198.51.100.7"},
		{"trusted proxy without a header is the client", []string{"10.9.0.0/24"}, proxy, nil, "10.9.0.5"},
		{"trusted proxy names the client", []string{"10.9.0.0/24"}, proxy, []string{"203.0.113.5"}, "203.0.113.5"},
		{"a forged left end is not read", []string{"10.9.0.0/24"}, proxy, []string{"127.0.0.1, 203.0.113.5"}, "203.0.113.5"},
		{"trusted hops are skipped", []string{"10.9.0.0/24"}, proxy, []string{"203.0.113.5, 10.9.0.7"}, "203.0.113.5"},
		{"header lines are one chain", []string{"10.9.0.0/24"}, proxy, []string{"203.0.113.5", "10.9.0.7"}, "203.0.113.5"},
		{"the whole chain trusted ends at its left", []string{"10.9.0.0/24"}, proxy, []string{"10.9.0.8, 10.9.0.7"}, "10.9.0.8"},
		{"IPv4-mapped hop is unmapped", []string{"10.9.0.0/24"}, proxy, []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		// An unparsable hop is the client, and it is nobody: never the proxy before it.
		{"ip:port hop", []string{"10.9.0.0/24"}, proxy, []string{"203.0.113.5:4444"}, ""},
		{"bracketed IPv6 with port", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{"[::1]:80"}, ""},
		{"unix: hop", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{"unix:/x"}, ""},
		{"garbage hop", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{"garbage"}, ""},
		{"empty entry", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{"203.0.113.5, , 127.0.0.1"}, ""},
		{"empty header", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{""}, ""},
		{"unparsable hop behind trusted hops", []string{"127.0.0.0/8"}, "127.0.0.1:5000", []string{"garbage, 127.0.0.2"}, ""},
		{"untrusted hop right of garbage wins", []string{"127.0.0.1"}, "127.0.0.1:5000", []string{"garbage, 203.0.113.5"}, "203.0.113.5"},
		{"star trusts every parsable hop", []string{"*"}, "198.51.100.7:40000", []string{"203.0.113.5, 10.0.0.1"}, "203.0.113.5"},
		{"star and an unparsable hop", []string{"*"}, "198.51.100.7:40000", []string{"203.0.113.5:1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			got := NewSourceIP(tc.trusted).ClientIP(r)
			if tc.want == "" {
				require.False(t, got.IsValid(), "got %v", got)
				require.False(t, got.IsLoopback())
				require.False(t, inPrefixes(got, []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}))
				return
			}
			require.Equal(t, netip.MustParseAddr(tc.want), got)
		})
	}
}

func TestIsLocal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trusted []string
		peer    string
		headers map[string]string
		want    bool
	}{
		{"loopback peer", nil, "127.0.0.1:5000", nil, true},
		{"IPv6 loopback peer", nil, "[::1]:5000", nil, true},
		{"remote peer", nil, "198.51.100.7:5000", nil, false},
		{"remote peer claiming loopback", nil, "198.51.100.7:5000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, false},
		{"untrusted loopback proxy forwarding", nil, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.5"}, false},
		{"untrusted loopback proxy forwarding ip:port", nil, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.5:4444"}, false},
		{"untrusted loopback proxy with Forwarded", nil, "127.0.0.1:5000", map[string]string{"Forwarded": "for=203.0.113.5"}, false},
		{"untrusted loopback proxy with X-Real-IP", nil, "127.0.0.1:5000", map[string]string{"X-Real-IP": "203.0.113.5"}, false},
		{"trusted loopback proxy, local browser", []string{"127.0.0.1"}, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, true},
		{"trusted loopback proxy, remote browser", []string{"127.0.0.1"}, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.5"}, false},
		{"trusted loopback proxy, ip:port", []string{"127.0.0.1"}, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "203.0.113.5:4444"}, false},
		{"trusted loopback proxy, loopback with port", []string{"127.0.0.1"}, "127.0.0.1:5000", map[string]string{"X-Forwarded-For": "127.0.0.1:4444"}, false},
		{"trusted remote proxy, loopback claimed", []string{"10.9.0.0/24"}, "10.9.0.5:5000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/api/onboarding/admin", nil)
			r.RemoteAddr = tc.peer
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			require.Equal(t, tc.want, NewSourceIP(tc.trusted).IsLocal(r))
		})
	}
}
