package retrieve

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestFuseRewardsAgreement(t *testing.T) {
	a, b, c, d := Passage{ChunkID: uuid.New(), Snippet: "lexical a"}, Passage{ChunkID: uuid.New()}, Passage{ChunkID: uuid.New()}, Passage{ChunkID: uuid.New()}
	aVec := a
	aVec.Snippet = "vector a"
	got := fuse(3, []Passage{b, a, c}, []Passage{d, aVec})
	require.Len(t, got, 3)
	require.Equal(t, a.ChunkID, got[0].ChunkID, "found by both rankings, it ranks first")
	require.Equal(t, "lexical a", got[0].Snippet, "the lexical snippet (with marks) is kept")
	require.InDelta(t, 1.0/62+1.0/62, got[0].Score, 1e-12)
	require.Equal(t, b.ChunkID, got[1].ChunkID, "a tie keeps the first ranking's order")
	require.Equal(t, d.ChunkID, got[2].ChunkID)
	require.NotNil(t, fuse(5))
	require.Empty(t, fuse(5))
}
