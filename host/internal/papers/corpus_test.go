package papers

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func upsert(t *testing.T, pool *pgxpool.Pool, in Input, by *uuid.UUID) (uuid.UUID, bool) {
	t.Helper()
	var id uuid.UUID
	var created bool
	require.NoError(t, pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		id, created, err = UpsertTx(context.Background(), tx, in, by)
		return err
	}))
	return id, created
}

func date(y, m, d int) *time.Time {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return &t
}

func TestUpsertMergesByIdentifiers(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()

	id, created := upsert(t, pool, Input{Title: "  Attention   is all you need ", ArxivID: "arXiv:1706.03762v5", Source: "arxiv",
		PublicationDate: date(2017, 1, 1), DatePrecision: "year", Visibility: "public"}, nil)
	require.True(t, created)

	cites := 100000
	again, created := upsert(t, pool, Input{Title: "Attention Is All You Need", DOI: "https://doi.org/10.48550/ARXIV.1706.03762",
		ArxivID: "1706.03762", Abstract: "The dominant sequence transduction models...", Source: "openalex",
		OpenAlexID: "W2963403868", PublicationDate: date(2017, 6, 12), DatePrecision: "day", CitationCount: &cites,
		Authors: []Author{{Name: "Ashish Vaswani"}}, Visibility: "public"}, nil)
	require.False(t, created)
	require.Equal(t, id, again)

	var title, doi, oa, precision string
	var version, count int
	var d time.Time
	var authors int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT title, doi, openalex_id, arxiv_version, publication_date, publication_date_precision, citation_count,
		       jsonb_array_length(authors)
		  FROM papers WHERE id = $1`, id).Scan(&title, &doi, &oa, &version, &d, &precision, &count, &authors))
	require.Equal(t, "Attention is all you need", title, "the first record's title stays")
	require.Equal(t, "10.48550/arxiv.1706.03762", doi)
	require.Equal(t, "W2963403868", oa)
	require.Equal(t, 5, version)
	require.Equal(t, "day", precision, "a more precise date wins")
	require.Equal(t, 12, d.Day())
	require.Equal(t, 100000, count)
	require.Equal(t, 1, authors)

	_, created = upsert(t, pool, Input{Title: "Something else", DOI: "10.1000/other", Source: "crossref", Visibility: "public"}, nil)
	require.True(t, created)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM papers`).Scan(&n))
	require.Equal(t, 2, n)
}

func TestUpsertNeverCollidesWithAnotherRowsIdentifier(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	a, _ := upsert(t, pool, Input{Title: "A", DOI: "10.1000/a", Source: "crossref", Visibility: "public"}, nil)
	b, _ := upsert(t, pool, Input{Title: "B", ArxivID: "2104.12255", Source: "arxiv", Visibility: "public"}, nil)
	// A record claiming both identifiers matches the DOI row and leaves B's arXiv id to B.
	got, created := upsert(t, pool, Input{Title: "A", DOI: "10.1000/a", ArxivID: "2104.12255", Source: "openalex", Visibility: "public"}, nil)
	require.False(t, created)
	require.Equal(t, a, got)
	var arxiv *string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT arxiv_id FROM papers WHERE id = $1`, a).Scan(&arxiv))
	require.Nil(t, arxiv)
	require.NotEqual(t, a, b)
}

func TestUpsertVisibility(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))

	id, _ := upsert(t, pool, Input{Title: "My draft", DOI: "10.1000/draft", Source: "upload"}, &user)
	var vis string
	var by uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `SELECT visibility, discovered_by FROM papers WHERE id = $1`, id).Scan(&vis, &by))
	require.Equal(t, "private", vis, "private by default")
	require.Equal(t, user, by)

	var before string
	require.NoError(t, pool.QueryRow(ctx, `SELECT row_to_json(p)::text FROM papers p WHERE id = $1`, id).Scan(&before))
	for _, source := range []string{"someblog", "crossref"} {
		shared, created := upsert(t, pool, Input{Title: "The published version", DOI: "10.1000/draft", Abstract: "Public words.",
			Source: source, Visibility: "public"}, nil)
		require.NotEqual(t, id, shared, "a public record from %s gets a shared row of its own", source)
		require.Equal(t, source == "someblog", created)
		require.NoError(t, pool.QueryRow(ctx, `SELECT visibility FROM papers WHERE id = $1`, shared).Scan(&vis))
		require.Equal(t, "public", vis)
	}
	var after string
	require.NoError(t, pool.QueryRow(ctx, `SELECT row_to_json(p)::text FROM papers p WHERE id = $1`, id).Scan(&after))
	require.Equal(t, before, after, "the private row is neither published nor changed")
}

// Ann's upload names a DOI; when Bob's search brings back the public record of the
// same work, Bob gets a shared row and Ann's private paper (with its text) stays
// exactly as it was, private; Ann's own search record fills only her own row.
func TestAnotherUsersSearchNeverPublishesAPrivateUpload(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var ann, bob uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	var upload uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		upload, _, err = UpsertForUserTx(ctx, tx, Input{Title: "Ann's copy", DOI: "10.1000/work", Source: "upload"}, ann, "upload")
		return err
	}))
	snapshot := func() string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT row_to_json(p)::text FROM papers p WHERE id = $1`, upload).Scan(&s))
		return s
	}
	before := snapshot()

	var bobs []uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		bobs, err = UpsertManyTx(ctx, tx, []Input{{Title: "The work", DOI: "10.1000/work", Source: "crossref",
			Visibility: "public", Abstract: "From Crossref."}}, &bob)
		return err
	}))
	require.NotEqual(t, upload, bobs[0], "Bob's search never lands on Ann's private paper")
	require.Equal(t, before, snapshot(), "Ann's paper is unchanged and still private")
	st := New(pool)
	_, err := st.Get(ctx, bob, upload)
	require.ErrorIs(t, err, ErrNotFound, "Bob cannot open Ann's upload")
	again, _, err := func() (uuid.UUID, bool, error) {
		var id uuid.UUID
		var created bool
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			id, created, err = UpsertTx(ctx, tx, Input{Title: "The work", DOI: "10.1000/work", Source: "openalex", Visibility: "public"}, &bob)
			return err
		})
		return id, created, err
	}()
	require.NoError(t, err)
	require.Equal(t, bobs[0], again, "the shared row is the one public records merge into")

	// Bob's import of the DOI links the shared row, never Ann's.
	var imported uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		imported, _, err = UpsertForUserTx(ctx, tx, Input{Title: "The work", DOI: "10.1000/work", Source: "bibtex"}, bob, "import")
		return err
	}))
	require.Equal(t, bobs[0], imported)
	require.Equal(t, before, snapshot())
}

func TestConcurrentUpsertsMakeOneRow(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
				_, _, err := UpsertTx(context.Background(), tx, Input{Title: "Same", DOI: "10.1000/same", Source: "crossref", Visibility: "public"}, nil)
				return err
			})
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM papers`).Scan(&n))
	require.Equal(t, 1, n)
}

func TestUpsertNeedsATitle(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		_, _, err := UpsertTx(context.Background(), tx, Input{Title: "   ", DOI: "10.1000/x"}, nil)
		return err
	})
	require.ErrorIs(t, err, ErrNoIdentity)
}

func TestUpsertManyMatchesInsertsAndFallsBack(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	existing, _ := upsert(t, pool, Input{Title: "Existing", DOI: "10.1000/existing", Source: "crossref", Visibility: "public"}, nil)
	cites := 7
	var ids []uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		ids, err = UpsertManyTx(ctx, tx, []Input{
			{Title: "Existing", DOI: "10.1000/EXISTING", Abstract: "now with an abstract", CitationCount: &cites, Source: "openalex", Visibility: "public"},
			{Title: "New one", DOI: "10.1000/new", Source: "openalex", Visibility: "public"},
			{Title: "New one again", DOI: "10.1000/new", ArxivID: "2101.00001", Source: "arxiv", Visibility: "public"},
			{Title: "Unrelated", ArxivID: "2101.00002v2", Source: "arxiv", Visibility: "public"},
		}, nil)
		return err
	}))
	require.Len(t, ids, 4)
	require.Equal(t, existing, ids[0])
	require.Equal(t, ids[1], ids[2], "two records of one work in the same batch are one row")
	require.NotEqual(t, ids[1], ids[3])

	var abstract string
	var count int
	require.NoError(t, pool.QueryRow(ctx, `SELECT abstract, citation_count FROM papers WHERE id = $1`, existing).Scan(&abstract, &count))
	require.Equal(t, "now with an abstract", abstract)
	require.Equal(t, 7, count)
	var arxiv string
	require.NoError(t, pool.QueryRow(ctx, `SELECT arxiv_id FROM papers WHERE id = $1`, ids[1]).Scan(&arxiv))
	require.Equal(t, "2101.00001", arxiv, "the fallback merged the second record's identifier")
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM papers`).Scan(&n))
	require.Equal(t, 3, n)
}
