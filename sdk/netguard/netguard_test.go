package netguard

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return f[host], nil
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"smtp.example.org":  {netip.MustParseAddr("93.184.216.34")},
		"relay.internal":    {netip.MustParseAddr("10.0.0.25")},
		"sneaky.example":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
		"metadata.example":  {netip.MustParseAddr("169.254.169.254")},
		"empty.example.org": nil,
	}
	cases := []struct {
		host         string
		allowPrivate bool
		wantErr      string
	}{
		{"smtp.example.org", false, ""},
		{"relay.internal", false, "private address"},
		{"relay.internal", true, ""},
		{"sneaky.example", false, "loopback address"},
		{"metadata.example", false, "link-local"},
		{"empty.example.org", false, "no addresses"},
		{"127.0.0.1", false, "loopback"},
		{"::1", false, "loopback"},
		{"0.0.0.0", false, "unspecified"},
		{"224.0.0.1", false, "multicast"},
		{"100.64.1.1", false, "carrier-grade NAT"},
		{"::ffff:192.168.1.1", false, "private"},
		{"fe80::1", false, "link-local"},
		{"fd00::1", false, "private"},
		{"fd00:ec2::254", false, "cloud metadata"},
		{"100.100.100.200", false, "cloud metadata"},
		{"64:ff9b::a9fe:a9fe", false, "link-local"}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", false, ""},             // NAT64 of 8.8.8.8
		{"8.8.8.8", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			t.Parallel()
			err := CheckHost(context.Background(), r, tc.host, tc.allowPrivate)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
	t.Run("a name that does not resolve", func(t *testing.T) {
		t.Parallel()
		err := CheckHost(context.Background(), failingResolver{}, "nowhere.example", false)
		require.ErrorIs(t, err, ErrUnresolvable)
		require.EqualError(t, err, "netguard: nowhere.example does not resolve", "the resolver's own text stays out")
		var dnsErr *net.DNSError
		require.ErrorAs(t, err, &dnsErr, "the cause stays reachable for logs")
	})
}

// failingResolver answers every lookup the way a resolver that cannot be reached does.
type failingResolver struct{}

func (failingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "read udp 10.0.0.2:53: i/o timeout", Name: host, Server: "10.0.0.2:53", IsTimeout: true}
}

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"api.example.com":   {netip.MustParseAddr("93.184.216.34")},
		"metadata.internal": {netip.MustParseAddr("169.254.169.254")},
		"localhost":         {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"lan-model.home":    {netip.MustParseAddr("192.168.1.20")},
		"tailnet.example":   {netip.MustParseAddr("100.101.102.103")},
		"mixed.example":     {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("100.100.100.200")},
	}
	opts := BaseURLOpts{GatewayHosts: []string{"llm-gateway"}, Resolver: r}
	cases := []struct {
		url  string
		want string // "" accepts
	}{
		{"https://api.example.com/v1", ""},
		{"http://localhost:11434/v1", ""},
		{"http://127.0.0.1:8000/v1", ""},
		{"http://[::1]:8000/v1", ""},
		{"https://lan-model.home/v1", ""},
		{"http://llm-gateway:4000", ""},
		{"http://lan-model.home/v1", "plain http"},
		{"http://169.254.169.254/latest", "link-local"},
		{"https://metadata.internal/v1", "link-local"},
		{"http://[fe80::1]/v1", "link-local"},
		{"https://[fd00:ec2::254]/v1", "cloud metadata"},
		{"https://100.100.100.200/v1", "cloud metadata"},
		{"https://mixed.example/v1", "cloud metadata"},
		{"https://100.64.0.1/v1", "carrier-grade NAT"},
		{"https://100.127.255.254/v1", "carrier-grade NAT"},
		{"https://tailnet.example/v1", "carrier-grade NAT"},
		{"https://240.0.0.1/v1", "reserved"},
		{"https://255.255.255.255/v1", "reserved"},
		{"https://198.18.0.1/v1", "reserved"},
		{"https://192.0.2.1/v1", "reserved"},
		{"https://0.1.2.3/v1", "reserved"},
		{"https://[2001:db8::1]/v1", "reserved"},
		{"https://[2002:a9fe:a9fe::1]/v1", "reserved"},
		{"https://[64:ff9b::a9fe:a9fe]/v1", "link-local"},
		{"https://[::ffff:169.254.169.254]/v1", "link-local"},
		{"https://224.0.0.1/v1", "multicast"},
		{"https://[ff02::1]/v1", "multicast"},
		{"https://0.0.0.0/v1", "unspecified"},
		{"https://[::]/v1", "unspecified"},
		{"https://user:secret@api.example.com/v1", "credentials"},
		{"https://api.example.com/v1#frag", "fragment"},
		{"http://api.example.com/v1", "plain http"},
		{"ftp://api.example.com/v1", "scheme"},
		{"file:///etc/passwd", "host"},
		{"api.example.com/v1", "absolute"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			err := CheckBaseURL(context.Background(), tc.url, opts)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestEndpointDialCheck: the dialer's check refuses exactly what the save-time check
// refuses, address by address.
func TestEndpointDialCheck(t *testing.T) {
	t.Parallel()
	addrs := []string{
		"93.184.216.34", "127.0.0.1", "::1", "10.1.2.3", "192.168.1.20", "fd12::1",
		"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "100.64.0.1", "240.0.0.1",
		"255.255.255.255", "0.0.0.0", "224.0.0.1", "2001:db8::1", "::ffff:10.0.0.1",
	}
	for _, scheme := range []string{"http", "https"} {
		for _, s := range addrs {
			a := netip.MustParseAddr(s)
			saved := CheckBaseURL(context.Background(), scheme+"://"+netip.AddrPortFrom(a, 443).String()+"/v1", BaseURLOpts{})
			dialed := DialControl(EndpointDialCheck(scheme))("tcp", netip.AddrPortFrom(a, 443).String(), nil)
			require.Equal(t, saved == nil, dialed == nil, "%s %s: saved %v, dialed %v", scheme, s, saved, dialed)
		}
	}
}
