package papers

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalizeDOI(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"10.1038/S42256-024-00832-8":                   "10.1038/s42256-024-00832-8",
		"https://doi.org/10.1371/journal.pone.0033693": "10.1371/journal.pone.0033693",
		"doi:10.1063/1.4938384":                        "10.1063/1.4938384",
		" https://dx.doi.org/10.1023/A:1007154515475 ": "10.1023/a:1007154515475",
		"not a doi":   "",
		"10.12/short": "",
	}
	for in, want := range cases {
		require.Equal(t, want, NormalizeDOI(in), in)
	}
}

func TestNormalizeArxivID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		id      string
		version int
		ok      bool
	}{
		{"2104.12255v1", "2104.12255", 1, true},
		{"arXiv:1707.08567", "1707.08567", 0, true},
		{"https://arxiv.org/abs/2304.02623v3", "2304.02623", 3, true},
		{"https://arxiv.org/pdf/2501.10120v1.pdf", "2501.10120", 1, true},
		{"astro-ph/0601001", "astro-ph/0601001", 0, true},
		{"hep-th/9901001v2", "hep-th/9901001", 2, true},
		{"abc", "", 0, false},
		{"0000.0000", "0000.0000", 0, true},
	}
	for _, tc := range cases {
		id, v, ok := NormalizeArxivID(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.id, id, tc.in)
		require.Equal(t, tc.version, v, tc.in)
	}
}
