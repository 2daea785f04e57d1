package embedded

import (
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestRowIndexFollowsTheRows adds and removes ids as a partition does (the last row
// takes a removed row's place) and checks every id against a Go map, including ids
// that share their first half (time-ordered UUIDs) and ids never added.
func TestRowIndexFollowsTheRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 42))
	var x rowIndex
	var ids []uuid.UUID
	want := map[uuid.UUID]int{}
	newID := func() uuid.UUID {
		id := uuid.New()
		if rng.IntN(2) == 0 {
			copy(id[:8], []byte("samepref"))
		}
		return id
	}
	for step := range 20_000 {
		if len(ids) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(ids))
			gone, last := ids[i], len(ids)-1
			x.delete(ids, gone)
			if i != last {
				x.move(ids, ids[last], i)
				ids[i] = ids[last]
				want[ids[i]] = i
			}
			ids = ids[:last]
			delete(want, gone)
		} else {
			id := newID()
			ids = append(ids, id)
			x.insert(ids, id, len(ids)-1)
			want[id] = len(ids) - 1
		}
		if step%1000 == 0 || step == 19_999 {
			require.Equal(t, len(want), x.n)
			for id, row := range want {
				got, ok := x.find(ids, id)
				require.True(t, ok)
				require.Equal(t, row, got)
			}
			_, ok := x.find(ids, newID())
			require.False(t, ok)
		}
	}
	require.LessOrEqual(t, x.bytes(), 4*4*len(ids)+4*minRowSlots, "at most 16 bytes a row")
}
