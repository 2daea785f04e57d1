package embedded

import "math"

// Rows are held in memory quantised to int8, one scale per row (scalar
// quantisation): component j of a normalised row v is stored as
// round(v[j]·127/m), m = max|v[j]|, and read back as code·m/127, so each component
// is off by at most m/254. A search scores its candidates on the codes and then
// rescores a short list from the exact float rows (floatfile.go); the codes only
// have to keep the true neighbours inside that list.

// blockBytes is the size of one block of codes. Blocks are allocated one at a time
// as the partition grows, so growing never copies (and never doubles) what is held.
const blockBytes = 4 << 20

// codes holds a partition's rows quantised to int8 (as bytes), row i in block
// i/blockRows, allocated outside the Go heap (block_unix.go): they are the bulk of
// the process's memory, and keeping them out of the heap keeps the garbage
// collector's target (twice the live heap) from doubling them too.
type codes struct {
	dim       int
	blockRows int
	blocks    [][]byte
	scales    []float32 // per row: m/127, the value of code 1
	cols      columns   // some components again, column by column, for sparse queries (columns.go)
}

func newCodes(dim int) *codes {
	return &codes{dim: dim, blockRows: max(1, blockBytes/dim), cols: columns{budget: columnBudget}}
}

// len is the number of rows.
func (c *codes) len() int { return len(c.scales) }

// row returns row i's codes.
func (c *codes) row(i int) []byte {
	b := c.blocks[i/c.blockRows]
	o := (i % c.blockRows) * c.dim
	return b[o : o+c.dim : o+c.dim]
}

// append adds the normalised vector v as the last row.
func (c *codes) append(v []float32) {
	if c.len() == len(c.blocks)*c.blockRows {
		c.blocks = append(c.blocks, allocBlock(c.blockRows*c.dim))
		c.cols.grow(c)
	}
	c.scales = append(c.scales, 0)
	c.set(c.len()-1, v)
}

// set replaces row i with the normalised vector v.
func (c *codes) set(i int, v []float32) {
	c.scales[i] = quantise(c.row(i), v)
	c.cols.setRow(c, i)
}

// move copies row src over row dst.
func (c *codes) move(dst, src int) {
	copy(c.row(dst), c.row(src))
	c.scales[dst] = c.scales[src]
	c.cols.setRow(c, dst)
}

// pop drops the last row, and its block when it was the block's only row.
func (c *codes) pop() {
	c.scales = c.scales[:c.len()-1]
	if last := len(c.blocks) - 1; c.len() <= last*c.blockRows {
		freeBlock(c.blocks[last])
		c.blocks = c.blocks[:last]
		c.cols.shrink()
	}
}

// free releases every block.
func (c *codes) free() {
	for _, b := range c.blocks {
		freeBlock(b)
	}
	c.blocks, c.scales = nil, nil
	c.cols.drop()
}

// bytes is the memory the codes hold: their blocks and scales.
func (c *codes) bytes() int {
	return len(c.blocks)*c.blockRows*c.dim + cap(c.scales)*4
}

// dequantise writes row i's approximate components to dst.
func (c *codes) dequantise(i int, dst []float32) {
	s := c.scales[i]
	for j, x := range c.row(i) {
		dst[j] = float32(int8(x)) * s
	}
}

// quantise writes v's codes to dst and returns the scale (the value of code 1).
// A zero vector gets zero codes and scale 0.
func quantise(dst []byte, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / m
	for j, x := range v {
		r := math.Round(float64(x * inv))
		dst[j] = byte(int8(max(-127, min(127, r))))
	}
	return m / 127
}

// dot8 is the dot product of two rows of codes.
func dot8(a, b []byte) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += int32(int8(a[0])) * int32(int8(b[0]))
		s1 += int32(int8(a[1])) * int32(int8(b[1]))
		s2 += int32(int8(a[2])) * int32(int8(b[2]))
		s3 += int32(int8(a[3])) * int32(int8(b[3]))
		a, b = a[4:], b[4:]
	}
	for j := range a {
		s0 += int32(int8(a[j])) * int32(int8(b[j]))
	}
	return s0 + s1 + s2 + s3
}

// query is a normalised search vector with its codes, for scoring rows on codes.
// A sparse query (few nonzero codes, as the builtin lexical embedding makes of a
// few words: one bucket a word) also lists its nonzero components, and is scored
// on those alone.
type query struct {
	vec   []float32
	codes []byte
	scale float32
	// nz lists the components whose code is not zero when they are at most
	// dim/sparseFraction of them; nil for a dense query.
	nz []int
}

// sparseFraction: a query with at most dim/sparseFraction nonzero codes is sparse.
// Reading those few bytes of a row costs less than the whole row's product once
// they are under about a quarter of the row.
const sparseFraction = 4

func newQuery(q []float32) query {
	c := make([]byte, len(q))
	qq := query{vec: q, codes: c, scale: quantise(c, q)}
	n := 0
	for _, x := range c {
		if x != 0 {
			n++
		}
	}
	if n*sparseFraction <= len(c) {
		qq.nz = make([]int, 0, n)
		for j, x := range c {
			if x != 0 {
				qq.nz = append(qq.nz, j)
			}
		}
	}
	return qq
}

// sparse reports whether the query is scored on its nonzero components alone.
func (q query) sparse() bool { return q.nz != nil }

// approx is the approximate dot product of the query with row i of c.
func (q query) approx(c *codes, i int) float32 {
	if q.nz != nil {
		row := c.row(i)
		var s int32
		for _, j := range q.nz {
			s += int32(int8(q.codes[j])) * int32(int8(row[j]))
		}
		return float32(s) * q.scale * c.scales[i]
	}
	return float32(dot8(q.codes, c.row(i))) * q.scale * c.scales[i]
}
