package papers

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestLibraryIndexesByPaperNameTheUser checks that every index of user_library led
// by the paper also holds the user (migration 0026). Every page of papers asks, for
// each paper, whether it is in the caller's library; on the benchmark's corpus the
// planner answered it through an index of the paper alone, which B-tree
// deduplication keeps small, and read every library holding the paper to keep the
// caller's: 22 rows a paper, 0.6 of a feed page's 1.5 ms (docs/benchmarks.md).
func TestLibraryIndexesByPaperNameTheUser(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	rows, err := pool.Query(context.Background(), `
		SELECT i.indexrelid::regclass::text,
		       array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k (attnum, n)
		               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n)
		  FROM pg_index i WHERE i.indrelid = 'user_library'::regclass`)
	require.NoError(t, err)
	type index struct {
		name    string
		columns []string
	}
	indexes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var ix index
		return ix, r.Scan(&ix.name, &ix.columns)
	})
	require.NoError(t, err)
	byPaper := 0
	for _, ix := range indexes {
		if ix.columns[0] != "paper_id" {
			continue
		}
		byPaper++
		require.Equal(t, []string{"paper_id", "user_id"}, ix.columns[:min(2, len(ix.columns))], "index %s", ix.name)
	}
	require.Positive(t, byPaper, "some index leads with the paper, for the cascade when a paper goes: %v", indexes)
}
