package papers

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// VisibleIDs keeps, once each, the papers of a list that the caller may see: the
// public ones, those of an instance-level feed, and the private ones in their own
// library; another user's private paper and a missing id are left out.
func TestVisibleIDs(t *testing.T) {
	t.Parallel()
	pool, ann, bob, paper := annBobAndPapers(t)
	ctx := context.Background()
	public := paper("Public", "public", &bob)
	feed := paper("From an instance feed", "private", nil)
	annsUpload := paper("Ann's upload", "private", &ann)
	bobsUpload := paper("Bob's upload", "private", &bob)
	for _, row := range [][2]uuid.UUID{{ann, annsUpload}, {bob, bobsUpload}, {ann, public}} {
		_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, row[0], row[1])
		require.NoError(t, err)
	}
	ids := []uuid.UUID{public, feed, annsUpload, bobsUpload, uuid.New(), public}

	got, err := New(pool).VisibleIDs(ctx, ann, ids)
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{public, feed, annsUpload}, got)
	got, err = New(pool).VisibleIDs(ctx, bob, ids)
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{public, feed, bobsUpload}, got)
}

// A library row's paper_public stays equal to whether its paper is public, as
// every visibility test relies on (migration 0025): when the row is added, when it
// moves to another paper (a merge), and when the paper's visibility or discoverer
// changes. Made private again, a paper is hidden from a user whose library does
// not hold it and stays visible to one whose library does.
func TestLibraryRowsKnowWhichPapersArePrivate(t *testing.T) {
	t.Parallel()
	pool, ann, bob, paper := annBobAndPapers(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	// private lists the papers of user's library rows that say their paper is
	// private, after checking that every row agrees with its paper.
	private := func(user uuid.UUID) []uuid.UUID {
		t.Helper()
		var disagree int
		require.NoError(t, pool.QueryRow(ctx, `
			SELECT count(*) FROM user_library ul JOIN papers p ON p.id = ul.paper_id
			 WHERE ul.paper_public IS DISTINCT FROM (p.visibility = 'public' OR p.discovered_by IS NULL)`).Scan(&disagree))
		require.Zero(t, disagree, "a library row disagrees with its paper")
		rows, err := pool.Query(ctx, `SELECT paper_id FROM user_library WHERE user_id = $1 AND NOT paper_public`, user)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(t, err)
		return ids
	}
	public := paper("Public", "public", nil)
	upload := paper("Ann's upload", "private", &ann)
	copyOf := paper("Ann's second upload of it", "private", &ann)
	exec(`INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save'), ($1, $3, 'upload'), ($1, $4, 'upload')`,
		ann, public, upload, copyOf)
	require.Empty(t, private(bob))
	require.ElementsMatch(t, []uuid.UUID{upload, copyOf}, private(ann), "on insert")

	merged := paper("The record both copies were merged into", "public", nil)
	exec(`UPDATE user_library SET paper_id = $2 WHERE paper_id = $1`, copyOf, merged)
	require.ElementsMatch(t, []uuid.UUID{upload}, private(ann), "a row moved to a public paper")

	exec(`UPDATE papers SET visibility = 'public' WHERE id = $1`, upload)
	require.Empty(t, private(ann), "the paper made public")
	exec(`UPDATE papers SET visibility = 'private' WHERE id = $1`, upload)
	require.ElementsMatch(t, []uuid.UUID{upload}, private(ann), "and private again")
	exec(`UPDATE papers SET discovered_by = NULL WHERE id = $1`, upload)
	require.Empty(t, private(ann), "an instance-level paper")

	exec(`UPDATE papers SET visibility = 'private', discovered_by = $2 WHERE id = $1`, public, bob)
	require.ElementsMatch(t, []uuid.UUID{public}, private(ann), "a public paper made private")
	st := New(pool)
	seen, err := st.Visible(ctx, ann, public)
	require.NoError(t, err)
	require.True(t, seen, "ann keeps the paper her library holds")
	seen, err = st.Visible(ctx, bob, public)
	require.NoError(t, err)
	require.False(t, seen, "its discoverer, without it in his library, does not see it")
}

// annBobAndPapers gives a fresh database with the users Ann and Bob, and a
// function adding a paper of a visibility and discoverer.
func annBobAndPapers(t *testing.T) (pool *pgxpool.Pool, ann, bob uuid.UUID, paper func(title, visibility string, by *uuid.UUID) uuid.UUID) {
	pool = dbtest.NewDB(t)
	ctx := context.Background()
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	paper = func(title, visibility string, by *uuid.UUID) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility, discovered_by) VALUES ($1, 'manual', $2, $3) RETURNING id`,
			title, visibility, by).Scan(&id))
		return id
	}
	return pool, ann, bob, paper
}
