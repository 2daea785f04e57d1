package bm25

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestRequiredTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tsquery string
		want    []string
	}{
		{"'a'", []string{"a"}},
		{"'a' & 'b' & 'c'", []string{"a", "b", "c"}},
		{"'a' & ( 'b' | !'c' )", []string{"a"}},
		{"'a' | 'b'", nil},
		{"'a' & 'b' | 'a' & 'c'", []string{"a"}},
		{"!'a'", nil},
		{"!'a' & 'b'", []string{"b"}},
		{"!( 'a' & 'b' ) & 'c'", []string{"c"}},
		{"'a' <-> 'b' & 'c'", []string{"a", "b", "c"}},
		{"( 'a' <-> 'b' ) | 'b'", []string{"b"}},
	} {
		q := mustQuery(t, tc.tsquery)
		var got []string
		for i, term := range q.Terms {
			if q.required&(1<<i) != 0 {
				got = append(got, term)
			}
		}
		require.Equal(t, tc.want, got, tc.tsquery)
	}
}

func TestSeek(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		list := make([]uint32, rng.IntN(40))
		for i := range list {
			list[i] = uint32(rng.IntN(100))
		}
		slices.Sort(list)
		from, x := rng.IntN(len(list)+1), uint32(rng.IntN(110))
		want := from
		for want < len(list) && list[want] < x {
			want++
		}
		require.Equal(t, want, seek(list, from, x), "seek(%v, %d, %d)", list, from, x)
	}
}

// TestRankRequiredRanksAsTheUnion checks the walk of a required term's postings
// against the scoring of every passage holding any term: on random corpora,
// after random replacements, appends, changes of visibility and compactions,
// and for random queries, callers and restrictions, both return the same
// passages with the same scores in the same order.
func TestRankRequiredRanksAsTheUnion(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	vocab := make([]string, 40)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	zipf := rand.NewZipf(rng, 1.2, 1, uint64(len(vocab)-1))
	makePassages := func(paper uuid.UUID, first int) []Passage {
		out := make([]Passage, 1+rng.IntN(12))
		for i := range out {
			words := make([]string, 3+rng.IntN(25))
			for w := range words {
				words[w] = vocab[zipf.Uint64()]
			}
			out[i] = passage(paper, first+i, words...)
		}
		return out
	}
	compared, required, matched := 0, 0, 0
	for corpus := range 30 {
		ix := New()
		ids := make([]uuid.UUID, 30)
		for i := range ids {
			ids[i] = uuid.New()
		}
		var papers []Paper
		for _, id := range ids {
			papers = append(papers, Paper{ID: id, Public: rng.IntN(3) > 0, Passages: makePassages(id, 0)})
		}
		ix.ReplacePapers(papers)
		for step := range 12 {
			id := ids[rng.IntN(len(ids))]
			switch rng.IntN(5) {
			case 0: // new passages
				ix.ReplacePapers([]Paper{{ID: id, Public: rng.IntN(3) > 0, Passages: makePassages(id, 0)}})
			case 1: // more passages, perhaps another visibility
				ix.AppendPapers([]Paper{{ID: id, Public: rng.IntN(2) == 0, Passages: makePassages(id, 100)}})
			case 2: // gone
				ix.ReplacePapers([]Paper{{ID: id}})
			case 3:
				ix.mu.Lock()
				ix.compact()
				ix.gen++
				ix.mu.Unlock()
			}
			for range 15 {
				text := randomQuery(rng, vocab)
				q := mustQuery(t, text)
				if q.Empty() || q.required == 0 {
					continue
				}
				p := SearchParams{Limit: 1 + rng.IntN(20)}
				for _, id := range ids {
					if rng.IntN(4) == 0 {
						p.Private = append(p.Private, id)
					}
				}
				p.Private = append(p.Private, uuid.New()) // one the index does not hold
				if rng.IntN(3) == 0 {
					p.Only = map[uuid.UUID]bool{}
					for _, id := range ids {
						if rng.IntN(2) == 0 {
							p.Only[id] = true
						}
					}
				}
				ix.mu.RLock()
				lists, lead, none := ix.lead(q)
				if none { // a required term no passage holds: nothing matches
					sure, unsure := ix.rankUnion(q, p)
					ix.mu.RUnlock()
					require.Empty(t, sure, text)
					require.Empty(t, unsure, text)
					continue
				}
				if lead < 0 { // rankRequired can walk any required term
					for t := range q.Terms {
						if q.required&(1<<t) != 0 {
							lead = t
						}
					}
				}
				sure, unsure := ix.rankRequired(q, p, lists, lead)
				wantSure, wantUnsure := ix.rankUnion(q, p)
				ix.mu.RUnlock()
				slices.SortFunc(unsure, compare)
				slices.SortFunc(wantUnsure, compare)
				where := fmt.Sprintf("corpus %d step %d: %s, limit %d", corpus, step, text, p.Limit)
				require.Equal(t, wantSure, sure, where)
				require.Equal(t, wantUnsure, unsure, where)
				compared++
				if len(sure)+len(unsure) > 0 {
					matched++
				}
				required++
			}
		}
	}
	require.Greater(t, compared, 1000)
	require.Greater(t, matched, compared/3, "most queries find passages, %d of %d", matched, required)
}

// randomQuery writes a tsquery over vocab (and a word no passage holds) with
// &, |, !, phrases and parentheses; most have a required term.
func randomQuery(rng *rand.Rand, vocab []string) string {
	var expr func(depth int) string
	term := func() string {
		if rng.IntN(20) == 0 {
			return "'absent'"
		}
		return "'" + vocab[rng.IntN(len(vocab))] + "'"
	}
	expr = func(depth int) string {
		if depth > 2 || rng.IntN(3) == 0 {
			return term()
		}
		switch rng.IntN(6) {
		case 0:
			return "!" + expr(depth+1)
		case 1:
			return "( " + expr(depth+1) + " | " + expr(depth+1) + " )"
		case 2:
			return term() + " <-> " + term()
		default:
			parts := make([]string, 2+rng.IntN(2))
			for i := range parts {
				parts[i] = expr(depth + 1)
			}
			return "( " + strings.Join(parts, " & ") + " )"
		}
	}
	return expr(0)
}
