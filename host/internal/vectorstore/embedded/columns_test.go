package embedded

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// smallCodes returns codes of dim components in blocks of 4 rows, so that a few
// rows cross block boundaries.
func smallCodes(dim int) *codes {
	c := newCodes(dim)
	c.blockRows = 4
	return c
}

// requireColumnsMatch holds every kept column to the codes, row by row.
func requireColumnsMatch(t *testing.T, c *codes) {
	t.Helper()
	for j, col := range c.cols.byComp {
		require.Len(t, col.segs, len(c.blocks), "component %d: one segment a block", j)
		for i := range c.len() {
			require.Equal(t, c.row(i)[j], col.segs[i/c.blockRows][i%c.blockRows], "component %d, row %d", j, i)
		}
	}
}

// TestColumnsFollowEveryWrite keeps columns while rows are appended across
// block boundaries, replaced, moved over others (a delete) and popped with their
// block, and holds each column to the codes after every step.
func TestColumnsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	c := smallCodes(8)
	t.Cleanup(c.free)
	for range 10 {
		c.append(randomQuery(rng, 8))
	}
	for _, j := range []int{0, 3, 7} {
		require.NotNil(t, c.column(j))
	}
	requireColumnsMatch(t, c)

	for range 7 { // 17 rows: two more blocks
		c.append(randomQuery(rng, 8))
		requireColumnsMatch(t, c)
	}
	c.set(5, randomQuery(rng, 8))
	requireColumnsMatch(t, c)
	for c.len() > 2 { // delete row 1 again and again, as remove does
		c.move(1, c.len()-1)
		c.pop()
		requireColumnsMatch(t, c)
	}
	require.Len(t, c.blocks, 1)
	c.append(randomQuery(rng, 8))
	requireColumnsMatch(t, c)
	require.Len(t, c.cols.byComp, 3, "writes keep the columns, they do not drop them")

	c.free()
	require.Empty(t, c.cols.byComp)
}

// TestColumnsKeepToTheirBudget drops the column least recently asked for when a
// new one would pass the budget, and keeps none that alone passes it.
func TestColumnsKeepToTheirBudget(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(33, 34))
	c := smallCodes(8)
	t.Cleanup(c.free)
	for range 8 { // two blocks: a column is 8 bytes
		c.append(randomQuery(rng, 8))
	}
	c.cols.budget = 16
	require.NotNil(t, c.column(1))
	require.NotNil(t, c.column(2))
	require.NotNil(t, c.column(1)) // 2 is now the older
	require.NotNil(t, c.column(3))
	require.ElementsMatch(t, []int{1, 3}, keys(c.cols.byComp))

	c.append(randomQuery(rng, 8)) // a third block: one column is 12 bytes
	require.Len(t, c.cols.byComp, 1, "growing drops what the budget no longer holds")
	require.Contains(t, c.cols.byComp, 3)
	requireColumnsMatch(t, c)

	c.cols.budget = 8
	require.Nil(t, c.column(4), "a column over the budget is not kept")
	require.NotContains(t, c.cols.byComp, 4)
}

func keys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSparseSearchWithColumnsAfterDeletes compares a partition's sparse searches
// with its columns kept and with none (the codes read at a stride), after deletes
// moved rows and replacements rewrote others, on more rows than one block holds,
// for queries of 2 to 10 components.
func TestSparseSearchWithColumnsAfterDeletes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(35, 36))
	p := datasetPartition(t, 3*exactBelow/2, rng, bags{words: 60})
	require.NoError(t, p.floats.flush())
	queries := make([][]float32, 16)
	for i := range queries {
		queries[i] = wordsQuery(rng, p.dim)
		if i%2 == 1 { // columns added four at a time, and the rest one by one
			queries[i] = componentsQuery(rng, p.dim, 4+rng.IntN(7))
		}
	}
	for _, q := range queries { // keep their columns
		mustSearch(t, p, q, 20)
	}
	require.NotEmpty(t, p.codes.cols.byComp)
	for i := 0; i < 3000; i++ {
		id := p.ids[rng.IntN(len(p.ids))]
		if i%3 == 0 {
			v := make([]float32, p.dim)
			bags{words: 60}.draw(rng, v)
			mustPut(t, p, id, p.papers[rowOf(t, p, id)], v)
			continue
		}
		require.NoError(t, p.remove(id))
	}
	require.NoError(t, p.floats.flush())
	requireColumnsMatch(t, p.codes)
	withColumns := make([][]uuid.UUID, len(queries))
	for i, q := range queries {
		for _, h := range mustSearch(t, p, q, 20) {
			withColumns[i] = append(withColumns[i], h.ChunkID)
		}
	}
	p.codes.cols.drop()
	p.codes.cols.budget = 0
	for i, q := range queries {
		var strided []uuid.UUID
		for _, h := range mustSearch(t, p, q, 20) {
			strided = append(strided, h.ChunkID)
		}
		require.Equal(t, strided, withColumns[i], "query %d", i)
	}
	require.Empty(t, p.codes.cols.byComp)
}

// TestColumnsUnderConcurrentSearches runs sparse searches side by side, as
// searches under the partition's shared lock do, with a budget of three columns
// so that they build and drop columns under each other's feet (run it with
// -race), and holds each to the same search read at a stride.
func TestColumnsUnderConcurrentSearches(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(37, 38))
	p := datasetPartition(t, 5000, rng, bags{words: 60})
	require.NoError(t, p.floats.flush())
	queries := make([][]float32, 24)
	for i := range queries {
		queries[i] = wordsQuery(rng, p.dim)
	}
	p.codes.cols.budget = 0
	want := make([][]vectorstore.Hit, len(queries))
	for i, q := range queries {
		want[i] = mustSearch(t, p, q, 10)
	}
	p.codes.cols.budget = 3 * len(p.codes.blocks) * p.codes.blockRows
	var g errgroup.Group
	for w := range 4 {
		g.Go(func() error {
			p.mu.RLock()
			defer p.mu.RUnlock()
			for n := range 3 * len(queries) {
				i := (n + 5*w) % len(queries)
				got, err := p.search(queries[i], 10, nil)
				if err != nil {
					return err
				}
				if !slices.Equal(got, want[i]) {
					return fmt.Errorf("query %d: %v, want %v", i, got, want[i])
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	require.LessOrEqual(t, len(p.codes.cols.byComp), 3)
}
