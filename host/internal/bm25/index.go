// Package bm25 is an in-memory inverted index of passages that ranks every
// passage matching a PostgreSQL full-text query by Okapi BM25.
//
// It holds no text: it is fed PostgreSQL's own tsvectors (ParseTSVector) and
// queries (ParseQuery of websearch_to_tsquery's output), so a passage matches here
// exactly when `search_vector @@ query` holds in PostgreSQL, except that a phrase
// is read as all of its words (Query.Phrase; the caller checks those passages).
// Which passages a caller may see is the caller's to say (SearchParams.Private);
// the index only knows whether a paper is public. The collection statistics
// (document frequencies, average length) are counted over the passages the
// caller may see, so what one user keeps private never moves another user's
// ranking, and a library of private uploads still has its rare words weigh more.
//
// The index is safe for concurrent use: searches share a read lock, and
// ReplacePapers takes the write lock. It is internal to the host; its API is not
// stable.
package bm25

import (
	"bytes"
	"container/heap"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// BM25's parameters, the usual defaults (Robertson and Zaragoza, 2009).
const (
	k1 = 1.2
	b  = 0.75
)

// Passage is what the index holds of one passage.
type Passage struct {
	ID         uuid.UUID
	PaperID    uuid.UUID
	ChunkIndex int
	// Terms are the passage's lexemes with their frequencies, and Length their
	// sum (ParseTSVector).
	Terms  []Term
	Length int
}

// Paper is one paper's passages and whether everyone may see it.
type Paper struct {
	ID     uuid.UUID
	Public bool
	// Passages are the paper's passages now; none when it was deleted.
	Passages []Passage
}

// Index is the inverted index. The zero value is not usable; call New.
//
// Passages are numbered by ordinal in the order they were added; what a search
// reads for every posting (the passage's paper, -1 once removed, and its length)
// is kept in dense arrays apart from what it reads for the passages it returns.
type Index struct {
	mu       sync.RWMutex
	postings map[string]*postings
	paperOf  []int32  // by ordinal: index into papers, or -1 for a removed passage
	length   []uint32 // by ordinal: the passage's length in indexed words
	ids      []uuid.UUID
	chunks   []int32
	papers   []paperSlot
	slotOf   map[uuid.UUID]int32
	dead     int
	// Over live passages of public papers: how many, and their total length.
	publicDocs   int
	publicLength int64
	// scratch holds the per-passage accumulators of searches, and slots bounds the
	// searches running at once to the processors: a search is pure computation,
	// and each one's accumulators take 16 bytes a passage.
	scratch sync.Pool
	slots   chan struct{}
	// gen counts the writes, so that what a search works out from the postings
	// (postings.public) is known to be current.
	gen uint64
}

// postings lists the passages holding one lexeme, by ascending ordinal, with the
// lexeme's frequency in each (capped at 255: PostgreSQL keeps at most 256
// positions of a lexeme).
type postings struct {
	docs  []uint32
	freqs []uint8
	// public caches how many of docs are live passages of public papers, as of
	// the index's gen: searches fill it under the read lock.
	public atomic.Pointer[countAt]
}

type countAt struct {
	gen uint64
	n   int
}

type paperSlot struct {
	id     uuid.UUID
	public bool
	docs   []uint32 // ordinals of its live passages
	length int64    // their total length
}

// New returns an empty index.
func New() *Index {
	return &Index{postings: map[string]*postings{}, slotOf: map[uuid.UUID]int32{},
		slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// Len is the number of live passages.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids) - ix.dead
}

// Public reports, for each of ids the index holds passages of, whether everyone
// may see that paper; the papers it holds nothing of are absent.
func (ix *Index) Public(ids []uuid.UUID) map[uuid.UUID]bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		if slot, ok := ix.slotOf[id]; ok && len(ix.papers[slot].docs) > 0 {
			out[id] = ix.papers[slot].public
		}
	}
	return out
}

// ReplacePapers makes each paper's passages and visibility those given,
// replacing what the index held of it.
func (ix *Index) ReplacePapers(papers []Paper) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	for _, p := range papers {
		ix.replace(p)
	}
	if ix.dead > 1000 && ix.dead > len(ix.ids)/4 {
		ix.compact()
	}
}

// AppendPapers adds passages to papers, keeping those the index holds of them:
// a load adds a paper's passages as they come.
func (ix *Index) AppendPapers(papers []Paper) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.gen++
	for _, p := range papers {
		slot, ok := ix.slot(p)
		if !ok {
			continue
		}
		ps := &ix.papers[slot]
		ix.count(ps, -1)
		ps.public = p.Public
		ix.add(slot, p.Passages)
	}
}

// slot returns the slot of p, making one when p has passages.
func (ix *Index) slot(p Paper) (int32, bool) {
	slot, ok := ix.slotOf[p.ID]
	if !ok && len(p.Passages) > 0 {
		slot, ok = int32(len(ix.papers)), true
		ix.papers = append(ix.papers, paperSlot{id: p.ID})
		ix.slotOf[p.ID] = slot
	}
	return slot, ok
}

func (ix *Index) replace(p Paper) {
	slot, ok := ix.slot(p)
	if !ok {
		return
	}
	ps := &ix.papers[slot]
	ix.count(ps, -1)
	for _, d := range ps.docs {
		ix.paperOf[d] = -1
		ix.dead++
	}
	ps.docs, ps.length, ps.public = ps.docs[:0], 0, p.Public
	ix.add(slot, p.Passages)
}

// add indexes passages of the paper in slot and counts the paper again.
func (ix *Index) add(slot int32, passages []Passage) {
	ps := &ix.papers[slot]
	for _, pas := range passages {
		ord := uint32(len(ix.ids))
		ix.ids = append(ix.ids, pas.ID)
		ix.chunks = append(ix.chunks, int32(pas.ChunkIndex))
		ix.paperOf = append(ix.paperOf, slot)
		ix.length = append(ix.length, uint32(pas.Length))
		ps.docs = append(ps.docs, ord)
		ps.length += int64(pas.Length)
		for _, t := range pas.Terms {
			pl := ix.postings[t.Lexeme]
			if pl == nil {
				pl = &postings{}
				ix.postings[strings.Clone(t.Lexeme)] = pl
			}
			pl.docs = append(pl.docs, ord)
			pl.freqs = append(pl.freqs, uint8(min(t.Freq, 255)))
		}
	}
	ix.count(ps, 1)
}

// count adds sign times the paper's passages to the public statistics when the
// paper is public.
func (ix *Index) count(ps *paperSlot, sign int) {
	if ps.public {
		ix.publicDocs += sign * len(ps.docs)
		ix.publicLength += int64(sign) * ps.length
	}
}

// compact drops removed passages and renumbers the live ones.
func (ix *Index) compact() {
	renum := make([]uint32, len(ix.ids))
	live := len(ix.ids) - ix.dead
	ids, chunks := make([]uuid.UUID, 0, live), make([]int32, 0, live)
	paperOf, length := make([]int32, 0, live), make([]uint32, 0, live)
	for d, slot := range ix.paperOf {
		if slot >= 0 {
			renum[d] = uint32(len(ids))
			ids, chunks = append(ids, ix.ids[d]), append(chunks, ix.chunks[d])
			paperOf, length = append(paperOf, slot), append(length, ix.length[d])
		}
	}
	for lexeme, pl := range ix.postings {
		n := 0
		for j, d := range pl.docs {
			if ix.paperOf[d] >= 0 {
				pl.docs[n], pl.freqs[n] = renum[d], pl.freqs[j]
				n++
			}
		}
		if n == 0 {
			delete(ix.postings, lexeme)
			continue
		}
		pl.docs = append([]uint32(nil), pl.docs[:n]...)
		pl.freqs = append([]uint8(nil), pl.freqs[:n]...)
	}
	for i := range ix.papers {
		for j, d := range ix.papers[i].docs {
			ix.papers[i].docs[j] = renum[d]
		}
	}
	ix.ids, ix.chunks, ix.paperOf, ix.length = ids, chunks, paperOf, length
	ix.dead = 0
}

// SearchParams say which passages a search may return.
type SearchParams struct {
	// Limit is how many passages come back, best first.
	Limit int
	// Private are the private papers the caller may see (public papers' passages
	// are always allowed).
	Private []uuid.UUID
	// Only, when not nil, restricts the search to passages of these papers.
	Only map[uuid.UUID]bool
	// Candidate, when not nil, is asked about each passage that matches only if
	// the query's phrases hold (Query.Phrase), best first, until Limit passages
	// are kept; the caller checks them in PostgreSQL. It returns the ids that do
	// match among those offered.
	Candidate func(ids []uuid.UUID) (map[uuid.UUID]bool, error)
}

// Hit is one ranked passage.
type Hit struct {
	ID         uuid.UUID
	PaperID    uuid.UUID
	ChunkIndex int
	Score      float64
}

// scratch is one search's accumulators, reused between searches.
type scratch struct {
	score   []float64 // by ordinal
	mask    []uint64  // by ordinal: the query's terms the passage holds
	touched []uint32  // ordinals whose mask is not zero
	allowed []bool    // by paper slot: the caller may see the paper, within SearchParams.Only
}

// Search ranks every allowed passage matching q by BM25 over q's terms outside
// negations and returns the best p.Limit, ties broken by paper id and passage
// order as the PostgreSQL ranking does.
func (ix *Index) Search(q *Query, p SearchParams) ([]Hit, error) {
	if q.Empty() || p.Limit <= 0 {
		return nil, nil
	}
	out, unsure := ix.rank(q, p)
	if len(unsure) > 0 && p.Candidate != nil {
		// Outside the lock: Candidate asks PostgreSQL.
		more, err := verify(unsure, out, p)
		if err != nil {
			return nil, err
		}
		out = merge(out, more, p.Limit)
	}
	return out, nil
}

// rank returns the best p.Limit passages that surely match q, best first, and
// those that match if q's phrases hold. A query whose matches all hold some term
// (every query websearch_to_tsquery makes of words, which it ANDs) is ranked from
// that term's passages alone (rankRequired) when they are few beside the
// others'; any query can be ranked from every passage holding any of its terms
// (rankUnion).
func (ix *Index) rank(q *Query, p SearchParams) (sure, unsure []Hit) {
	ix.slots <- struct{}{}
	defer func() { <-ix.slots }()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	lists, lead, none := ix.lead(q)
	switch {
	case none:
		return []Hit{}, nil
	case lead >= 0:
		return ix.rankRequired(q, p, lists, lead)
	}
	return ix.rankUnion(q, p)
}

// rankUnion is rank for any query: it scores every allowed passage holding any
// of the query's terms.
func (ix *Index) rankUnion(q *Query, p SearchParams) (sure, unsure []Hit) {
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	v := ix.callerView(p)
	ix.view(p, v, s)
	ix.accumulate(q, s, v)
	k := newKeeper(ix, q, p.Limit)
	visit := func(d uint32) { k.offer(d, s.mask[d], s.score[d]) }
	if q.matchesNone {
		for d, slot := range ix.paperOf {
			if slot >= 0 && s.allowed[slot] {
				visit(uint32(d))
			}
		}
	} else {
		for _, d := range s.touched {
			visit(d)
		}
	}
	for _, d := range s.touched {
		s.score[d], s.mask[d] = 0, 0
	}
	s.touched = s.touched[:0]
	return k.best.sorted(), k.unsure
}

// keeper keeps, of the passages offered, the best limit that surely match and
// every one that matches if the query's phrases hold.
type keeper struct {
	ix     *Index
	m      *matcher
	limit  int
	best   hitHeap
	unsure []Hit
}

func newKeeper(ix *Index, q *Query, limit int) *keeper {
	return &keeper{ix: ix, m: newMatcher(q), limit: limit}
}

// offer considers passage d, holding the query's terms of mask, at score.
func (k *keeper) offer(d uint32, mask uint64, score float64) {
	switch k.m.match(mask) {
	case matchSure:
		if k.best.Len() == k.limit && score < k.best[0].Score {
			return
		}
		hit := k.ix.hit(d, score)
		if k.best.Len() < k.limit {
			heap.Push(&k.best, hit)
		} else if better(hit, k.best[0]) {
			k.best[0] = hit
			heap.Fix(&k.best, 0)
		}
	case matchUnsure:
		k.unsure = append(k.unsure, k.ix.hit(d, score))
	}
}

func (ix *Index) getScratch() *scratch {
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.score) < len(ix.ids) {
		s.score = make([]float64, len(ix.ids)+len(ix.ids)/8)
		s.mask = make([]uint64, len(s.score))
	}
	if len(s.allowed) < len(ix.papers) {
		s.allowed = make([]bool, len(ix.papers)+len(ix.papers)/8)
	}
	return s
}

// view fills s.allowed for the caller v of p.
func (ix *Index) view(p SearchParams, v callerView, s *scratch) {
	for slot := range ix.papers {
		s.allowed[slot] = v.allowed(ix, int32(slot), p.Only)
	}
}

// accumulate adds each allowed passage's BM25 score over q's scored terms into
// s.score and the terms it holds into s.mask, listing the passages touched. A
// term's document frequency counts the passages the caller may see.
func (ix *Index) accumulate(q *Query, s *scratch, v callerView) {
	c0, c1 := lengthNorm(v.docs, v.length)
	paperOf, lengths, score, mask := ix.paperOf, ix.length, s.score, s.mask
	for t, lexeme := range q.Terms {
		pl := ix.postings[lexeme]
		if pl == nil {
			continue
		}
		bit := uint64(1) << t
		if !q.scored[t] {
			for _, d := range pl.docs {
				if slot := paperOf[d]; slot >= 0 && s.allowed[slot] {
					if mask[d] == 0 {
						s.touched = append(s.touched, d)
					}
					mask[d] |= bit
				}
			}
			continue
		}
		idf := ix.idf(pl, v)
		for j, d := range pl.docs {
			if slot := paperOf[d]; slot < 0 || !s.allowed[slot] {
				continue
			}
			if mask[d] == 0 {
				s.touched = append(s.touched, d)
			}
			mask[d] |= bit
			score[d] += bm25(idf, float64(pl.freqs[j]), c0, c1, lengths[d])
		}
	}
}

func (ix *Index) hit(d uint32, score float64) Hit {
	return Hit{ID: ix.ids[d], PaperID: ix.papers[ix.paperOf[d]].id, ChunkIndex: int(ix.chunks[d]), Score: score}
}

// better orders hits: higher score, then paper id, then passage order.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if c := bytes.Compare(a.PaperID[:], b.PaperID[:]); c != 0 {
		return c < 0
	}
	return a.ChunkIndex < b.ChunkIndex
}

// hitHeap is a min-heap by better: its root is the worst hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sorted empties the heap into a slice, best first.
func (h *hitHeap) sorted() []Hit {
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return out
}
