package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
)

func TestNormalizeDOI(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"10.1093/MIND/LIX.236.433", "10.1093/mind/lix.236.433"},
		{"https://doi.org/10.1038/S42256-024-00832-8", "10.1038/s42256-024-00832-8"},
		{"http://dx.doi.org/10.1000/xyz", "10.1000/xyz"},
		{"doi:10.1000/abc ", "10.1000/abc"},
		{"not a doi", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, normalizeDOI(tc.in))
		})
	}
}

func TestSplitArXiv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		id      string
		version int
		ok      bool
	}{
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
			id, v, ok := splitArXiv(tc.in)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.id, id)
			require.Equal(t, tc.version, v)
		})
	}
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
			require.Equal(t, tc.want, normalizeORCID(tc.in))
		})
	}
}

func TestToDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   s2Paper
		want paper.Date
	}{
		{"day", s2Paper{PublicationDate: "2023-04-11", Year: 2023}, paper.Date{Year: 2023, Month: 4, Day: 11, Precision: paper.PrecisionDay}},
		{"year only", s2Paper{Year: 1950}, paper.Date{Year: 1950, Precision: paper.PrecisionYear}},
		{"bad date falls back to year", s2Paper{PublicationDate: "2023-02-30", Year: 2023}, paper.Date{Year: 2023, Precision: paper.PrecisionYear}},
		{"nothing", s2Paper{}, paper.Date{}},
		{"out of range year", s2Paper{Year: 20230}, paper.Date{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, toDate(&tc.in))
		})
	}
}
