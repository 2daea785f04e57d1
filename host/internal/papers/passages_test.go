package papers

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// A passage's snippet is plain text: the words that matched come back as byte
// offsets, never as marks in the text; what the passage itself holds (« », the
// private-use characters ts_headline's marks were once made of) is its text.
func TestSearchPassagesSnippetIsPlainTextWithHighlights(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user, paper uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility) VALUES ('Spacing', 'manual', 'public') RETURNING id`).Scan(&paper))
	_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save')`, user, paper)
	require.NoError(t, err)
	content := "Learners « quoted » who used spaced\u00a0repetition remembered\u00e9 more \uE000after\uE001 a month; " +
		"spaced   repetition flattens the forgetting curve."
	_, err = pool.Exec(ctx, `
		INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		VALUES ($1, 0, $2, 1, 1, 0, $3, 20)`, paper, content, len(content))
	require.NoError(t, err)

	found, err := New(pool).SearchPassages(ctx, user, SearchParams{Query: "spaced repetition", Limit: 5, Candidates: 100})
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Empty(t, found[0].Snippet, "ranking builds no snippet")
	heads, err := New(pool).Headlines(ctx, user, "spaced repetition", []uuid.UUID{found[0].ChunkID})
	require.NoError(t, err)
	p := heads[found[0].ChunkID]
	require.Contains(t, p.Snippet, "\uE000after\uE001")
	require.Contains(t, p.Snippet, "« quoted »", "the passage's own guillemets are its text, kept")
	require.NotEmpty(t, p.Highlights)
	var words []string
	last := 0
	for _, h := range p.Highlights {
		require.LessOrEqual(t, last, h[0], "highlights are in order and do not overlap")
		require.Less(t, h[0], h[1])
		require.LessOrEqual(t, h[1], len(p.Snippet))
		words = append(words, strings.ToLower(p.Snippet[h[0]:h[1]]))
		last = h[1]
	}
	require.Contains(t, words, "spaced")
	require.Contains(t, words, "repetition")
	for _, w := range words {
		require.Contains(t, []string{"spaced", "repetition"}, w, "only the query's words are highlighted")
	}
}
