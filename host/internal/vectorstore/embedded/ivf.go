package embedded

import (
	"container/heap"
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// An inverted-file (IVF) index over a large partition: spherical k-means centroids
// (a coarse quantiser) and, per centroid, the list of rows nearest it. A search
// scores every centroid, scans the rows of the nprobe nearest lists exactly and keeps
// the k best. Whether a partition uses it at all, and with which nprobe, is decided
// when it is built by a self-check against exact search (see selfCheck), so a
// partition whose vectors have no neighbourhood structure keeps the sign-bit path.

const (
	// ivfIterations is the number of Lloyd iterations run on the training sample.
	ivfIterations = 5
	// ivfSamplePerList is how many sample rows train each centroid.
	ivfSamplePerList = 16
	// ivfChecks is the number of sample queries of the build-time self-check.
	ivfChecks = 32
	// ivfMinRecall is the recall@10 the self-check asks of the IVF search, on top of
	// matching the sign-bit path's recall on the same queries (less ivfRecallSlack).
	ivfMinRecall   = 0.97
	ivfRecallSlack = 0.01
	// ivfRebuildFactor: the index is rebuilt when the partition has grown or shrunk
	// by this factor since it was built (appended rows join their nearest list).
	ivfRebuildFactor = 2
	// ivfAssignCandidates is how many centroids, the nearest by sign bits, an
	// assignment scores exactly (see nearestAll).
	ivfAssignCandidates = 24
	// ivfSeed makes the build deterministic for a given partition.
	ivfSeed = 0x1ec7e2
)

// ivf is the index. lists[c] holds the rows assigned to centroid c; list[r] and
// slot[r] say where row r is, so a row can be moved or removed in constant time.
type ivf struct {
	k, dim    int
	centroids []float32 // k*dim, each normalised
	lists     [][]int32
	list      []int32
	slot      []int32
	nprobe    int
}

// index builds, rebuilds or drops the partition's IVF index as its size requires,
// after writing out the rows its file is still gathering. It is called after a
// load and after each write batch. The sign bits are kept only while the sign-bit
// path serves the partition's searches. The caller holds p.mu.
func (p *partition) index() error {
	if p.floats != nil {
		if err := p.floats.flush(); err != nil {
			return err
		}
	}
	n := len(p.ids)
	if n < exactBelow {
		p.ivf, p.indexedN, p.signs = nil, 0, nil
		return nil
	}
	if p.indexedN > 0 && n < ivfRebuildFactor*p.indexedN && n*ivfRebuildFactor > p.indexedN {
		return nil
	}
	p.indexedN = n
	p.ivf = nil
	rng := rand.New(rand.NewPCG(ivfSeed, uint64(n)))
	x := trainIVF(p.codes, rng)
	x.assignAll(p.codes)
	// The self-check compares IVF with the sign-bit path, which needs the sign
	// bits; built after the training, whose scratch memory is garbage by then.
	if p.signs == nil {
		p.buildSigns()
	}
	nprobe, err := p.selfCheck(x, rng)
	if err != nil {
		return err
	}
	if nprobe > 0 {
		x.nprobe = nprobe
		p.ivf, p.signs = x, nil
	}
	return nil
}

// selfCheck returns the smallest nprobe (1, 2, 4, ...) at which the IVF search of
// ivfChecks sample rows, each asked for its 10 nearest other rows, reaches recall@10
// of max(ivfMinRecall, the sign-bit path's recall − ivfRecallSlack) against exact
// search while scoring no more vectors (centroids and rows) than the sign-bit path
// scores; 0 when no nprobe does, and the partition keeps the sign-bit path. The
// "exact" search here scores every row on its codes and rescores the best from the
// file, as a search of a small partition does.
func (p *partition) selfCheck(x *ivf, rng *rand.Rand) (int, error) {
	n := len(p.ids)
	queries := make([]query, ivfChecks)
	rowOf := make([]int, ivfChecks)
	buf := make([]byte, p.dim*4)
	for i := range queries {
		rowOf[i] = rng.IntN(n)
		v := make([]float32, p.dim)
		if err := p.floats.read(rowOf[i], v, buf); err != nil {
			return 0, err
		}
		queries[i] = newQuery(v)
	}
	truth := make([][]vectorstore.Hit, len(queries))
	quant := make([][]vectorstore.Hit, len(queries))
	errs := make([]error, len(queries))
	parallel(len(queries), func(i int) {
		var err1, err2 error
		truth[i], err1 = p.exact(queries[i], 11, nil, nil)
		quant[i], err2 = p.quantised(queries[i], 11)
		errs[i] = errors.Join(err1, err2)
	})
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	recall := func(hits func(i int) []vectorstore.Hit) float64 {
		found := 0
		for i, r := range rowOf {
			want := map[uuid.UUID]bool{}
			for _, h := range withoutRow(truth[i], p.ids[r]) {
				want[h.ChunkID] = true
			}
			for _, h := range withoutRow(hits(i), p.ids[r]) {
				if want[h.ChunkID] {
					found++
				}
			}
		}
		return float64(found) / float64(10*len(queries))
	}
	target := max(ivfMinRecall, recall(func(i int) []vectorstore.Hit { return quant[i] })-ivfRecallSlack)
	budget := p.rerankCount(10)
	for nprobe := 1; nprobe <= x.k; nprobe *= 2 {
		scanned := 0
		got := make([][]vectorstore.Hit, len(queries))
		for i, q := range queries {
			rows := x.rows(q.vec, nprobe)
			scanned += len(rows)
			hits, err := p.exact(q, 11, nil, rows)
			if err != nil {
				return 0, err
			}
			got[i] = hits
		}
		if x.k+scanned/len(queries) > budget {
			return 0, nil
		}
		if recall(func(i int) []vectorstore.Hit { return got[i] }) >= target {
			return nprobe, nil
		}
	}
	return 0, nil
}

// withoutRow drops the query row itself from a top-11 answer, leaving 10.
func withoutRow(hits []vectorstore.Hit, self uuid.UUID) []vectorstore.Hit {
	out := make([]vectorstore.Hit, 0, len(hits))
	for _, h := range hits {
		if h.ChunkID != self {
			out = append(out, h)
		}
	}
	return out[:min(len(out), 10)]
}

// trainIVF runs spherical k-means, k = 4·sqrt(n), on a random sample of the n rows
// of c, read from their codes: centroids start at sample rows, and a centroid left
// empty is moved to a random sample row. The sample is not copied: its rows are
// decoded as they are compared.
func trainIVF(c *codes, rng *rand.Rand) *ivf {
	n, dim := c.len(), c.dim
	k := max(1, int(4*math.Sqrt(float64(n))))
	sample := rng.Perm(n)[:min(n, ivfSamplePerList*k)]
	row := func(i int, dst []float32) { c.dequantise(sample[i], dst) }
	x := &ivf{k: k, dim: dim, centroids: make([]float32, k*dim)}
	for i := range k {
		cen := x.centroids[i*dim : (i+1)*dim]
		row(i, cen)
		copy(cen, normalised(cen))
	}
	sums := make([]float64, k*dim)
	counts := make([]int, k)
	v := make([]float32, dim)
	for range ivfIterations {
		assign := x.nearestAll(len(sample), row)
		clear(sums)
		clear(counts)
		for i, cl := range assign {
			counts[cl]++
			row(i, v)
			sum := sums[int(cl)*dim : (int(cl)+1)*dim]
			for j, val := range v {
				sum[j] += float64(val)
			}
		}
		for cl := range k {
			cen := x.centroids[cl*dim : (cl+1)*dim]
			if counts[cl] == 0 {
				row(rng.IntN(len(sample)), cen)
				copy(cen, normalised(cen))
				continue
			}
			var norm float64
			for _, v := range sums[cl*dim : (cl+1)*dim] {
				norm += v * v
			}
			if norm == 0 {
				continue
			}
			inv := 1 / math.Sqrt(norm)
			for j, v := range sums[cl*dim : (cl+1)*dim] {
				cen[j] = float32(v * inv)
			}
		}
	}
	return x
}

// assignAll puts every row of c in its nearest list.
func (x *ivf) assignAll(c *codes) {
	n := c.len()
	assign := x.nearestAll(n, c.dequantise)
	x.lists = make([][]int32, x.k)
	x.list = make([]int32, 0, n)
	x.slot = make([]int32, 0, n)
	for r, cl := range assign {
		x.link(r, int(cl))
	}
}

// nearestAll returns the nearest centroid of each of n rows, which row writes
// into a buffer, using every core. A row's sign bits are compared with the
// centroids' first (Hamming distance, as in the sign-bit search), and only the
// ivfAssignCandidates closest centroids by that measure are scored exactly: a row
// and a centroid with cosine 0.7 disagree on about a quarter of the signs,
// unrelated ones on half, so the nearest centroid is almost never lost. The
// self-check at build time covers the rest.
func (x *ivf) nearestAll(n int, row func(i int, dst []float32)) []int32 {
	words := (x.dim + 63) / 64
	signs := make([]uint64, x.k*words)
	for c := range x.k {
		signBits(signs[c*words:(c+1)*words], x.centroids[c*x.dim:(c+1)*x.dim])
	}
	m := min(ivfAssignCandidates, x.k)
	out := make([]int32, n)
	workers := max(1, min(n, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rs := make([]uint64, words)
			cand := make([]int, 0, m+1)
			dist := make([]int, 0, m+1)
			v := make([]float32, x.dim)
			for i := w; i < n; i += workers {
				row(i, v)
				signBits(rs, v)
				cand, dist = cand[:0], dist[:0]
				for c := range x.k {
					d := 0
					for j, s := range signs[c*words : (c+1)*words] {
						d += bits.OnesCount64(s ^ rs[j])
					}
					if len(cand) == m && d >= dist[m-1] {
						continue
					}
					// Insert in order, dropping the farthest when full.
					at := len(dist)
					for at > 0 && dist[at-1] > d {
						at--
					}
					cand, dist = slices.Insert(cand, at, c), slices.Insert(dist, at, d)
					if len(cand) > m {
						cand, dist = cand[:m], dist[:m]
					}
				}
				best, bestScore := int32(0), float32(math.Inf(-1))
				for _, c := range cand {
					if s := dot(v, x.centroids[c*x.dim:(c+1)*x.dim]); s > bestScore {
						best, bestScore = int32(c), s
					}
				}
				out[i] = best
			}
		})
	}
	wg.Wait()
	return out
}

// nearest returns the centroid nearest the normalised vector v, by scoring all.
func (x *ivf) nearest(v []float32) int {
	best, bestScore := 0, float32(math.Inf(-1))
	for c := range x.k {
		if s := dot(v, x.centroids[c*x.dim:(c+1)*x.dim]); s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

// rows returns the rows of the nprobe lists whose centroids are nearest q.
func (x *ivf) rows(q []float32, nprobe int) []int {
	top := make(minHeap, 0, nprobe+1)
	for c := range x.k {
		cen := x.centroids[c*x.dim : (c+1)*x.dim]
		var s float32
		for j, v := range cen {
			s += v * q[j]
		}
		pushTop(&top, nprobe, c, s)
	}
	size := 0
	for _, t := range top {
		size += len(x.lists[t.i])
	}
	out := make([]int, 0, size)
	for _, t := range top {
		for _, r := range x.lists[t.i] {
			out = append(out, int(r))
		}
	}
	return out
}

// link appends row r, which must be the next row (len(x.list)) or a row unlinked
// before, to list c.
func (x *ivf) link(r, c int) {
	if r == len(x.list) {
		x.list = append(x.list, 0)
		x.slot = append(x.slot, 0)
	}
	x.list[r], x.slot[r] = int32(c), int32(len(x.lists[c]))
	x.lists[c] = append(x.lists[c], int32(r))
}

// unlink takes row r out of its list, filling its slot with the list's last row.
func (x *ivf) unlink(r int) {
	c, s := x.list[r], x.slot[r]
	l := x.lists[c]
	moved := l[len(l)-1]
	l[s] = moved
	x.slot[moved] = s
	x.lists[c] = l[:len(l)-1]
}

// removeRow mirrors partition.remove: row r goes, and the last row takes its index.
func (x *ivf) removeRow(r int) {
	last := len(x.list) - 1
	x.unlink(r)
	if r != last {
		c, s := x.list[last], x.slot[last]
		x.lists[c][s] = int32(r)
		x.list[r], x.slot[r] = c, s
	}
	x.list, x.slot = x.list[:last], x.slot[:last]
}

// pushTop keeps the n highest-scoring (i, s) in the min-heap top.
func pushTop(top *minHeap, n, i int, s float32) {
	if len(*top) < n {
		heap.Push(top, scored{i, s})
	} else if s > (*top)[0].score {
		(*top)[0] = scored{i, s}
		heap.Fix(top, 0)
	}
}

// dot is a dot product with four accumulators, for the build's many short products.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return s0 + s1 + s2 + s3
}

// parallel calls f(0..n-1) on every core.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}
