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
	"math"
	"runtime"
	"strings"
	"sync"

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
type Index struct {
	mu       sync.RWMutex
	postings map[string]*postings
	docs     []doc
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
}

// postings lists the passages holding one lexeme, by ascending ordinal, with the
// lexeme's frequency in each (capped at 255: PostgreSQL keeps at most 256
// positions of a lexeme).
type postings struct {
	docs  []uint32
	freqs []uint8
}

type doc struct {
	id     uuid.UUID
	paper  int32 // index into papers
	chunk  int32
	length uint32
	live   bool
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
	return len(ix.docs) - ix.dead
}

// ReplacePapers makes each paper's passages and visibility those given,
// replacing what the index held of it.
func (ix *Index) ReplacePapers(papers []Paper) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, p := range papers {
		ix.replace(p)
	}
	if ix.dead > 1000 && ix.dead > len(ix.docs)/4 {
		ix.compact()
	}
}

func (ix *Index) replace(p Paper) {
	slot, ok := ix.slotOf[p.ID]
	if !ok {
		if len(p.Passages) == 0 {
			return
		}
		slot = int32(len(ix.papers))
		ix.papers = append(ix.papers, paperSlot{id: p.ID})
		ix.slotOf[p.ID] = slot
	}
	ps := &ix.papers[slot]
	for _, d := range ps.docs {
		ix.count(ps, &ix.docs[d], -1)
		ix.docs[d].live = false
		ix.dead++
	}
	ps.docs = ps.docs[:0]
	ps.public = p.Public
	for _, pas := range p.Passages {
		ord := uint32(len(ix.docs))
		ix.docs = append(ix.docs, doc{id: pas.ID, paper: slot, chunk: int32(pas.ChunkIndex),
			length: uint32(pas.Length), live: true})
		ix.count(ps, &ix.docs[ord], 1)
		ps.docs = append(ps.docs, ord)
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
}

// count adds sign times d, a passage of ps, to the collection statistics.
func (ix *Index) count(ps *paperSlot, d *doc, sign int) {
	ps.length += int64(sign) * int64(d.length)
	if ps.public {
		ix.publicDocs += sign
		ix.publicLength += int64(sign) * int64(d.length)
	}
}

// compact drops dead passages and renumbers the live ones.
func (ix *Index) compact() {
	renum := make([]uint32, len(ix.docs))
	docs := make([]doc, 0, len(ix.docs)-ix.dead)
	for i, d := range ix.docs {
		if d.live {
			renum[i] = uint32(len(docs))
			docs = append(docs, d)
		}
	}
	for lexeme, pl := range ix.postings {
		n := 0
		for j, d := range pl.docs {
			if ix.docs[d].live {
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
	ix.docs = docs
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

// scratch is one search's per-passage accumulators, reused between searches.
type scratch struct {
	score   []float64
	mask    []uint64
	touched []uint32
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
// those that match if q's phrases hold.
func (ix *Index) rank(q *Query, p SearchParams) (sure, unsure []Hit) {
	ix.slots <- struct{}{}
	defer func() { <-ix.slots }()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	v := ix.view(p)
	ix.accumulate(q, s, v)
	allowed := func(slot int32) bool {
		ps := &ix.papers[slot]
		return v.sees(ps, slot) && (p.Only == nil || p.Only[ps.id])
	}
	var best hitHeap
	keep := func(h *hitHeap, d uint32, limit int) {
		if h.Len() == limit && s.score[d] < (*h)[0].Score {
			return
		}
		hit := ix.hit(d, s.score[d])
		if h.Len() < limit {
			heap.Push(h, hit)
		} else if better(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	visit := func(d uint32) {
		if !ix.docs[d].live || !allowed(ix.docs[d].paper) {
			return
		}
		m := s.mask[d]
		switch {
		case q.root.lower(m):
			keep(&best, d, p.Limit)
		case q.Phrase && q.root.upper(m):
			unsure = append(unsure, ix.hit(d, s.score[d]))
		}
	}
	if q.matchesNone {
		for d := range ix.docs {
			visit(uint32(d))
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
	return best.sorted(), unsure
}

func (ix *Index) getScratch() *scratch {
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.score) < len(ix.docs) {
		s.score = make([]float64, len(ix.docs)+len(ix.docs)/8)
		s.mask = make([]uint64, len(s.score))
	}
	return s
}

// accumulate adds each live passage's BM25 score over q's scored terms into
// s.score and the terms it holds into s.mask, listing the passages touched.
func (ix *Index) accumulate(q *Query, s *scratch, v view) {
	n := float64(v.docs)
	avgdl := 1.0
	if v.docs > 0 {
		avgdl = max(float64(v.length)/n, 1)
	}
	for t, lexeme := range q.Terms {
		pl := ix.postings[lexeme]
		if pl == nil {
			continue
		}
		bit := uint64(1) << t
		if !q.scored[t] {
			for _, d := range pl.docs {
				if ix.docs[d].live {
					s.mark(d, bit)
				}
			}
			continue
		}
		df := 0
		for _, d := range pl.docs {
			if dd := &ix.docs[d]; dd.live && v.sees(&ix.papers[dd.paper], dd.paper) {
				df++
			}
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for j, d := range pl.docs {
			dd := &ix.docs[d]
			if !dd.live {
				continue
			}
			s.mark(d, bit)
			tf := float64(pl.freqs[j])
			s.score[d] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(dd.length)/avgdl))
		}
	}
}

func (s *scratch) mark(d uint32, bit uint64) {
	if s.mask[d] == 0 {
		s.touched = append(s.touched, d)
	}
	s.mask[d] |= bit
}

// view is the collection one caller may see: the public papers and their
// private ones.
type view struct {
	private map[int32]bool // slots of the private papers the caller may see
	docs    int            // live passages in the view
	length  int64          // their total length
}

func (ix *Index) view(p SearchParams) view {
	v := view{private: make(map[int32]bool, len(p.Private)), docs: ix.publicDocs, length: ix.publicLength}
	for _, id := range p.Private {
		slot, ok := ix.slotOf[id]
		if !ok || v.private[slot] || ix.papers[slot].public {
			continue
		}
		v.private[slot] = true
		v.docs += len(ix.papers[slot].docs)
		v.length += ix.papers[slot].length
	}
	return v
}

// sees says whether the caller may see the paper in slot.
func (v view) sees(ps *paperSlot, slot int32) bool {
	return ps.public || v.private[slot]
}

func (ix *Index) hit(d uint32, score float64) Hit {
	dd := &ix.docs[d]
	return Hit{ID: dd.id, PaperID: ix.papers[dd.paper].id, ChunkIndex: int(dd.chunk), Score: score}
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
