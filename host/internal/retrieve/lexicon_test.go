package retrieve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

type lexBundle struct {
	pool     *pgxpool.Pool
	ann, bob uuid.UUID
}

func setupLex(t *testing.T) *lexBundle {
	t.Helper()
	b := &lexBundle{pool: dbtest.NewDB(t)}
	ctx := context.Background()
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&b.ann))
	require.NoError(t, b.pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&b.bob))
	return b
}

// paper inserts a paper (public, or private to owner and in their library) with
// one passage per text.
func (b *lexBundle) paper(t *testing.T, owner *uuid.UUID, texts ...string) (uuid.UUID, []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	var paper uuid.UUID
	if owner == nil {
		require.NoError(t, b.pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility) VALUES ('Public', 'manual', 'public') RETURNING id`).Scan(&paper))
	} else {
		require.NoError(t, b.pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility, discovered_by) VALUES ('Private', 'upload', 'private', $1)
			RETURNING id`, *owner).Scan(&paper))
		_, err := b.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, *owner, paper)
		require.NoError(t, err)
	}
	rows := make([][]any, len(texts))
	ids := make([]uuid.UUID, len(texts))
	for i, text := range texts {
		ids[i] = uuid.New()
		rows[i] = []any{ids[i], paper, i, text, 1, 1, 0, len(text), 10}
	}
	_, err := b.pool.CopyFrom(ctx, pgx.Identifier{"paper_chunks"},
		[]string{"id", "paper_id", "chunk_index", "content", "page_start", "page_end", "char_start", "char_end", "token_count"},
		pgx.CopyFromRows(rows))
	require.NoError(t, err)
	return paper, ids
}

// A passage that holds a common word many times ranks first although it comes
// after more than a thousand others in index order: every match is ranked. The
// PostgreSQL ranking, capped at the first thousand matches, never sees it.
func TestLexicalRanksMatchesPastTheCap(t *testing.T) {
	t.Parallel()
	b := setupLex(t)
	ctx := context.Background()
	filler := make([]string, lexicalCandidates+200)
	for i := range filler {
		filler[i] = fmt.Sprintf("The model was fitted to sample %d of the cohort.", i)
	}
	b.paper(t, nil, filler...)
	_, late := b.paper(t, nil, "Model after model: the model of models, a model.")

	got, err := New(b.pool, nil, nil).Search(ctx, b.ann, "model", nil, 5)
	require.NoError(t, err)
	require.Len(t, got, 5)
	require.Equal(t, late[0], got[0].ChunkID)
	require.NotEmpty(t, got[0].Highlights)

	capped := New(b.pool, nil, nil)
	capped.capped = true
	old, err := capped.Search(ctx, b.ann, "model", nil, 5)
	require.NoError(t, err)
	require.NotContains(t, chunkIDs(old), late[0], "the capped ranking stops before it")
}

// Two nodes (two Retrievers over one database) each see, at their next search, a
// passage added, a passage's text changed, a passage deleted and a paper made
// public or private, whichever node's process wrote it; another user's private
// passages never appear.
func TestLexicalIndexFollowsWritesAcrossNodes(t *testing.T) {
	t.Parallel()
	b := setupLex(t)
	ctx := context.Background()
	nodeA, nodeB := New(b.pool, nil, nil), New(b.pool, nil, nil)
	_, first := b.paper(t, nil, "Spaced repetition flattens the forgetting curve.")
	require.NoError(t, nodeA.Warm(ctx))
	require.NoError(t, nodeB.Warm(ctx))

	search := func(node *Retriever, user uuid.UUID, q string) []uuid.UUID {
		t.Helper()
		got, err := node.Search(ctx, user, q, nil, 10)
		require.NoError(t, err)
		return chunkIDs(got)
	}
	both := func(user uuid.UUID, q string) []uuid.UUID {
		t.Helper()
		a := search(nodeA, user, q)
		require.ElementsMatch(t, a, search(nodeB, user, q), "both nodes agree")
		return a
	}
	require.Equal(t, first, both(b.ann, "forgetting"))

	_, added := b.paper(t, nil, "Interleaving beats blocking for forgetting rates.")
	require.ElementsMatch(t, append(first, added...), both(b.ann, "forgetting"), "a new passage")

	_, err := b.pool.Exec(ctx, `UPDATE paper_chunks SET content = 'Interleaving beats blocking.' WHERE id = $1`, added[0])
	require.NoError(t, err)
	require.Equal(t, first, both(b.ann, "forgetting"), "a changed passage")
	require.Equal(t, added, both(b.ann, "blocking"))

	_, err = b.pool.Exec(ctx, `DELETE FROM paper_chunks WHERE id = $1`, first[0])
	require.NoError(t, err)
	require.Empty(t, both(b.ann, "forgetting"), "a deleted passage")

	secret, private := b.paper(t, &b.bob, "Bob's unpublished forgetting curve data.")
	require.Equal(t, private, both(b.bob, "forgetting"), "its owner finds it")
	require.Empty(t, both(b.ann, "forgetting"), "another user's private passage never appears")
	require.Empty(t, both(b.ann, "bob's unpublished"))

	_, err = b.pool.Exec(ctx, `UPDATE papers SET visibility = 'public' WHERE id = $1`, secret)
	require.NoError(t, err)
	require.Equal(t, private, both(b.ann, "forgetting"), "made public")
	_, err = b.pool.Exec(ctx, `UPDATE papers SET visibility = 'private' WHERE id = $1`, secret)
	require.NoError(t, err)
	require.Empty(t, both(b.ann, "forgetting"), "made private again")
	_, err = b.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'manual_save')`, b.ann, secret)
	require.NoError(t, err)
	require.Equal(t, private, both(b.ann, "forgetting"), "in Ann's library now")

	_, err = b.pool.Exec(ctx, `DELETE FROM papers WHERE id = $1`, secret)
	require.NoError(t, err)
	require.Empty(t, both(b.bob, "forgetting"), "a deleted paper")
}

// A write whose transaction began before a search and committed after it is
// found by the next search: the change log is read from the oldest transaction
// still running, not from the newest change seen.
func TestLexicalIndexSeesLateCommits(t *testing.T) {
	t.Parallel()
	b := setupLex(t)
	ctx := context.Background()
	node := New(b.pool, nil, nil)
	b.paper(t, nil, "Retrieval practice improves recall.")
	require.NoError(t, node.Warm(ctx))

	var paper uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility) VALUES ('Late', 'manual', 'public') RETURNING id`).Scan(&paper))
	slow, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = slow.Rollback(ctx) }()
	var late uuid.UUID
	require.NoError(t, slow.QueryRow(ctx, `
		INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
		VALUES ($1, 0, 'Testing effects on recall, measured late.', 1, 1, 0, 40, 7) RETURNING id`, paper).Scan(&late))

	_, quick := b.paper(t, nil, "Recall after a week.")
	got, err := node.Search(ctx, b.ann, "recall", nil, 10)
	require.NoError(t, err)
	require.Len(t, got, 2, "the slow transaction has not committed")
	require.Contains(t, chunkIDs(got), quick[0])

	require.NoError(t, slow.Commit(ctx))
	got, err = node.Search(ctx, b.ann, "recall", nil, 10)
	require.NoError(t, err)
	require.Contains(t, chunkIDs(got), late)
}

// A quoted phrase matches only where its words stand together, as in PostgreSQL;
// a passage holding them apart (and so scoring higher) is left out.
func TestLexicalPhrase(t *testing.T) {
	t.Parallel()
	b := setupLex(t)
	ctx := context.Background()
	_, ids := b.paper(t, nil,
		"Spaced practice and repetition: repetition spaced out, spaced again, repetition again.",
		"We used spaced repetition.")
	got, err := New(b.pool, nil, nil).Search(ctx, b.ann, `"spaced repetition"`, nil, 5)
	require.NoError(t, err)
	require.Equal(t, ids[1:], chunkIDs(got))
	got, err = New(b.pool, nil, nil).Search(ctx, b.ann, `spaced repetition`, nil, 5)
	require.NoError(t, err)
	require.Equal(t, ids, chunkIDs(got), "without quotes, both, the one with more of the words first")
	got, err = New(b.pool, nil, nil).Search(ctx, b.ann, `spaced -practice`, nil, 5)
	require.NoError(t, err)
	require.Equal(t, ids[1:], chunkIDs(got), "a word excluded")
	got, err = New(b.pool, nil, nil).Search(ctx, b.ann, `the of and`, nil, 5)
	require.NoError(t, err)
	require.Empty(t, got, "stop words only match nothing")
	require.True(t, strings.Contains(AnyWords("spaced, practice"), " or "))
	got, err = New(b.pool, nil, nil).SearchQuestion(ctx, b.ann, "what spaced practice?", nil, 5)
	require.NoError(t, err)
	require.Equal(t, ids, chunkIDs(got), "a question matches any of its words")
}

// While the index is still loading (held up here), a search is answered by the
// capped ranking in PostgreSQL after a short wait instead of waiting for the load;
// once it has loaded, searches use it.
func TestASearchDoesNotWaitForTheIndexToLoad(t *testing.T) {
	t.Parallel()
	b := setupLex(t)
	ctx := context.Background()
	_, chunks := b.paper(t, nil, "reciprocal rank fusion of lexical and dense rankings")
	r := New(b.pool, nil, nil)
	r.lex.mu.Lock() // the load cannot start its work
	out, err := r.lexical(ctx, b.ann, "rank fusion", nil, 10, nil)
	require.NoError(t, err)
	require.Equal(t, chunks, chunkIDs(out), "answered without the index")
	require.False(t, r.lex.ready.Load())
	r.lex.mu.Unlock()
	require.Eventually(t, r.lex.ready.Load, 10*time.Second, 10*time.Millisecond, "the load went on in the background")
	out, err = r.lexical(ctx, b.ann, "rank fusion", nil, 10, nil)
	require.NoError(t, err)
	require.Equal(t, chunks, chunkIDs(out))
}
