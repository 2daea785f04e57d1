package retrieve

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
)

// fixed embeds every text as the same vector: the question sits at (1, 0, 0, 0).
type fixed struct{}

func (fixed) Embed(_ context.Context, texts []string) (embedding.Result, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return embedding.Result{Model: "fixed-4", Vectors: out}, nil
}

// When another user's private passages are the nearest vectors, filling every
// place the vector ranking first asks for, the ranking asks again for more and
// still finds the public passage behind them, with where it is.
func TestVectorRankingLooksPastOthersPrivatePassages(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann, bob, private, public uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility, discovered_by) VALUES ('Ann''s notes', 'upload', 'private', $1) RETURNING id`, ann).Scan(&private))
	_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, ann, private)
	require.NoError(t, err)
	require.NoError(t, pool.QueryRow(ctx, `
		INSERT INTO papers (title, source, visibility) VALUES ('Spacing effects', 'manual', 'public') RETURNING id`).Scan(&public))

	n := candidates(5)
	var items []vectorstore.Item
	chunk := func(paper uuid.UUID, index int, content string, page int, v []float32) {
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, $3, $4, $4, 0, $5, 5) RETURNING id`, paper, index, content, page, len(content)).Scan(&id))
		items = append(items, vectorstore.Item{ChunkID: id, PaperID: paper, Vector: v})
	}
	for i := range 2 * n { // more than the first request's 2n: only the second reaches the public one
		chunk(private, i, "a private passage", 1, []float32{1, float32(i) / 1000, 0, 0})
	}
	chunk(public, 0, "reviews spaced over days are remembered longer", 7, []float32{0.9, 0.4, 0, 0})
	vectors := embedded.New(pool)
	require.NoError(t, vectors.Upsert(ctx, "fixed-4", items))

	found, err := New(pool, fixed{}, vectors).Search(ctx, bob, "zzzz", nil, 5)
	require.NoError(t, err)
	require.Len(t, found, 1, "bob sees the public passage only")
	require.Equal(t, public, found[0].PaperID)
	require.Equal(t, "Spacing effects", found[0].Title)
	require.Equal(t, 7, found[0].PageStart)
	require.Equal(t, "reviews spaced over days are remembered longer", found[0].Snippet)

	annFinds, err := New(pool, fixed{}, vectors).Search(ctx, ann, "zzzz", nil, 5)
	require.NoError(t, err)
	require.Len(t, annFinds, 5)
	require.Equal(t, private, annFinds[0].PaperID, "ann's own passages are nearest for her")
}
