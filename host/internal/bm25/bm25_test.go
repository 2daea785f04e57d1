package bm25

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestParseTSVector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		terms    []Term
		length   int
	}{
		{"empty", "", nil, 0},
		{"positions", "'curv':2 'forget':1,7,9A", []Term{{"curv", 1}, {"forget", 3}}, 4},
		{"stripped", "'a' 'b'", []Term{{"a", 1}, {"b", 1}}, 2},
		{"escapes", `'o''brien':1 'back\\slash':2`, []Term{{"o'brien", 1}, {`back\slash`, 1}}, 2},
		{"spaces inside", "'new york':3,4", []Term{{"new york", 2}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			terms, length, err := ParseTSVector(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.terms, terms)
			require.Equal(t, tc.length, length)
		})
	}
	_, _, err := ParseTSVector("'open:1")
	require.Error(t, err)
	_, _, err = ParseTSVector("bare:1")
	require.Error(t, err)
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		terms    []string
		phrase   bool
		// match lists masks (bits of terms) and whether upper and lower hold.
		match map[uint64][2]bool
	}{
		{"and", "'forget' & 'curv'", []string{"forget", "curv"}, false,
			map[uint64][2]bool{0b11: {true, true}, 0b01: {false, false}}},
		{"or binds looser than and", "'a' & 'b' | 'c'", []string{"a", "b", "c"}, false,
			map[uint64][2]bool{0b100: {true, true}, 0b001: {false, false}, 0b011: {true, true}}},
		{"parentheses", "'a' & ( 'b' | 'c' )", []string{"a", "b", "c"}, false,
			map[uint64][2]bool{0b100: {false, false}, 0b101: {true, true}}},
		{"negation", "'a' & !'b'", []string{"a", "b"}, false,
			map[uint64][2]bool{0b01: {true, true}, 0b11: {false, false}}},
		{"phrase", "'spac' <-> 'repetit'", []string{"spac", "repetit"}, true,
			map[uint64][2]bool{0b11: {true, false}, 0b01: {false, false}}},
		{"phrase with a gap", "'curv' <2> 'forget' & 'a'", []string{"curv", "forget", "a"}, true,
			map[uint64][2]bool{0b111: {true, false}}},
		{"negated phrase", "'a' & !( 'b' <-> 'c' )", []string{"a", "b", "c"}, true,
			map[uint64][2]bool{0b111: {true, false}, 0b001: {true, true}, 0b011: {true, true}}},
		{"repeated lexeme", "'a' | 'a' & 'b'", []string{"a", "b"}, false, map[uint64][2]bool{0b01: {true, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := ParseQuery(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.terms, q.Terms)
			require.Equal(t, tc.phrase, q.Phrase)
			for mask, want := range tc.match {
				require.Equal(t, want, [2]bool{q.root.upper(mask), q.root.lower(mask)}, "mask %b", mask)
			}
		})
	}
	q, err := ParseQuery("")
	require.NoError(t, err)
	require.True(t, q.Empty())
	_, err = ParseQuery("'spac':*")
	require.ErrorIs(t, err, ErrUnsupported)
	many := "'w0'"
	for i := 1; i <= MaxTerms; i++ {
		many += fmt.Sprintf(" | 'w%d'", i)
	}
	_, err = ParseQuery(many)
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = ParseQuery("'a' &")
	require.Error(t, err)
	_, err = ParseQuery("( 'a'")
	require.Error(t, err)
}

// passage builds a passage of paper holding each word of words once per
// occurrence, as its tsvector would.
func passage(paper uuid.UUID, chunk int, words ...string) Passage {
	freq := map[string]int{}
	var order []string
	for _, w := range words {
		if freq[w] == 0 {
			order = append(order, w)
		}
		freq[w]++
	}
	p := Passage{ID: uuid.New(), PaperID: paper, ChunkIndex: chunk, Length: len(words)}
	for _, w := range order {
		p.Terms = append(p.Terms, Term{Lexeme: w, Freq: freq[w]})
	}
	return p
}

func mustQuery(t *testing.T, s string) *Query {
	t.Helper()
	q, err := ParseQuery(s)
	require.NoError(t, err)
	return q
}

func ids(hits []Hit) []uuid.UUID {
	out := make([]uuid.UUID, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// Every match is ranked: the passage holding the common word most often ranks
// first although it was added last, after two thousand others holding it once.
func TestSearchRanksEveryMatch(t *testing.T) {
	t.Parallel()
	ix := New()
	paper := Paper{ID: uuid.New(), Public: true}
	for i := range 2000 {
		paper.Passages = append(paper.Passages, passage(paper.ID, i, "model", "filler", "other", "words", "here"))
	}
	late := Paper{ID: uuid.New(), Public: true}
	best := passage(late.ID, 0, "model", "model", "model", "model", "filler")
	late.Passages = []Passage{best}
	ix.ReplacePapers([]Paper{paper})
	ix.ReplacePapers([]Paper{late})

	hits, err := ix.Search(mustQuery(t, "'model'"), SearchParams{Limit: 3})
	require.NoError(t, err)
	require.Len(t, hits, 3)
	require.Equal(t, best.ID, hits[0].ID)
	require.Greater(t, hits[0].Score, hits[1].Score)
	require.Equal(t, hits[1].Score, hits[2].Score, "equal passages tie")
	require.Less(t, hits[1].ChunkIndex, hits[2].ChunkIndex, "a tie keeps the paper's order")
}

// BM25's parts: a rarer word weighs more (idf), a word more often in a passage
// weighs more but less than in proportion (tf saturation), and a longer passage
// with the same count weighs less (length normalisation).
func TestSearchScoresLikeBM25(t *testing.T) {
	t.Parallel()
	ix := New()
	paper := Paper{ID: uuid.New(), Public: true}
	rare := passage(paper.ID, 0, "rare", "x", "y", "z")
	common := passage(paper.ID, 1, "common", "x", "y", "z")
	twice := passage(paper.ID, 2, "common", "common", "y", "z")
	long := passage(paper.ID, 3, "common", "x", "y", "z", "a", "b", "c", "d", "e", "f", "g", "h")
	paper.Passages = []Passage{rare, common, twice, long, passage(paper.ID, 4, "common", "q")}
	ix.ReplacePapers([]Paper{paper})

	score := func(q string) map[uuid.UUID]float64 {
		hits, err := ix.Search(mustQuery(t, q), SearchParams{Limit: 10})
		require.NoError(t, err)
		out := map[uuid.UUID]float64{}
		for _, h := range hits {
			out[h.ID] = h.Score
		}
		return out
	}
	either := score("'rare' | 'common'")
	require.Greater(t, either[rare.ID], either[common.ID], "idf")
	require.Greater(t, either[twice.ID], either[common.ID], "tf")
	require.Less(t, either[twice.ID], 2*either[common.ID], "tf saturates")
	require.Greater(t, either[common.ID], either[long.ID], "length normalisation")
	require.NotContains(t, score("'common' & !'x'"), common.ID, "negation")
	require.Len(t, score("'common' & !'x'"), 2)
	require.Empty(t, score("'absent'"))
}

// The collection statistics count the passages the caller may see: another
// user's private paper moves no score, while the caller's own private papers
// count (a library of uploads still weighs rare words more).
func TestStatisticsCountWhatTheCallerMaySee(t *testing.T) {
	t.Parallel()
	ix := New()
	public := Paper{ID: uuid.New(), Public: true}
	public.Passages = []Passage{passage(public.ID, 0, "model", "a"), passage(public.ID, 1, "b", "c")}
	ix.ReplacePapers([]Paper{public})
	q := mustQuery(t, "'model'")
	before, err := ix.Search(q, SearchParams{Limit: 5})
	require.NoError(t, err)

	private := Paper{ID: uuid.New()}
	for i := range 50 {
		private.Passages = append(private.Passages, passage(private.ID, i, "model", "model", "x", "y", "z", "w"))
	}
	private.Passages = append(private.Passages, passage(private.ID, 50, "rare", "x", "y", "z", "w", "v"))
	ix.ReplacePapers([]Paper{private})
	after, err := ix.Search(q, SearchParams{Limit: 5})
	require.NoError(t, err)
	require.Equal(t, before, after, "not the caller's: not returned, and the scores are unchanged")

	mine, err := ix.Search(q, SearchParams{Limit: 100, Private: []uuid.UUID{private.ID}})
	require.NoError(t, err)
	require.Len(t, mine, 51)
	require.Less(t, mine[len(mine)-1].Score, before[0].Score, "in the owner's collection, model is common")

	either, err := ix.Search(mustQuery(t, "'rare' | 'model'"), SearchParams{Limit: 1, Private: []uuid.UUID{private.ID}})
	require.NoError(t, err)
	require.Equal(t, private.Passages[50].ID, either[0].ID, "the rare word outweighs twice the common one")
}

// Replacing a paper replaces its passages; an empty paper is removed; after
// enough removals the index compacts and still finds the same passages.
func TestReplaceAndCompact(t *testing.T) {
	t.Parallel()
	ix := New()
	var papers []Paper
	for i := range 300 {
		p := Paper{ID: uuid.New(), Public: true}
		for j := range 5 {
			p.Passages = append(p.Passages, passage(p.ID, j, "word", fmt.Sprintf("p%d", i)))
		}
		papers = append(papers, p)
	}
	ix.ReplacePapers(papers[:100])
	ix.AppendPapers(papers[100:200])
	for _, p := range papers[200:] { // a load: a paper's passages in two parts
		ix.AppendPapers([]Paper{{ID: p.ID, Public: true, Passages: p.Passages[:2]}})
		ix.AppendPapers([]Paper{{ID: p.ID, Public: true, Passages: p.Passages[2:]}})
	}
	require.Equal(t, 1500, ix.Len())
	q := mustQuery(t, "'word' & 'p7'")
	before, err := ix.Search(q, SearchParams{Limit: 10})
	require.NoError(t, err)
	require.Len(t, before, 5)
	ix.ReplacePapers(papers[250:260])
	again, err := ix.Search(q, SearchParams{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, before, again, "the same passages again: the same statistics")
	require.Equal(t, 1500, ix.Len())

	changed := Paper{ID: papers[0].ID, Public: true, Passages: []Passage{passage(papers[0].ID, 0, "fresh", "p0")}}
	ix.ReplacePapers([]Paper{changed})
	hits, err := ix.Search(mustQuery(t, "'p0'"), SearchParams{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{changed.Passages[0].ID}, ids(hits))

	var gone []Paper
	for _, p := range papers[1:250] {
		gone = append(gone, Paper{ID: p.ID})
	}
	ix.ReplacePapers(gone)
	require.Equal(t, 1+50*5, ix.Len())
	require.Zero(t, ix.dead, "more than a quarter dead: compacted")
	hits, err = ix.Search(mustQuery(t, "'word'"), SearchParams{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, hits, 250)
	hits, err = ix.Search(mustQuery(t, "'p260' | 'fresh'"), SearchParams{Limit: 10})
	require.NoError(t, err)
	require.Len(t, hits, 6)
	hits, err = ix.Search(mustQuery(t, "'p10'"), SearchParams{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, hits)
}

// A phrase is read as all of its words, and the passages holding them are
// offered to Candidate best first; only those it confirms come back. Only
// restricts the search to some papers.
func TestSearchPhraseAndOnly(t *testing.T) {
	t.Parallel()
	ix := New()
	a := Paper{ID: uuid.New(), Public: true}
	adjacent := passage(a.ID, 0, "spac", "repetit", "x")
	apart := passage(a.ID, 1, "spac", "spac", "x", "repetit")
	a.Passages = []Passage{adjacent, apart}
	other := Paper{ID: uuid.New(), Public: true}
	elsewhere := passage(other.ID, 0, "spac", "repetit")
	other.Passages = []Passage{elsewhere}
	ix.ReplacePapers([]Paper{a, other})
	var offered []uuid.UUID
	hits, err := ix.Search(mustQuery(t, "'spac' <-> 'repetit'"), SearchParams{Limit: 5,
		Only: map[uuid.UUID]bool{a.ID: true},
		Candidate: func(ids []uuid.UUID) (map[uuid.UUID]bool, error) {
			offered = append(offered, ids...)
			return map[uuid.UUID]bool{adjacent.ID: true}, nil
		}})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{adjacent.ID}, ids(hits))
	require.Equal(t, []uuid.UUID{apart.ID, adjacent.ID}, offered, "best first, only paper a's")
}

func TestExcluded(t *testing.T) {
	t.Parallel()
	// The tsqueries are what websearch_to_tsquery('english', …) returns for the
	// queries named (PostgreSQL 15).
	for _, tc := range []struct{ query, tsquery, want string }{
		{"heart failure -rehabilitation", "'heart' & 'failur' & !'rehabilit'", "( 'rehabilit' )"},
		{`a -"heart failure" b`, "!( 'heart' <-> 'failur' ) & 'b'", "( ( 'heart' <-> 'failur' ) )"},
		{"-rehab", "!'rehab'", "( 'rehab' )"},
		{"x -rehab-test", "'x' & !( 'rehab-test' <-> 'rehab' <-> 'test' )", "( ( 'rehab-test' <-> 'rehab' <-> 'test' ) )"},
		{"x -rehab -test", "'x' & !'rehab' & !'test'", "( 'rehab' ) | ( 'test' )"},
		{"x -o'brien", "'x' & !( 'o' <-> 'brien' )", "( ( 'o' <-> 'brien' ) )"},
		{"a lexeme holding a quote (tsquery text)", "'x' & !'o''brien'", "( 'o''brien' )"},
		{"x --rehab: a double negation affirms", "'x' & !!'rehab'", ""},
		{"x or -rehab: a negation under or rules nothing out alone", "'x' | !'rehab'", ""},
		{"covid-19 vaccine: a dash inside a word", "'covid' <-> '-19' & 'vaccin'", ""},
		{"no negation", "'heart' & 'failur'", ""},
		{"only stop words", "", ""},
	} {
		q, err := ParseQuery(tc.tsquery)
		require.NoError(t, err, tc.query)
		require.Equal(t, tc.want, q.Excluded(), tc.query)
		if tc.want != "" {
			_, err := ParseQuery(tc.want)
			require.NoError(t, err, "%s: what it rules out is a tsquery", tc.query)
		}
	}
}

// Public answers for the papers the index holds passages of, as their last
// replacement said, and leaves out the others: unknown ones and deleted ones.
func TestPublic(t *testing.T) {
	open, closed, gone, unknown := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	ix := New()
	ix.AppendPapers([]Paper{
		{ID: open, Public: true, Passages: []Passage{passage(open, 0, "spaced", "review")}},
		{ID: closed, Passages: []Passage{passage(closed, 0, "private", "notes")}},
		{ID: gone, Public: true, Passages: []Passage{passage(gone, 0, "retracted")}},
	})
	ix.ReplacePapers([]Paper{{ID: gone}})
	require.Equal(t, map[uuid.UUID]bool{open: true, closed: false}, ix.Public([]uuid.UUID{open, closed, gone, unknown}))

	ix.ReplacePapers([]Paper{{ID: closed, Public: true, Passages: []Passage{passage(closed, 0, "private", "notes")}}})
	require.Equal(t, map[uuid.UUID]bool{closed: true}, ix.Public([]uuid.UUID{closed}), "made public")
}
