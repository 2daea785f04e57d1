package netguard

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"api.example.com":   {netip.MustParseAddr("93.184.216.34")},
		"metadata.internal": {netip.MustParseAddr("169.254.169.254")},
		"localhost":         {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
	}
	opts := BaseURLOpts{GatewayHosts: []string{"llm-gateway"}, Resolver: r}
	cases := []struct {
		url  string
		want string // "" accepts
	}{
		{"https://api.example.com/v1", ""},
		{"http://localhost:11434/v1", ""},
		{"http://127.0.0.1:8000/v1", ""},
		{"http://llm-gateway:4000", ""},
		{"http://169.254.169.254/latest", "link-local"},
		{"https://metadata.internal/v1", "link-local"},
		{"http://[fe80::1]/v1", "link-local"},
		{"https://224.0.0.1/v1", "multicast"},
		{"https://[ff02::1]/v1", "multicast"},
		{"https://0.0.0.0/v1", "unspecified"},
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
