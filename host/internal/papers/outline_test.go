package papers

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// The reader's table of contents lists a paper's passages in reading order with
// their sections, pages and first words; one passage comes back whole. Another
// user's private paper, and a passage named under the wrong paper, are not found.
func TestOutlineAndPassageText(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann, bob, private, other uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, discovered_by) VALUES ('Ann''s', 'upload', $1) RETURNING id`, ann).Scan(&private))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('Shared', 'manual', 'public') RETURNING id`).Scan(&other))
	_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, ann, private)
	require.NoError(t, err)
	long := strings.Repeat("spaced repetition  flattens\nthe curve ", 20)
	passages := []struct {
		section, content string
		page             int
	}{{"", "Title page words.", 1}, {"2 Method", long, 2}, {"3 Results", "We find that it works.", 3}}
	ids := make([]uuid.UUID, len(passages))
	// Inserted last first: the outline follows chunk_index, not the rows' order.
	for i := len(passages) - 1; i >= 0; i-- {
		c := passages[i]
		var sec any
		if c.section != "" {
			sec = c.section
		}
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO paper_chunks (paper_id, chunk_index, content, section, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, $3, $4, $5, $5, 0, 1, 1) RETURNING id`, private, i, c.content, sec, c.page).Scan(&ids[i]))
	}
	st := New(pool)

	out, err := st.Outline(ctx, ann, private)
	require.NoError(t, err)
	require.Len(t, out, 3)
	require.Equal(t, []int{0, 1, 2}, []int{out[0].Index, out[1].Index, out[2].Index})
	require.Equal(t, ids, []uuid.UUID{out[0].ChunkID, out[1].ChunkID, out[2].ChunkID})
	require.Equal(t, "", out[0].Section, "no heading yet")
	require.Equal(t, "2 Method", out[1].Section)
	require.Equal(t, "3 Results", out[2].Section)
	require.Equal(t, "Title page words.", out[0].Preview)
	require.NotContains(t, out[1].Preview, "  ", "spaces collapsed")
	require.NotContains(t, out[1].Preview, "\n")
	require.True(t, strings.HasSuffix(out[1].Preview, "…"), out[1].Preview)
	require.LessOrEqual(t, len([]rune(out[1].Preview)), previewRunes+1)

	p, err := st.VisiblePassageText(ctx, ann, private, ids[1])
	require.NoError(t, err)
	require.Equal(t, long, p.Content, "the passage's text as stored, not collapsed")
	require.Equal(t, 2, p.PageStart)

	_, err = st.Outline(ctx, bob, private)
	require.ErrorIs(t, err, ErrNotFound, "Ann's private paper does not exist for Bob")
	_, err = st.VisiblePassageText(ctx, bob, private, ids[1])
	require.ErrorIs(t, err, ErrNotFound)
	_, err = st.VisiblePassageText(ctx, ann, other, ids[1])
	require.ErrorIs(t, err, ErrNotFound, "a passage named under another paper")
	empty, err := st.Outline(ctx, bob, other)
	require.NoError(t, err)
	require.Empty(t, empty, "a visible paper without text has no passages")
}
