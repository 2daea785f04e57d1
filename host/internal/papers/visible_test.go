package papers

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// VisibleIDs keeps, once each, the papers of a list that the caller may see: the
// public ones, those of an instance-level feed, and the private ones in their own
// library; another user's private paper and a missing id are left out.
func TestVisibleIDs(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann, bob uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	paper := func(title, visibility string, by *uuid.UUID) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility, discovered_by) VALUES ($1, 'manual', $2, $3) RETURNING id`,
			title, visibility, by).Scan(&id))
		return id
	}
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
