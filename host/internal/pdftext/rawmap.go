package pdftext

import (
	"errors"
	"sort"
	"strings"
)

// The clean text differs from what pdftotext extracted: running headers are
// dropped, words hyphenated across lines are joined, ligatures are spelled out
// and small capitals rejoined. Every line therefore carries where its bytes came
// from in the raw text (pieces), each cleaning step rebuilds a line through a
// lineBuilder that carries them along, and analyse turns them into the
// Document's OffsetMap, so a passage or a verified quote can be pointed back at
// the words as printed.

// piece says that a line's text bytes [at, at+n) come from the raw text's bytes
// [raw, raw+rawN) (offsets into Document.Raw). When n == rawN the bytes
// correspond one to one (a case change keeps the length); otherwise (a
// ligature spelled out) only the whole ranges correspond.
type piece struct{ at, n, raw, rawN int }

// sources returns l's pieces: as recorded, or the whole line from l.raw when no
// step has changed it yet (the common case, kept without a slice).
func (l *line) sources() []piece {
	if l.src != nil {
		return l.src
	}
	return []piece{{at: 0, n: len(l.text), raw: l.raw, rawN: len(l.text)}}
}

// lineBuilder writes a new text for a line out of parts of old lines, keeping
// the pieces of what it copies.
type lineBuilder struct {
	b   strings.Builder
	src []piece
}

// keep copies from's text bytes [i, j).
func (lb *lineBuilder) keep(from *line, i, j int) {
	lb.keepAs(from, i, j, from.text[i:j])
}

// keepAs writes s in place of from's bytes [i, j), which must be as long: a
// case change. The pieces are those of the bytes replaced.
func (lb *lineBuilder) keepAs(from *line, i, j int, s string) {
	if len(s) != j-i {
		lb.replace(from, i, j, s)
		return
	}
	base := lb.b.Len()
	for _, p := range from.sources() {
		lo, hi := max(p.at, i), min(p.at+p.n, j)
		if lo >= hi {
			continue
		}
		np := piece{at: base + lo - i, n: hi - lo, raw: p.raw, rawN: p.rawN}
		if p.n == p.rawN {
			np.raw, np.rawN = p.raw+lo-p.at, hi-lo
		}
		lb.add(np)
	}
	lb.b.WriteString(s)
}

// replace writes s in place of from's bytes [i, j): s comes from the raw bytes
// that those came from, as a whole.
func (lb *lineBuilder) replace(from *line, i, j int, s string) {
	lo, hi := -1, -1
	for _, p := range from.sources() {
		if p.at+p.n <= i || p.at >= j {
			continue
		}
		start, end := p.raw, p.raw+p.rawN
		if p.n == p.rawN {
			start, end = p.raw+max(i-p.at, 0), p.raw+min(j, p.at+p.n)-p.at
		}
		if lo < 0 || start < lo {
			lo = start
		}
		hi = max(hi, end)
	}
	if lo >= 0 && s != "" {
		lb.add(piece{at: lb.b.Len(), n: len(s), raw: lo, rawN: hi - lo})
	}
	lb.b.WriteString(s)
}

// insert writes s, which comes from no raw text (a space between joined parts).
func (lb *lineBuilder) insert(s string) { lb.b.WriteString(s) }

// add appends p, merged into the last piece when both run on one to one.
func (lb *lineBuilder) add(p piece) {
	if n := len(lb.src); n > 0 {
		last := &lb.src[n-1]
		if last.n == last.rawN && p.n == p.rawN && last.at+last.n == p.at && last.raw+last.rawN == p.raw {
			last.n += p.n
			last.rawN += p.rawN
			return
		}
	}
	lb.src = append(lb.src, p)
}

// into sets l's text and pieces to what was built.
func (lb *lineBuilder) into(l *line) {
	l.text = lb.b.String()
	l.src = lb.src
	if l.src == nil {
		l.src = []piece{} // built from nothing raw: keep it from meaning "the whole line"
	}
}

// OffsetMap maps byte offsets of a Document's clean Text to byte offsets of its
// Raw text. It is a list of segments, in the order of the clean text: clean
// bytes [Clean, Clean+N) came from raw bytes [Raw, Raw+RawN), one to one when N
// == RawN. Bytes of the clean text in no segment (the spaces and line breaks
// between segments) came from no particular raw byte.
type OffsetMap struct {
	segs []segment
}

type segment struct{ clean, n, raw, rawN int }

// add appends a segment, merged into the last one when both run on one to one
// and the gap between them is as long in both texts (a space or line break in
// each, never a word: a word needs more room than two bytes).
func (m *OffsetMap) add(s segment) {
	if n := len(m.segs); n > 0 {
		last := &m.segs[n-1]
		cleanGap, rawGap := s.clean-(last.clean+last.n), s.raw-(last.raw+last.rawN)
		if last.n == last.rawN && s.n == s.rawN && cleanGap == rawGap && cleanGap >= 0 && cleanGap <= 2 {
			last.n = s.clean + s.n - last.clean
			last.rawN = last.n
			return
		}
	}
	m.segs = append(m.segs, s)
}

// Pieces returns the raw byte ranges the clean bytes [start, end) came from, in
// the order of the clean text, each [rawStart, rawEnd). Running headers and
// anything else dropped between them is in none.
func (m OffsetMap) Pieces(start, end int) [][2]int {
	var out [][2]int
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].clean+m.segs[i].n > start })
	for ; i < len(m.segs) && m.segs[i].clean < end; i++ {
		s := m.segs[i]
		lo, hi := max(s.clean, start), min(s.clean+s.n, end)
		r := [2]int{s.raw, s.raw + s.rawN}
		if s.n == s.rawN {
			r = [2]int{s.raw + lo - s.clean, s.raw + hi - s.clean}
		}
		out = append(out, r)
	}
	return out
}

// Span returns the raw byte range [rawStart, rawEnd) that holds everything the
// clean bytes [start, end) came from: from the first printed byte to the last,
// with whatever was dropped between them. ok is false when no byte of the span
// came from the raw text.
func (m OffsetMap) Span(start, end int) (rawStart, rawEnd int, ok bool) {
	for _, p := range m.Pieces(start, end) {
		if !ok || p[0] < rawStart {
			rawStart = p[0]
		}
		if !ok || p[1] > rawEnd {
			rawEnd = p[1]
		}
		ok = true
	}
	return rawStart, rawEnd, ok
}

// Ints encodes the map for storage: four integers a segment (clean start, clean
// length, raw start, raw length).
func (m OffsetMap) Ints() []int32 {
	out := make([]int32, 0, 4*len(m.segs))
	for _, s := range m.segs {
		out = append(out, int32(s.clean), int32(s.n), int32(s.raw), int32(s.rawN))
	}
	return out
}

// ErrBadOffsetMap is a stored map that Ints did not write.
var ErrBadOffsetMap = errors.New("pdftext: not an offset map")

// OffsetMapFromInts decodes what Ints wrote.
func OffsetMapFromInts(v []int32) (OffsetMap, error) {
	if len(v)%4 != 0 {
		return OffsetMap{}, ErrBadOffsetMap
	}
	m := OffsetMap{segs: make([]segment, 0, len(v)/4)}
	for i := 0; i < len(v); i += 4 {
		s := segment{int(v[i]), int(v[i+1]), int(v[i+2]), int(v[i+3])}
		if s.n < 0 || s.rawN < 0 || s.clean < 0 || s.raw < 0 ||
			len(m.segs) > 0 && s.clean < m.segs[len(m.segs)-1].clean+m.segs[len(m.segs)-1].n {
			return OffsetMap{}, ErrBadOffsetMap
		}
		m.segs = append(m.segs, s)
	}
	return m, nil
}
