package papers

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

type feedRow struct {
	id      uuid.UUID
	title   string
	authors string // JSON
	date    *time.Time
	added   time.Time
}

// seedFeed puts papers with ties in every sort key into one user's library.
func seedFeed(t *testing.T) (*Store, uuid.UUID, []feedRow) {
	t.Helper()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rows := []feedRow{
		{title: "alpha", authors: `[{"name": "Ada Smith"}, {"name": "Bo Li"}]`, date: date(2021, 1, 1), added: base},
		{title: "Alpha", authors: `[{"name": "Cy Jones"}]`, date: date(2021, 1, 1), added: base},
		{title: "beta", authors: `[]`, added: base.Add(time.Hour)},
		{title: "gamma", authors: `[{"name": "Di SMITH"}]`, date: date(2023, 6, 1), added: base.Add(2 * time.Hour)},
		{title: "delta", authors: `[{"name": "Ed 100% Pure"}]`, added: base.Add(2 * time.Hour)},
		{title: "epsilon", authors: `[{"name": "Fay_Wu"}]`, date: date(2019, 1, 1), added: base.Add(-time.Hour)},
		{title: "zeta", authors: `[{"name": "Gus Smithson"}]`, date: date(2023, 6, 1), added: base.Add(3 * time.Hour)},
	}
	for i := range rows {
		r := &rows[i]
		var precision any
		if r.date != nil {
			precision = "day"
		}
		require.NoError(t, pool.QueryRow(ctx, `
			INSERT INTO papers (title, authors, publication_date, publication_date_precision, source, visibility, discovered_at)
			VALUES ($1, $2, $3, $4, 'manual', 'public', $5) RETURNING id`,
			r.title, r.authors, r.date, precision, r.added).Scan(&r.id))
		_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via, added_at) VALUES ($1, $2, 'manual_save', $3)`,
			user, r.id, r.added)
		require.NoError(t, err)
	}
	return New(pool), user, rows
}

// seedFeedAndBob is seedFeed with a second user, Bob, who has nothing yet.
func seedFeedAndBob(t *testing.T) (st *Store, ann, bob uuid.UUID, rows []feedRow) {
	t.Helper()
	st, ann, rows = seedFeed(t)
	require.NoError(t, st.pool.QueryRow(context.Background(), `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	return st, ann, bob, rows
}

// walk pages through the feed two items at a time and returns the ids in order.
func walk(t *testing.T, st *Store, user uuid.UUID, p FeedParams) []uuid.UUID {
	t.Helper()
	p.Limit = 2
	var ids []uuid.UUID
	for range 20 {
		page, err := st.Feed(context.Background(), user, p)
		require.NoError(t, err)
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == "" {
			return ids
		}
		p.Cursor = page.NextCursor
	}
	t.Fatal("the page walk did not end")
	return nil
}

// feedOrders are the feed's sorts, written over feedRow.
var feedOrders = map[string]func(a, b feedRow) int{
	SortAdded: func(a, b feedRow) int { return cmp.Or(b.added.Compare(a.added), byID(b, a)) },
	SortYear:  func(a, b feedRow) int { return cmp.Or(dateKey(b).Compare(dateKey(a)), byID(b, a)) },
	SortTitle: func(a, b feedRow) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.title), strings.ToLower(b.title)), byID(a, b))
	},
}

func byID(a, b feedRow) int { return strings.Compare(a.id.String(), b.id.String()) }

func dateKey(r feedRow) time.Time {
	if r.date == nil {
		return time.Time{}
	}
	return *r.date
}

func TestFeedSortsWalkEveryRowOnceInOrder(t *testing.T) {
	t.Parallel()
	st, user, rows := seedFeed(t)
	for _, scope := range []string{ScopeLibrary, ScopeCorpus} {
		for sort, order := range feedOrders {
			t.Run(scope+"/"+sort, func(t *testing.T) {
				want := slices.Clone(rows)
				slices.SortFunc(want, order)
				var wantIDs []uuid.UUID
				for _, r := range want {
					wantIDs = append(wantIDs, r.id)
				}
				require.Equal(t, wantIDs, walk(t, st, user, FeedParams{Scope: scope, Sort: sort}))
			})
		}
	}
	// The default is the added sort.
	require.Equal(t, walk(t, st, user, FeedParams{Sort: SortAdded}), walk(t, st, user, FeedParams{}))
}

func TestFeedFiltersByTitleOrAuthor(t *testing.T) {
	t.Parallel()
	st, user, rows := seedFeed(t)
	titles := func(ids []uuid.UUID) []string {
		var out []string
		for _, id := range ids {
			for _, r := range rows {
				if r.id == id {
					out = append(out, r.title)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		q    string
		want []string
	}{
		{"smith", []string{"alpha", "gamma", "zeta"}},
		{"  ALPHA ", []string{"Alpha", "alpha"}},
		{"ta", []string{"beta", "delta", "zeta"}},
		{"100%", []string{"delta"}},
		{"%", []string{"delta"}},
		{"_", []string{"epsilon"}},
		{`\`, nil},
		{"no such words", nil},
		{"", []string{"Alpha", "alpha", "beta", "delta", "epsilon", "gamma", "zeta"}},
	}
	for _, c := range cases {
		for _, sort := range SortNames() {
			t.Run(c.q+"/"+sort, func(t *testing.T) {
				require.Equal(t, c.want, titles(walk(t, st, user, FeedParams{Sort: sort, Query: c.q})))
			})
		}
	}
}

func TestFeedRefusesACursorOfAnotherSort(t *testing.T) {
	t.Parallel()
	st, user, _ := seedFeed(t)
	ctx := context.Background()
	for _, from := range SortNames() {
		page, err := st.Feed(ctx, user, FeedParams{Sort: from, Limit: 2})
		require.NoError(t, err)
		require.NotEmpty(t, page.NextCursor)
		for _, to := range SortNames() {
			_, err := st.Feed(ctx, user, FeedParams{Sort: to, Limit: 2, Cursor: page.NextCursor})
			if to == from {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrBadCursor, "a %s cursor in the %s sort", from, to)
			}
		}
	}
	_, err := st.Feed(ctx, user, FeedParams{Sort: "rating"})
	var ve *ViewError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "sort", ve.Field)
}

// TestLibrarySortKeysFollowThePaper: the year and title keys kept beside each
// library row (migration 0012) follow the paper's title and date as they change,
// and a row added or moved to another paper takes that paper's keys, so the
// library's sorts stay the corpus's.
func TestLibrarySortKeysFollowThePaper(t *testing.T) {
	t.Parallel()
	st, user, rows := seedFeed(t)
	ctx := context.Background()
	same := func(sort string) {
		t.Helper()
		lib := walk(t, st, user, FeedParams{Sort: sort})
		corpus := walk(t, st, user, FeedParams{Sort: sort, Scope: ScopeCorpus})
		corpus = slices.DeleteFunc(corpus, func(id uuid.UUID) bool { return !slices.Contains(lib, id) })
		require.Len(t, lib, len(rows))
		require.Equal(t, corpus, lib, "the library's %s order is the corpus's keys' order", sort)
	}
	// Enrichment fills and corrects a paper's record after it joined libraries.
	_, err := st.pool.Exec(ctx, `UPDATE papers SET title = 'Omega', publication_date = '2030-01-01', publication_date_precision = 'year' WHERE id = $1`, rows[2].id)
	require.NoError(t, err)
	_, err = st.pool.Exec(ctx, `UPDATE papers SET publication_date = NULL, publication_date_precision = NULL WHERE id = $1`, rows[3].id)
	require.NoError(t, err)
	same(SortYear)
	same(SortTitle)
	require.Equal(t, rows[2].id, walk(t, st, user, FeedParams{Sort: SortYear})[0], "the newest date comes first")

	// A merge moves a library row to the surviving paper.
	var survivor uuid.UUID
	require.NoError(t, st.pool.QueryRow(ctx, `INSERT INTO papers (title, publication_date, publication_date_precision, source, visibility)
		VALUES ('aardvark', '1999-01-01', 'year', 'manual', 'public') RETURNING id`).Scan(&survivor))
	_, err = st.pool.Exec(ctx, `UPDATE user_library SET paper_id = $2 WHERE user_id = $1 AND paper_id = $3`, user, survivor, rows[4].id)
	require.NoError(t, err)
	same(SortTitle)
	same(SortYear)
	require.Equal(t, survivor, walk(t, st, user, FeedParams{Sort: SortTitle})[0])
}

// TestCorpusPagesMergeThePublicAndTheCallersPrivatePapers: a corpus page holds
// the public papers and the caller's own private ones in every sort, walking past
// other users' private uploads however new they are.
func TestCorpusPagesMergeThePublicAndTheCallersPrivatePapers(t *testing.T) {
	t.Parallel()
	st, user, other, rows := seedFeedAndBob(t)
	ctx := context.Background()
	base := rows[0].added
	paper := func(title string, owner *uuid.UUID, visibility string, at time.Time, d *time.Time) feedRow {
		t.Helper()
		r := feedRow{title: title, date: d, added: at}
		var precision any
		if d != nil {
			precision = "day"
		}
		require.NoError(t, st.pool.QueryRow(ctx, `
			INSERT INTO papers (title, publication_date, publication_date_precision, source, visibility, discovered_by, discovered_at)
			VALUES ($1, $2, $3, 'upload', $4, $5, $6) RETURNING id`, title, d, precision, visibility, owner, at).Scan(&r.id))
		if owner != nil {
			_, err := st.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'upload')`, *owner, r.id)
			require.NoError(t, err)
		}
		return r
	}
	// Ann's uploads fall between the public papers in every sort; Bob's are the
	// newest of all, in every sort.
	mine := []feedRow{
		paper("Ann's draft", &user, "private", base.Add(90*time.Minute), date(2022, 1, 1)),
		paper("ann's notes", &user, "private", base.Add(-2*time.Hour), nil),
	}
	for i := range 30 {
		paper("Bob's upload", &other, "private", base.Add(time.Duration(10+i)*time.Hour), date(2030, 1, 1))
	}
	// A private paper whose discoverer is gone is everybody's (publicPredicate).
	orphan := paper("an instance feed's paper", nil, "private", base.Add(30*time.Minute), date(2020, 1, 1))
	visible := append(append(slices.Clone(rows), mine...), orphan)

	// A library row that disagreed with its public paper changes nothing: the
	// paper is listed once.
	_, err := st.pool.Exec(ctx, `UPDATE user_library SET paper_public = false WHERE user_id = $1 AND paper_id = $2`, user, rows[1].id)
	require.NoError(t, err)
	var stale bool
	require.NoError(t, st.pool.QueryRow(ctx, `SELECT NOT paper_public FROM user_library WHERE user_id = $1 AND paper_id = $2`, user, rows[1].id).Scan(&stale))
	require.True(t, stale)
	for sort, order := range feedOrders {
		want := slices.Clone(visible)
		slices.SortFunc(want, order)
		var wantIDs []uuid.UUID
		for _, r := range want {
			wantIDs = append(wantIDs, r.id)
		}
		require.Equal(t, wantIDs, walk(t, st, user, FeedParams{Scope: ScopeCorpus, Sort: sort}), sort)
	}
	// The view still applies to both sides: Ann trashes one public paper and one
	// of her own.
	trashState := "trash"
	for _, id := range []uuid.UUID{rows[0].id, mine[0].id} {
		_, err = st.SetState(ctx, user, id, StatePatch{State: &trashState})
		require.NoError(t, err)
	}
	trash := walk(t, st, user, FeedParams{Scope: ScopeCorpus, View: "trash"})
	require.ElementsMatch(t, []uuid.UUID{rows[0].id, mine[0].id}, trash)
	require.NotContains(t, walk(t, st, user, FeedParams{Scope: ScopeCorpus}), mine[0].id)
}
