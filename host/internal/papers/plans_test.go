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

// TestLibraryViewsThatRuleOutLookUpEachRow checks that a library page of a view
// most papers pass (all_non_trash, the default; inbox; active) looks up the state
// row of each library row it walks, rather than joining the library against every
// state row the view rules out: as an anti-join the planner compared each library
// row with every trashed paper of the user.
func TestLibraryViewsThatRuleOutLookUpEachRow(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	user := annWithALibrary(t, pool, 2000)
	_, err := pool.Exec(ctx, `
		INSERT INTO paper_user_state (user_id, paper_id, state)
		SELECT ul.user_id, ul.paper_id, (ARRAY['trash', 'reading', 'done', 'to_read'])[1 + (row_number() OVER () % 4)]
		  FROM user_library ul ORDER BY random() LIMIT 600;
		ANALYZE`)
	require.NoError(t, err)
	for _, view := range []string{"all_non_trash", "inbox", "active"} {
		sql, args, _, err := feedQuery(user, FeedParams{View: view, Scope: ScopeLibrary, Sort: SortAdded, Limit: 20})
		require.NoError(t, err)
		plan := dbtest.Plan(t, pool, sql, args...)
		require.NotContains(t, plan, "Anti Join", "view %s:\n%s", view, plan)
		require.Contains(t, plan, "SubPlan", "view %s:\n%s", view, plan)
	}
}
