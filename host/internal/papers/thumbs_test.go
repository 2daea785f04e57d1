package papers

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestThumbsOf: the newest thumb of the user on each paper asked about, whatever
// its source; a paper without one is absent, and another user's thumbs never
// count.
func TestThumbsOf(t *testing.T) {
	t.Parallel()
	st, ann, bob, rows := seedFeedAndBob(t)
	ctx := context.Background()
	up, down, changed, none := rows[0].id, rows[1].id, rows[2].id, rows[3].id
	require.NoError(t, GiveFeedbackTx(ctx, st.pool, ann, up, true, FeedbackPulse, ""))
	require.NoError(t, GiveFeedbackTx(ctx, st.pool, ann, down, false, FeedbackDismiss, ""))
	require.NoError(t, GiveFeedbackTx(ctx, st.pool, ann, changed, true, FeedbackFeed, ""))
	_, err := st.pool.Exec(ctx, `UPDATE recommendation_feedback SET created_at = now() - interval '1 hour' WHERE paper_id = $1`, changed)
	require.NoError(t, err)
	require.NoError(t, GiveFeedbackTx(ctx, st.pool, ann, changed, false, FeedbackPulse, ""))
	require.NoError(t, GiveFeedbackTx(ctx, st.pool, bob, none, true, FeedbackPulse, ""))

	got, err := st.ThumbsOf(ctx, ann, []uuid.UUID{up, down, changed, none})
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]bool{up: true, down: false, changed: false}, got)
	got, err = st.ThumbsOf(ctx, bob, []uuid.UUID{up, down, changed})
	require.NoError(t, err)
	require.Empty(t, got, "Ann's thumbs are hers")
}
