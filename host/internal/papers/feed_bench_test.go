package papers

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// BenchmarkFeedPage measures one feed page (20 items) for a user holding 10k library
// rows, among 10 such users, over a corpus of 100k papers: the target is p95
// under 20 ms. It reports p50 and p95 per view and scope.
func BenchmarkFeedPage(b *testing.B) {
	pool := dbtest.NewDB(b)
	ctx := context.Background()
	seed := []string{
		`INSERT INTO papers (title, abstract, source, visibility, discovered_at, doi)
		 SELECT 'Paper ' || g, 'Abstract of paper ' || g || ' about topic ' || (g % 97), 'openalex', 'public',
		        now() - make_interval(mins => g), '10.9999/bench.' || g
		   FROM generate_series(1, 100000) g`,
		`INSERT INTO users (email) SELECT 'user' || u || '@example.org' FROM generate_series(1, 10) u`,
		// Each user keeps 10k papers: a different stride of the corpus.
		`INSERT INTO user_library (user_id, paper_id, added_via, added_at)
		 SELECT u.id, p.id, 'manual_save', now() - make_interval(secs => p.rn)
		   FROM (SELECT id, row_number() OVER (ORDER BY email) AS k FROM users) u
		   JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM papers) p ON p.rn % 10 = u.k - 1`,
		// And has a state on a third of them, spread over the states.
		`INSERT INTO paper_user_state (user_id, paper_id, state, starred)
		 SELECT ul.user_id, ul.paper_id,
		        (ARRAY['to_read', 'reading', 'done', 'trash', 'inbox'])[1 + (abs(hashtext(ul.paper_id::text)) % 5)],
		        abs(hashtext(ul.paper_id::text)) % 7 = 0
		   FROM user_library ul WHERE abs(hashtext(ul.paper_id::text || ul.user_id::text)) % 3 = 0`,
		`ANALYZE`,
	}
	for _, q := range seed {
		_, err := pool.Exec(ctx, q)
		require.NoError(b, err)
	}
	rows, err := pool.Query(ctx, `SELECT id FROM users`)
	require.NoError(b, err)
	users, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(b, err)
	st := New(pool)

	// The default sort, then the other sorts and the text filter (docs/feed.md).
	cases := []struct{ view, scope, sort, query string }{
		{"all_non_trash", ScopeLibrary, "", ""}, {"inbox", ScopeLibrary, "", ""}, {"reading", ScopeLibrary, "", ""},
		{"starred", ScopeLibrary, "", ""}, {"all_non_trash", ScopeCorpus, "", ""}, {"inbox", ScopeCorpus, "", ""},
		{"all_non_trash", ScopeLibrary, SortYear, ""}, {"all_non_trash", ScopeLibrary, SortTitle, ""},
		{"all_non_trash", ScopeLibrary, "", "paper 12"},
	}
	for _, c := range cases {
		name := c.scope + "/" + c.view
		if c.sort != "" {
			name += "/sort=" + c.sort
		}
		if c.query != "" {
			name += "/q"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				u := users[rng.IntN(len(users))]
				start := time.Now()
				page, err := st.Feed(ctx, u, FeedParams{View: c.view, Scope: c.scope, Sort: c.sort, Query: c.query, Limit: 20})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if page.NextCursor != "" && rng.IntN(2) == 0 {
					// Half the time, also fetch the second page.
					start = time.Now()
					if _, err := st.Feed(ctx, u, FeedParams{View: c.view, Scope: c.scope, Sort: c.sort, Query: c.query, Limit: 20, Cursor: page.NextCursor}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
		})
	}
}
