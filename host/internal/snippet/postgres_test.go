package snippet

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// TestMarksTheWordsPostgreSQLMatches holds the words Build marks to the words
// PostgreSQL's own ts_headline marks (HighlightAll, every word of the passage), on
// passages of a real paper's full text (folded as ingest folds it) and queries of one to three of its words
// drawn from it (plain, quoted as a phrase, and with a negated word).
func TestMarksTheWordsPostgreSQLMatches(t *testing.T) {
	t.Parallel()
	// Folded as ingest folds a PDF's text (curly quotes and dashes made ASCII).
	text := pdftext.Normalize(string(fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt")))
	all := strings.Fields(text)
	require.Greater(t, len(all), 2000)
	var passages []string
	for i := 0; i+120 <= len(all) && len(passages) < 40; i += 150 {
		passages = append(passages, strings.Join(all[i:i+120], " "))
	}
	rng := rand.New(rand.NewPCG(41, 42))
	pick := func(p string) string {
		ws := strings.Fields(p)
		return strings.Trim(ws[rng.IntN(len(ws))], ".,;:()[]\"'")
	}
	// PostgreSQL marks a negated word too; Build does not (a word the searcher
	// excluded is not what the passage was found for), so PostgreSQL's marks are
	// read for the query without its negated word.
	var texts, queries, positive []string
	for _, p := range passages {
		for n := range 4 {
			var q string
			switch n {
			case 0:
				q = pick(p)
			case 1:
				q = pick(p) + " " + pick(p) + " " + pick(p)
			case 2:
				q = `"` + pick(p) + " " + pick(p) + `"`
			default:
				a, b := pick(p), pick(passages[rng.IntN(len(passages))])
				q = a + " -" + pick(p) + " " + b
				positive = append(positive, a+" "+b)
			}
			if n < 3 {
				positive = append(positive, q)
			}
			texts, queries = append(texts, p), append(queries, q)
		}
	}

	pool := dbtest.NewDB(t)
	rows, err := pool.Query(context.Background(), `
		SELECT ts_headline('english', t, websearch_to_tsquery('english', pq), 'HighlightAll=true, StartSel=<<, StopSel=>>'),
		       websearch_to_tsquery('english', q)::text
		  FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS x(t, q, pq, n)
		 ORDER BY n`, texts, queries, positive)
	require.NoError(t, err)
	type row struct{ headline, tsquery string }
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.headline, &x.tsquery)
	})
	require.NoError(t, err)
	require.Len(t, got, len(texts))
	marked := regexp.MustCompile(`<<([^<>]*)>>`)
	compared := 0
	for i, r := range got {
		var want []string
		for _, m := range marked.FindAllStringSubmatch(r.headline, -1) {
			want = append(want, m[1])
		}
		words := split(texts[i])
		mark(texts[i], words, Terms(r.tsquery))
		var ours []string
		for _, w := range words {
			if w.matches() {
				ours = append(ours, texts[i][w.start:w.end])
			}
		}
		require.Equal(t, want, ours, "query %q (%s) in %q", queries[i], r.tsquery, texts[i])
		if len(want) > 0 {
			compared++
		}
	}
	require.Greater(t, compared, len(texts)/2, "most queries match something")
	require.True(t, slices.ContainsFunc(queries, func(q string) bool { return strings.Contains(q, " -") }))
}
