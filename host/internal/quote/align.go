package quote

import "slices"

// alignment is a passage of the normalised text, runes [start, end), at edit
// distance dist from the quote.
type alignment struct {
	start, end, dist int
}

// align finds the passage of the text closest to the quote qr
// by semi-global edit distance (Sellers' algorithm: the quote must be
// aligned whole, the text may start and end anywhere), looking only where a
// passage within maxEdits edits can be. By the pigeonhole principle, when the
// quote is cut into maxEdits+1 pieces, such a passage holds one piece
// exactly; every exact occurrence of a piece fixes a window of the text that
// would hold the passage, and only those windows are aligned. It reports
// false when no piece occurs (with maxEdits 0 the exact search has already
// failed).
func (x *Index) align(qr []rune, maxEdits int) (alignment, bool) {
	m := len(qr)
	if maxEdits == 0 || m == 0 {
		return alignment{}, false
	}
	type window struct{ s, e int }
	var windows []window
	pieces := maxEdits + 1
	for p := range pieces {
		o, oe := p*m/pieces, (p+1)*m/pieces
		piece := string(qr[o:oe])
		x.g.occurrences(x.s, piece, func(b int) bool {
			at := int(x.runeAt[b])
			windows = append(windows, window{max(at-o-maxEdits, 0), min(at-o+m+maxEdits, len(x.n.runes))})
			return true
		})
	}
	if len(windows) == 0 {
		return alignment{}, false
	}
	slices.SortFunc(windows, func(a, b window) int { return a.s - b.s })
	best := alignment{dist: m + 1}
	cur := windows[0]
	flush := func(w window) {
		if a := sellers(qr, x.n.runes, w.s, w.e); a.dist < best.dist {
			best = a
		}
	}
	for _, w := range windows[1:] {
		if w.s <= cur.e {
			cur.e = max(cur.e, w.e)
			continue
		}
		flush(cur)
		cur = w
	}
	flush(cur)
	return best, best.dist <= m
}

// sellers returns the best alignment of all of q against a substring of
// t[ws:we]: the least edit distance (unit costs), then the earliest end.
func sellers(q, t []rune, ws, we int) alignment {
	m := len(q)
	prev := make([]int32, m+1)
	prevStart := make([]int32, m+1)
	cur := make([]int32, m+1)
	curStart := make([]int32, m+1)
	for i := range prev {
		prev[i], prevStart[i] = int32(i), int32(ws)
	}
	best := alignment{start: ws, end: ws, dist: m}
	for j := ws; j < we; j++ {
		c := t[j]
		cur[0], curStart[0] = 0, int32(j+1)
		for i := 1; i <= m; i++ {
			d, st := prev[i-1], prevStart[i-1] // q[i-1] against c
			if q[i-1] != c {
				d++
			}
			if v := prev[i] + 1; v < d { // c left out
				d, st = v, prevStart[i]
			}
			if v := cur[i-1] + 1; v < d { // q[i-1] left out
				d, st = v, curStart[i-1]
			}
			cur[i], curStart[i] = d, st
		}
		if int(cur[m]) < best.dist {
			best = alignment{start: int(curStart[m]), end: j + 1, dist: int(cur[m])}
		}
		prev, cur = cur, prev
		prevStart, curStart = curStart, prevStart
	}
	return best
}
