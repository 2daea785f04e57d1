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
