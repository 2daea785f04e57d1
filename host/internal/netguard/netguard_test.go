package netguard

import (
	"context"
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
		{"100.64.1.1", false, "reserved"},
		{"::ffff:192.168.1.1", false, "private"},
		{"fe80::1", false, "link-local"},
		{"fd00::1", false, "private"},
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
}
