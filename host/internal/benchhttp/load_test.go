package benchhttp

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The mix sends each route about as often as its weight says, and the weights
// are out of 100, as the tables print them.
func TestMixPicksRoutesByWeight(t *testing.T) {
	t.Parallel()
	m, c := newMix(mixedReads), newCorpus()
	require.Equal(t, 100, m.total)
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]int{}
	for range 2_000 {
		r := m.pick(rng)
		require.NotEmpty(t, r.Path(c, rng))
		seen[r.Name]++
	}
	for _, r := range mixedReads {
		// 2,000 picks: each route's share is within a few points of its weight.
		require.InDelta(t, r.Weight*20, seen[r.Name], 120, r.Name)
	}
}

func TestSelectRoutes(t *testing.T) {
	t.Parallel()
	all, err := selectRoutes("")
	require.NoError(t, err)
	require.Len(t, all, len(mixedReads))
	some, err := selectRoutes("due cards, projects")
	require.NoError(t, err)
	require.Equal(t, []string{"due cards", "projects"}, []string{some[0].Name, some[1].Name})
	_, err = selectRoutes("due cards,everything")
	require.ErrorContains(t, err, `"everything"`)
	floors, err := selectRoutes("signed-in floor,no-auth floor")
	require.NoError(t, err)
	require.Equal(t, "/api/me", floors[0].Path(nil, nil))
	require.Equal(t, "/healthz", floors[1].Path(nil, nil))
	require.Equal(t, 2, newMix(floors).total, "a floor driven alone is picked every time")
}

// The corpus is the same on every run, so a rerun searches the same text.
func TestCorpusIsReproducible(t *testing.T) {
	t.Parallel()
	a, b := newCorpus().passages(7, 3), newCorpus().passages(7, 3)
	require.Equal(t, a, b)
	require.NotEqual(t, a[0], a[1])
}
