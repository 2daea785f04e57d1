package source

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestPageSize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want int }{
		{-1, DefaultPageSize},
		{0, DefaultPageSize},
		{1, 1},
		{MaxPageSize, MaxPageSize},
		{MaxPageSize + 1, MaxPageSize},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, PageSize(tc.in), tc.in)
	}
}

func TestParseOffset(t *testing.T) {
	t.Parallel()
	n, err := ParseOffset("", 10)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	n, err = ParseOffset(OffsetCursor(9), 10)
	require.NoError(t, err)
	require.Equal(t, 9, n)
	n, err = ParseOffset(OffsetCursor(1<<40), math.MaxInt)
	require.NoError(t, err)
	require.Equal(t, 1<<40, n)
	for _, bogus := range []string{"10", "-1", "x", "007", "+5", " 5"} {
		_, err := ParseOffset(bogus, 10)
		require.ErrorIs(t, err, protocol.ErrBadRequest, bogus)
	}
}

func TestUpstreamCursorRoundTrip(t *testing.T) {
	t.Parallel()
	seen, upstream, err := ParseUpstreamCursor("")
	require.NoError(t, err)
	require.Equal(t, 0, seen)
	require.Equal(t, "*", upstream, "the start of an upstream listing")

	next := NextUpstreamCursor(25, 25, 25, 1000, "AoJ/a:b")
	require.Equal(t, "c:25:AoJ/a:b", next)
	seen, upstream, err = ParseUpstreamCursor(next)
	require.NoError(t, err)
	require.Equal(t, 25, seen)
	require.Equal(t, "AoJ/a:b", upstream, "an upstream cursor may hold colons")

	for _, bad := range []string{"25", "c:", "c:x:abc", "c:-1:abc", "c:3:", "d:3:abc"} {
		_, _, err := ParseUpstreamCursor(bad)
		require.ErrorIs(t, err, protocol.ErrBadRequest, bad)
	}
}

func TestNextUpstreamCursorEndsTheListing(t *testing.T) {
	t.Parallel()
	require.Empty(t, NextUpstreamCursor(25, 25, 25, 1000, ""), "no upstream cursor")
	require.Empty(t, NextUpstreamCursor(40, 15, 25, 1000, "abc"), "a short page")
	require.Empty(t, NextUpstreamCursor(50, 25, 25, 50, "abc"), "the total reached, although the upstream hands out a cursor")
	require.Equal(t, "c:50:abc", NextUpstreamCursor(50, 25, 25, 51, "abc"))
}
