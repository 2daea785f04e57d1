package papers

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// importBenchBib is a BibTeX file of n entries against the corpus of
// BenchmarkImport4000: a quarter name a corpus paper by DOI, a quarter repeat a title
// of the user's library in other case and punctuation (no identifier), and half are
// new works without identifiers.
func importBenchBib(n int) string {
	var b strings.Builder
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "@article{doi%d,\n  title = {Some title %d},\n  doi = {10.9999/bench.%d},\n  year = 2020\n}\n", i, i, i+1)
		case 1:
			fmt.Fprintf(&b, "@article{title%d,\n  title = {PAPER %d -- A study of topic %d.},\n  year = 2020\n}\n", i, i+1, (i+1)%97)
		default:
			fmt.Fprintf(&b, "@inproceedings{new%d,\n  title = {A new work number %d on topic %d},\n  author = {Doe, Jane and Roe, Richard},\n  booktitle = {Proceedings of Benchmarks},\n  year = 2021\n}\n", i, i, i%97)
		}
	}
	return b.String()
}

// BenchmarkImport4000 imports a BibTeX file of 4,000 entries (importBenchBib) into the
// library of a user who already keeps 20,000 papers, in a corpus of 20,000 papers:
// issue 14 wants it done in seconds. Parsing is timed too; each iteration imports for
// a fresh user with the same library.
func BenchmarkImport4000(b *testing.B) {
	const corpus, entries = 20000, 4000
	pool := dbtest.NewDB(b)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
		INSERT INTO papers (title, source, visibility, doi, publication_date, publication_date_precision)
		SELECT 'Paper ' || g || ': a study of topic ' || (g % 97), 'openalex', 'public', '10.9999/bench.' || g,
		       make_date(2020, 1, 1), 'year'
		  FROM generate_series(1, $1::int) g`, corpus)
	require.NoError(b, err)
	src := importBenchBib(entries)
	st := New(pool)

	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		var user uuid.UUID
		require.NoError(b, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ($1) RETURNING id`,
			fmt.Sprintf("bench%d@example.org", n)).Scan(&user))
		_, err := pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via)
			SELECT $1, id, 'manual_save' FROM papers WHERE source = 'openalex'`, user)
		require.NoError(b, err)
		_, err = pool.Exec(ctx, `ANALYZE`)
		require.NoError(b, err)
		b.StartTimer()

		parsed, errs := bibio.ParseBibTeX(src)
		require.Empty(b, errs)
		res, err := st.ImportEntries(ctx, user, "bibtex", parsed)
		require.NoError(b, err)

		b.StopTimer()
		require.Empty(b, res.Errors)
		require.Equal(b, entries/2, res.Existing, "the DOI and title matches")
		require.Equal(b, entries/2, res.Imported, "the new works")
		b.StartTimer()
	}
}
