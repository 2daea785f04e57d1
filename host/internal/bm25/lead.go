package bm25

import (
	"math"
	"slices"

	"github.com/google/uuid"
)

// walkCost weighs a step of rankRequired's walk (a passage looked up in one
// term's postings, and scored on it) against a posting read by rankUnion: the
// walk skips most of a long list but reads its steps out of order. Measured by
// BenchmarkSearch: 27 ns a step against 16 ns a posting; the walk is chosen only
// when it reads clearly less.
const walkCost = 2

// lead returns the postings of q's terms (nil for a term no passage holds) and,
// when q is best ranked by rankRequired, which required term to walk: the one
// with the fewest passages. It returns -1 when rankUnion should rank q instead,
// and none when no passage can match.
func (ix *Index) lead(q *Query) (lists []*postings, lead int, none bool) {
	lists = make([]*postings, len(q.Terms))
	lead = -1
	total, listed := 0, 0
	for t, lexeme := range q.Terms {
		pl := ix.postings[lexeme]
		lists[t] = pl
		if pl != nil {
			total += len(pl.docs)
			listed++
		}
		if q.required&(1<<t) == 0 {
			continue
		}
		if pl == nil {
			return nil, -1, true // a term every match holds is held by none
		}
		if lead < 0 || len(pl.docs) < len(lists[lead].docs) {
			lead = t
		}
	}
	if lead >= 0 && len(lists[lead].docs)*listed*walkCost > total {
		lead = -1
	}
	return lists, lead, false
}

// rankRequired is rank for a query with required terms (Query.required): only
// passages holding the required term lead can match, so it walks that term's
// postings and looks each of them up in the other terms' postings, which it
// reads forward as the walk goes. On a query of one common and one rarer word,
// the shape of most searches, that reads the rarer word's passages and a few
// places of the common word's instead of every passage holding either. It
// ranks exactly as rankUnion: the same passages, scores summed term by term in
// the same order, the same ties.
func (ix *Index) rankRequired(q *Query, p SearchParams, lists []*postings, lead int) (sure, unsure []Hit) {
	v := ix.callerView(p)
	idf := make([]float64, len(q.Terms))
	for t, pl := range lists {
		if pl != nil && q.scored[t] {
			idf[t] = ix.idf(pl, v)
		}
	}
	c0, c1 := lengthNorm(v.docs, v.length)
	k := newKeeper(ix, q, p.Limit)
	at := make([]int, len(q.Terms)) // where each term's walk has reached
	for j, d := range lists[lead].docs {
		slot := ix.paperOf[d]
		if slot < 0 || !v.allowed(ix, slot, p.Only) {
			continue
		}
		var mask uint64
		score := 0.0
		for t, pl := range lists {
			if pl == nil {
				continue
			}
			i := j
			if t != lead {
				i = seek(pl.docs, at[t], d)
				at[t] = i
				if i == len(pl.docs) || pl.docs[i] != d {
					continue
				}
			}
			mask |= 1 << t
			if q.scored[t] {
				score += bm25(idf[t], float64(pl.freqs[i]), c0, c1, ix.length[d])
			}
		}
		k.offer(d, mask, score)
	}
	return k.best.sorted(), k.unsure
}

// callerView is what a search may see: the collection of the public papers and
// the caller's private ones, with the live passages of the latter.
type callerView struct {
	docs        int
	length      int64
	private     map[int32]bool // slots of the caller's private papers
	privateDocs []uint32       // their live passages, ascending
}

func (ix *Index) callerView(p SearchParams) callerView {
	v := callerView{docs: ix.publicDocs, length: ix.publicLength}
	for _, id := range p.Private {
		slot, ok := ix.slotOf[id]
		if !ok || ix.papers[slot].public || v.private[slot] {
			continue
		}
		if v.private == nil {
			v.private = map[int32]bool{}
		}
		v.private[slot] = true
		v.docs += len(ix.papers[slot].docs)
		v.length += ix.papers[slot].length
		v.privateDocs = append(v.privateDocs, ix.papers[slot].docs...)
	}
	slices.Sort(v.privateDocs)
	return v
}

// allowed says whether the caller may see the paper in slot, and it is within
// only when only is not nil.
func (v callerView) allowed(ix *Index, slot int32, only map[uuid.UUID]bool) bool {
	ps := &ix.papers[slot]
	return (ps.public || v.private[slot]) && (only == nil || only[ps.id])
}

// idf is the weight of the term of pl for the caller v: its document frequency
// counts the live passages of the public papers and of v's private ones.
func (ix *Index) idf(pl *postings, v callerView) float64 {
	return termWeight(v.docs, ix.publicCount(pl)+countCommon(pl.docs, v.privateDocs))
}

// publicCount is how many of pl's passages are live passages of public papers,
// counted once for each state of the index. The caller holds the read lock.
func (ix *Index) publicCount(pl *postings) int {
	if c := pl.public.Load(); c != nil && c.gen == ix.gen {
		return c.n
	}
	n := 0
	for _, d := range pl.docs {
		if slot := ix.paperOf[d]; slot >= 0 && ix.papers[slot].public {
			n++
		}
	}
	pl.public.Store(&countAt{gen: ix.gen, n: n})
	return n
}

// countCommon counts the values in both ascending lists, looking the shorter's
// up in the longer.
func countCommon(a, b []uint32) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n, at := 0, 0
	for _, x := range a {
		at = seek(b, at, x)
		if at == len(b) {
			break
		}
		if b[at] == x {
			n++
		}
	}
	return n
}

// seek returns the first index at or after from where list (ascending) holds a
// value at least x: it gallops, doubling its stride, then bisects, so a walk
// of ascending values through a long list reads a few places of it for each.
func seek(list []uint32, from int, x uint32) int {
	// Most steps of a walk through a list denser than the walk's are short.
	for end := min(from+4, len(list)); from < end; from++ {
		if list[from] >= x {
			return from
		}
	}
	if from == len(list) || list[from] >= x {
		return from
	}
	lo, step := from, 1 // list[lo] < x
	for lo+step < len(list) && list[lo+step] < x {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(list)) // list[hi] >= x, or hi is the end
	i, _ := slices.BinarySearch(list[lo+1:hi], x)
	return lo + 1 + i
}

// termWeight is BM25's idf of a term held by df of n passages.
func termWeight(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// lengthNorm returns the constant and the per-word parts of BM25's length
// normalisation, k1·(1−b) and k1·b/avgdl, for a collection of docs passages of
// the given total length.
func lengthNorm(docs int, length int64) (c0, c1 float64) {
	avgdl := 1.0
	if docs > 0 {
		avgdl = max(float64(length)/float64(docs), 1)
	}
	return k1 * (1 - b), k1 * b / avgdl
}

// bm25 is a term's weight in a passage: idf·tf·(k1+1) / (tf + k1·(1−b) + k1·b·len/avgdl).
func bm25(idf, tf, c0, c1 float64, length uint32) float64 {
	return idf * tf * (k1 + 1) / (tf + c0 + c1*float64(length))
}
