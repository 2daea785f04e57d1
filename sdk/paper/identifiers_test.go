package paper

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The cases below come from the parsers they replace: the host's papers package
// and the arXiv, Crossref, OpenAlex and Semantic Scholar source plugins.

func TestNormalizeDOI(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		// host/internal/papers
		{"10.1038/S42256-024-00832-8", "10.1038/s42256-024-00832-8"},
		{"https://doi.org/10.1371/journal.pone.0033693", "10.1371/journal.pone.0033693"},
		{"doi:10.1063/1.4938384", "10.1063/1.4938384"},
		{" https://dx.doi.org/10.1023/A:1007154515475 ", "10.1023/a:1007154515475"},
		{"not a doi", ""},
		{"10.12/short", ""},
		// plugins/sources/arxiv
		{"https://doi.org/10.1109/ICSTW55395.2022.00035", "10.1109/icstw55395.2022.00035"},
		{"doi:10.1145/3395363.3397376", "10.1145/3395363.3397376"},
		{"http://dx.doi.org/10.5121/VLSIC.2012.3205", "10.5121/vlsic.2012.3205"},
		// plugins/sources/crossref and openalex
		{"https://dx.doi.org/10.1023/A:1007154515475", "10.1023/a:1007154515475"},
		{"nope", ""},
		{"https://doi.org/10.1023/A:1007154515475", "10.1023/a:1007154515475"},
		{"doi:10.1093/NAR/gkw1164", "10.1093/nar/gkw1164"},
		{"W123", ""},
		// plugins/sources/semanticscholar
		{"10.1093/MIND/LIX.236.433", "10.1093/mind/lix.236.433"},
		{"https://doi.org/10.1038/S42256-024-00832-8", "10.1038/s42256-024-00832-8"},
		{"http://dx.doi.org/10.1000/xyz", "10.1000/xyz"},
		{"doi:10.1000/abc ", "10.1000/abc"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, NormalizeDOI(tc.in))
		})
	}
}

func TestTrimDOI(t *testing.T) {
	t.Parallel()
	require.Equal(t, "10.1/x", TrimDOI(" DOI:10.1/X"))
	require.Equal(t, "10.1038/s42256-024-00832-8", TrimDOI("https://doi.org/10.1038/S42256-024-00832-8"))
	require.Equal(t, "", TrimDOI("10.1/x y"))
	require.Equal(t, "", TrimDOI("W123"))
}

func TestParseArXivID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		id      string
		version int
		ok      bool
	}{
		// plugins/sources/arxiv
		{"2104.12255v1", "2104.12255", 1, true},
		{"2104.12255", "2104.12255", 0, true},
		{"http://arxiv.org/abs/2403.16981v2", "2403.16981", 2, true},
		{"https://arxiv.org/pdf/2403.16981v12.pdf", "2403.16981", 12, true},
		{"arXiv:astro-ph/0601001v1", "astro-ph/0601001", 1, true},
		{"math.GT/0309136", "math.GT/0309136", 0, true},
		{"abc", "", 0, false},
		{"", "", 0, false},
		// plugins/sources/semanticscholar
		{"2304.05376", "2304.05376", 0, true},
		{"1706.03762v7", "1706.03762", 7, true},
		{"arXiv:2101.00001v2", "2101.00001", 2, true},
		{"hep-th/9901001", "hep-th/9901001", 0, true},
		{"math.GT/0309136v1", "math.GT/0309136", 1, true},
		{"12345", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			id, v, ok := ParseArXivID(tc.in)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.id, id)
			require.Equal(t, tc.version, v)
		})
	}
}

func TestArXivFromDOI(t *testing.T) {
	t.Parallel()
	require.Equal(t, "2312.07559", ArXivFromDOI("10.48550/arxiv.2312.07559"))
	require.Equal(t, "math.GT/0309136", ArXivFromDOI("10.48550/arxiv.math.gt/0309136"))
	require.Equal(t, "", ArXivFromDOI("10.1145/3395363.3397376"))
}

func TestNormalizeORCID(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0000-0002-1825-0097", "0000-0002-1825-0097"},
		{"https://orcid.org/0000-0002-1694-233x", "0000-0002-1694-233X"},
		{"000000021825009X", "0000-0002-1825-009X"},
		{"1234", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, NormalizeORCID(tc.in))
		})
	}
}
