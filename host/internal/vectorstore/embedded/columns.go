package embedded

import "sync"

// A sparse query (a few words, as the builtin lexical embedding makes of a search
// box) is scored on a handful of components of every row. In the codes those
// bytes lie dim bytes apart, so one component of 100k rows costs 100k cache
// lines, and a search of three words at 100k rows spent about 10 ms there
// (docs/benchmarks.md). columns keeps the components searches asked for lately
// laid out column by column, one byte a row in the rows' order, so that reading
// one component of every row is one sequential pass.
//
// The columns are a cache of the codes, kept in step by every write to them, and
// hold at most a budget of bytes (columnBudget unless a test sets it): the column
// least recently used goes first. They live on the Go heap, so a column dropped
// while a search still reads it is freed by the collector after that search.

// columnBudget is the most bytes of columns a partition keeps: every component
// of 170k rows of 384 components, or 64 of them at 1M rows.
const columnBudget = 64 << 20

type columns struct {
	mu     sync.Mutex
	budget int
	byComp map[int]*column
	tick   uint64
}

// column is one component of every row: segment b holds the rows of block b of
// the codes, blockRows bytes.
type column struct {
	segs [][]byte
	used uint64 // columns.tick when a search last asked for it
}

// column returns component j of every row of c, segment by segment (segment b
// holds the rows of block b), building and keeping it when it is not kept yet;
// nil when one column is over the budget. The caller holds the partition's lock
// (shared), so no write to the codes runs meanwhile.
func (c *codes) column(j int) [][]byte {
	cs := &c.cols
	cs.mu.Lock()
	if col, ok := cs.byComp[j]; ok {
		cs.tick++
		col.used = cs.tick
		cs.mu.Unlock()
		return col.segs
	}
	cs.mu.Unlock()
	size := len(c.blocks) * c.blockRows
	if size == 0 || size > cs.budget {
		return nil
	}
	// Built outside the lock: searches of other components need not wait.
	segs := make([][]byte, len(c.blocks))
	n := c.len()
	for b, block := range c.blocks {
		seg := make([]byte, c.blockRows)
		rows := min(c.blockRows, n-b*c.blockRows)
		for r, o := 0, j; r < rows; r, o = r+1, o+c.dim {
			seg[r] = block[o]
		}
		segs[b] = seg
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if col, ok := cs.byComp[j]; ok { // another search built it meanwhile
		return col.segs
	}
	for (len(cs.byComp)+1)*size > cs.budget {
		cs.evictOldest()
	}
	if cs.byComp == nil {
		cs.byComp = map[int]*column{}
	}
	cs.tick++
	cs.byComp[j] = &column{segs: segs, used: cs.tick}
	return segs
}

// evictOldest drops the column least recently asked for. The caller holds cs.mu.
func (cs *columns) evictOldest() {
	oldest, at := -1, uint64(0)
	for j, col := range cs.byComp {
		if oldest < 0 || col.used < at {
			oldest, at = j, col.used
		}
	}
	delete(cs.byComp, oldest)
}

// The codes' writes keep the columns in step. Each is called with the
// partition's lock held exclusively, after the codes changed.

// setRow copies row i's components into the kept columns.
func (cs *columns) setRow(c *codes, i int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.byComp) == 0 {
		return
	}
	row := c.row(i)
	b, r := i/c.blockRows, i%c.blockRows
	for j, col := range cs.byComp {
		col.segs[b][r] = row[j]
	}
}

// grow gives every kept column a segment for the new block of codes, after
// dropping the least used columns the budget no longer holds.
func (cs *columns) grow(c *codes) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for len(cs.byComp) > 0 && len(cs.byComp)*len(c.blocks)*c.blockRows > cs.budget {
		cs.evictOldest()
	}
	for _, col := range cs.byComp {
		col.segs = append(col.segs, make([]byte, c.blockRows))
	}
}

// shrink drops every kept column's last segment, as the codes dropped their last
// block.
func (cs *columns) shrink() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, col := range cs.byComp {
		col.segs = col.segs[:len(col.segs)-1]
	}
}

// drop forgets every column.
func (cs *columns) drop() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.byComp = nil
}
