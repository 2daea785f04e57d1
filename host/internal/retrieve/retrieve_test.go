package retrieve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// The API's snippet is plain text, and its highlights, [start, end) byte offsets,
// cover the query's words: no «» or marker characters reach a client.
func TestLexicalSnippetHasHighlightsNotMarks(t *testing.T) {
	t.Parallel()
	pool, user, paper := userAndPublicPaper(t, "Forgetting")
	ctx := context.Background()
	content := "The forgetting curve flattens after every successful review of a card, so reviews can wait longer."
	_, err := pool.Exec(ctx, `
		INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		VALUES ($1, 0, $2, 1, 1, 0, $3, 18)`, paper, content, len(content))
	require.NoError(t, err)

	ranked, err := Lexical(ctx, pool, user, "forgetting curve", nil, 5)
	require.NoError(t, err)
	require.Len(t, ranked, 1)
	require.Empty(t, ranked[0].Snippet, "ranking builds no snippet; only the passages shown get one")

	found, err := New(pool, nil, nil).Search(ctx, user, "forgetting curve", nil, 5)
	require.NoError(t, err)
	require.Len(t, found, 1)
	p := found[0]
	require.Equal(t, content, p.Snippet, "a passage shorter than a snippet is shown whole, as text")
	for _, mark := range []string{"«", "»", "\uE000", "\uE001"} {
		require.NotContains(t, p.Snippet, mark)
	}
	var words []string
	for _, h := range p.Highlights {
		words = append(words, strings.ToLower(p.Snippet[h[0]:h[1]]))
	}
	require.Equal(t, []string{"forgetting", "curve"}, words)

	body, err := json.Marshal(p)
	require.NoError(t, err)
	require.Contains(t, string(body), `"highlights":[[4,14],[15,20]]`)
}

// userAndPublicPaper gives a fresh database with one user and one public paper of
// the title.
func userAndPublicPaper(t *testing.T, title string) (pool *pgxpool.Pool, user, paper uuid.UUID) {
	pool = dbtest.NewDB(t)
	ctx := context.Background()
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility) VALUES ($1, 'manual', 'public') RETURNING id`, title).Scan(&paper))
	return pool, user, paper
}
