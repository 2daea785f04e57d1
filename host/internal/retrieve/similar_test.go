package retrieve

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bm25"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/papers"
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

	// The vector ranking reads who may see what from the lexical index, which a
	// change of visibility reaches before the next search.
	r := New(pool, fixed{}, vectors)
	share := func(visibility string) {
		_, err := pool.Exec(ctx, `UPDATE papers SET visibility = $2 WHERE id = $1`, private, visibility)
		require.NoError(t, err)
	}
	share("public")
	found, err = r.Search(ctx, bob, "zzzz", nil, 5)
	require.NoError(t, err)
	require.Len(t, found, 5)
	require.Equal(t, private, found[0].PaperID, "shared with everyone, ann's notes are nearest for bob too")
	share("private")
	found, err = r.Search(ctx, bob, "zzzz", nil, 5)
	require.NoError(t, err)
	require.Len(t, found, 1, "private again, bob sees the public passage only")
	require.Equal(t, public, found[0].PaperID)
}

// TestTheSightJudgesThePapersTheIndexHolds: the vector ranking's hits are kept by
// the lexical index's sight where it knows the paper (public, or private and the
// caller's) and asked of PostgreSQL where it does not.
func TestTheSightJudgesThePapersTheIndexHolds(t *testing.T) {
	t.Parallel()
	pool, user, public := userAndPublicPaper(t, "Spacing effects")
	ctx := context.Background()
	var other uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&other))
	paper := func(owner uuid.UUID) uuid.UUID {
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO papers (title, source, visibility, discovered_by) VALUES ('notes', 'upload', 'private', $1) RETURNING id`, owner).Scan(&id))
		_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, owner, id)
		require.NoError(t, err)
		return id
	}
	mine, theirs, unindexedTheirs := paper(user), paper(other), paper(other)
	// The index holds a paper PostgreSQL has never heard of, as public: only the
	// sight can let it through.
	indexedOnly := uuid.New()
	index := bm25.New()
	for id, everyone := range map[uuid.UUID]bool{mine: false, theirs: false, indexedOnly: true} {
		index.AppendPapers([]bm25.Paper{{ID: id, Public: everyone, Passages: []bm25.Passage{{ID: uuid.New(), PaperID: id}}}})
	}
	s := &sight{index: index, private: map[uuid.UUID]bool{mine: true}}
	hits := []vectorstore.Hit{{ChunkID: uuid.New(), PaperID: theirs}, {ChunkID: uuid.New(), PaperID: indexedOnly},
		{ChunkID: uuid.New(), PaperID: unindexedTheirs}, {ChunkID: uuid.New(), PaperID: mine}, {ChunkID: uuid.New(), PaperID: public}}
	r := New(pool, nil, nil)
	got, err := r.visible(ctx, user, hits, s)
	require.NoError(t, err)
	var kept []uuid.UUID
	for _, p := range got {
		kept = append(kept, p.PaperID)
	}
	require.Equal(t, []uuid.UUID{indexedOnly, mine, public}, kept, "the index's judgement, then PostgreSQL's for the papers it lacks")

	got, err = r.visible(ctx, user, hits, nil)
	require.NoError(t, err)
	kept = kept[:0]
	for _, p := range got {
		kept = append(kept, p.PaperID)
	}
	require.Equal(t, []uuid.UUID{mine, public}, kept, "without a sight PostgreSQL judges every paper")
}

// A search that excludes a word excludes it from the vector ranking too: the
// nearest vectors are passages about rehabilitation, which the lexical ranking
// rightly leaves out of "heart failure -rehabilitation", and they stay out of the
// fused answer; the ranking asks for more to fill its places. A question's dash
// is a word, not a negation: asked as a question, the nearest passages stay.
func TestVectorRankingHonoursNegations(t *testing.T) {
	t.Parallel()
	pool, user, paper := userAndPublicPaper(t, "Heart failure care")
	ctx := context.Background()
	n := candidates(5)
	var items []vectorstore.Item
	chunk := func(index int, content string, v []float32) {
		var id uuid.UUID
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO paper_chunks (paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, $3, 1, 1, 0, $4, 5) RETURNING id`, paper, index, content, len(content)).Scan(&id))
		items = append(items, vectorstore.Item{ChunkID: id, PaperID: paper, Vector: v})
	}
	// More rehabilitation passages than the first request's 2n, all nearer than
	// the two that do not mention it.
	for i := range 2*n + 3 {
		chunk(i, "Cardiac rehabilitation programmes after an admission", []float32{1, float32(i) / 1000, 0, 0})
	}
	chunk(2*n+3, "Diuretic dosing for patients with heart failure", []float32{0.9, 0.4, 0, 0})
	chunk(2*n+4, "Sodium restriction did not change outcomes", []float32{0.8, 0.6, 0, 0})
	vectors := embedded.New(pool)
	require.NoError(t, vectors.Upsert(ctx, "fixed-4", items))
	r := New(pool, fixed{}, vectors)

	found, err := r.Search(ctx, user, "heart failure -rehabilitation", nil, 5)
	require.NoError(t, err)
	var snippets []string
	for _, p := range found {
		snippets = append(snippets, p.Snippet)
		require.NotContains(t, strings.ToLower(p.Snippet), "rehabilitation")
	}
	require.ElementsMatch(t, []string{"Diuretic dosing for patients with heart failure", "Sodium restriction did not change outcomes"}, snippets)

	found, err = r.Search(ctx, user, "admission", nil, 5)
	require.NoError(t, err)
	require.Len(t, found, 5, "without a negation the nearest passages stay")

	asked, err := r.SearchQuestion(ctx, user, "what helps in heart failure - rehabilitation?", nil, 5)
	require.NoError(t, err)
	require.Len(t, asked, 5)
	require.Contains(t, asked[0].Text, "rehabilitation", "a question's dash negates nothing")
}

// What a query's negations rule out never matches the query itself, whatever
// PostgreSQL's web-search syntax made of it, and it holds every word the query
// excludes at its top level: checked on PostgreSQL's own reading of each query
// and text.
func TestExcludedAgreesWithPostgreSQL(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	queries := []string{
		"heart failure -rehabilitation", `a -"heart failure" b`, "-rehab", "x - rehab", "x --rehab",
		"x or -rehab", "x -rehab-test", "x -covid-19", "x -(rehab)", "x -rehab -test", `"heart -failure"`,
		"x,-rehab", "x -o'brien", "covid-19 vaccine", "x -the", "rehab -rehab",
	}
	texts := []string{
		"x rehab", "x", "heart failure b", "a b", "x rehab-test", "x covid-19", "x test", "rehab",
		"x o'brien", "heart failure rehabilitation", "heart failure", "b", "covid-19 vaccine", "x the",
	}
	papersStore := papers.New(pool)
	for _, q := range queries {
		tsq, err := papersStore.TSQuery(ctx, q)
		require.NoError(t, err)
		parsed, err := bm25.ParseQuery(tsq)
		require.NoError(t, err, q)
		excluded := parsed.Excluded()
		for _, text := range texts {
			var matches, ruledOut bool
			require.NoError(t, pool.QueryRow(ctx, `
				SELECT to_tsvector('english', $1) @@ websearch_to_tsquery('english', $2),
				       $3 <> '' AND to_tsvector('english', $1) @@ nullif($3, '')::tsquery`, text, q, excluded).Scan(&matches, &ruledOut))
			require.False(t, matches && ruledOut, "%q rules out %q, which matches it", q, text)
		}
	}
	for q, texts := range map[string][]string{
		"heart failure -rehabilitation": {"heart failure rehabilitation", "rehabilitation"},
		"x -rehab -test":                {"x rehab", "x test"},
		`a -"heart failure" b`:          {"heart failure b"},
	} {
		tsq, err := papersStore.TSQuery(ctx, q)
		require.NoError(t, err)
		parsed, err := bm25.ParseQuery(tsq)
		require.NoError(t, err)
		for _, text := range texts {
			var ruledOut bool
			require.NoError(t, pool.QueryRow(ctx, `SELECT to_tsvector('english', $1) @@ $2::tsquery`, text, parsed.Excluded()).Scan(&ruledOut))
			require.True(t, ruledOut, "%q rules out %q", q, text)
		}
	}
}
