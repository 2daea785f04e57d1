// Package embedded is the default vector store: chunk_embeddings in PostgreSQL is
// the source of truth, and each embedding model's vectors (a partition) are loaded
// from PostgreSQL on first use, streamed row by row into two forms: int8 codes in
// memory, one byte per component (quant.go), and the exact normalised float32 rows
// in a file of the partition's own (floatfile.go). A search picks a short list on
// the codes and rescores it from the file, so scores are exact cosines. Small
// partitions are scanned whole. A large one is searched through an inverted-file
// (k-means) index when a self-check at build time shows it finds what exact search
// finds, and otherwise by sign bits (docs/vectors.md; measured costs in
// docs/benchmarks.md).
//
// Writes go to PostgreSQL first, in one transaction, and then to memory. Writes by
// another process (the import command, a second host) are picked up by a cheap
// staleness check at most every RefreshEvery.
package embedded

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// RefreshEvery is how long a loaded partition is trusted before its row count and
// newest write are compared with PostgreSQL's.
const RefreshEvery = 30 * time.Second

// Store is the embedded vector store.
type Store struct {
	pool *pgxpool.Pool
	dir  string

	mu    sync.Mutex
	parts map[string]*partition

	// writesDone and writesBegun count this store's writes (Upsert, Delete,
	// DeletePaper): begun before the transaction, done once the partitions hold
	// it. A check against PostgreSQL that ran while one was under way cannot tell
	// it from another node's write, and is not trusted (refresh).
	writesDone, writesBegun atomic.Int64
}

// write counts a write as begun and returns the function that counts it done.
func (s *Store) write() func() {
	s.writesBegun.Add(1)
	return func() { s.writesDone.Add(1) }
}

// Opts are the embedded store's optional settings.
type Opts struct {
	// Dir is the directory of the partitions' files of exact vectors (about
	// dim·4 bytes per vector on disk; each file is unlinked as soon as it is
	// created). Default os.TempDir(); the host passes LECTERN_DATA_DIR/vectors, as
	// /tmp may be memory (tmpfs).
	Dir string
}

// partition is one model's vectors. ids, papers, the rows of codes and of floats
// share indexes.
type partition struct {
	mu       sync.RWMutex
	dir      string
	dim      int
	ids      []uuid.UUID
	papers   []uuid.UUID
	codes    *codes     // each row quantised to int8
	floats   *floatFile // each row exact (normalised float32), for the rerank
	words    int        // uint64 words per row of signs: ceil(dim/64)
	signs    []uint64   // len(ids)*words, bit j set when component j is positive; nil unless the sign-bit path serves searches
	pos      rowIndex   // chunk id → row
	scratch  []float32  // a vector being normalised
	ivf      *ivf       // nil below exactBelow rows, or when the self-check kept the sign-bit path
	indexedN int        // rows when the index was last built or refused; 0 for never
	count    int64      // rows in PostgreSQL when last checked
	newest   time.Time  // newest created_at in PostgreSQL when last checked
	checked  time.Time
	loadedOK bool
	// checking is set while a search compares the loaded partition with
	// PostgreSQL (partition), so that only one does.
	checking atomic.Bool
}

func newPartition(dir string) *partition {
	return &partition{dir: dir}
}

// New returns an embedded store over pool with the default Opts.
func New(pool *pgxpool.Pool) *Store { return NewWithOpts(pool, Opts{}) }

// NewWithOpts returns an embedded store over pool.
func NewWithOpts(pool *pgxpool.Pool, o Opts) *Store {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	return &Store{pool: pool, dir: o.Dir, parts: map[string]*partition{}}
}

var _ vectorstore.Store = (*Store)(nil)

// Upsert writes the vectors to chunk_embeddings in one transaction, refusing the
// whole batch when a chunk does not exist or belongs to another paper, or when the
// dimension differs from the model's.
func (s *Store) Upsert(ctx context.Context, model string, items []vectorstore.Item) error {
	defer s.write()()
	if err := vectorstore.ValidateUpsert(model, items); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	dim := len(items[0].Vector)
	var inserted int64
	var newest time.Time
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One writer per model decides its dimension.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('vectorstore:' || $1, 0))`, model); err != nil {
			return err
		}
		var have int
		err := tx.QueryRow(ctx, `SELECT dimension FROM chunk_embeddings WHERE model = $1 LIMIT 1`, model).Scan(&have)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case have != dim:
			return fmt.Errorf("%w: model %q has %d dimensions, the vectors %d", vectorstore.ErrDimension, model, have, dim)
		}
		batch := &pgx.Batch{}
		for _, it := range items {
			batch.Queue(`
				INSERT INTO chunk_embeddings (chunk_id, model, dimension, vector)
				SELECT id, $2, $3, $4 FROM paper_chunks WHERE id = $1 AND paper_id = $5
				ON CONFLICT (chunk_id, model) DO UPDATE
				   SET vector = EXCLUDED.vector, dimension = EXCLUDED.dimension, created_at = now()
				RETURNING (xmax = 0), created_at`,
				it.ChunkID, model, dim, it.Vector, it.PaperID)
		}
		res := tx.SendBatch(ctx, batch)
		defer res.Close()
		for _, it := range items {
			var fresh bool
			err := res.QueryRow().Scan(&fresh, &newest)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%w: chunk %s of paper %s does not exist", vectorstore.ErrInvalid, it.ChunkID, it.PaperID)
			}
			if err != nil {
				return err
			}
			if fresh {
				inserted++
			}
		}
		return res.Close()
	})
	if err != nil {
		return fmt.Errorf("embedded: upsert: %w", err)
	}
	if p := s.loaded(model); p != nil {
		p.mu.Lock()
		p.apply(model, func() error {
			for _, it := range items {
				if err := p.put(it.ChunkID, it.PaperID, it.Vector); err != nil {
					return err
				}
			}
			return p.index()
		})
		// Keep the staleness check in step with our own write, so it does not
		// mistake it for another process's and reload.
		p.count += inserted
		if newest.After(p.newest) {
			p.newest = newest
		}
		p.mu.Unlock()
	}
	return nil
}

// Delete removes these chunks' vectors under model.
func (s *Store) Delete(ctx context.Context, model string, chunkIDs []uuid.UUID) error {
	defer s.write()()
	if len(chunkIDs) == 0 {
		return nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM chunk_embeddings WHERE model = $1 AND chunk_id = ANY($2)`, model, chunkIDs)
	if err != nil {
		return fmt.Errorf("embedded: delete: %w", err)
	}
	if p := s.loaded(model); p != nil {
		p.mu.Lock()
		p.count -= tag.RowsAffected()
		p.apply(model, func() error {
			for _, id := range chunkIDs {
				if err := p.remove(id); err != nil {
					return err
				}
			}
			return p.index()
		})
		p.mu.Unlock()
	}
	return nil
}

// DeletePaper removes every vector of the paper's chunks under every model.
func (s *Store) DeletePaper(ctx context.Context, paperID uuid.UUID) error {
	defer s.write()()
	if _, err := s.pool.Exec(ctx, `
		DELETE FROM chunk_embeddings
		 WHERE chunk_id IN (SELECT id FROM paper_chunks WHERE paper_id = $1)`, paperID); err != nil {
		return fmt.Errorf("embedded: delete paper: %w", err)
	}
	s.mu.Lock()
	parts := make(map[string]*partition, len(s.parts))
	for model, p := range s.parts {
		parts[model] = p
	}
	s.mu.Unlock()
	for model, p := range parts {
		p.mu.Lock()
		p.apply(model, func() error {
			for i := len(p.ids) - 1; i >= 0; i-- {
				if p.papers[i] == paperID {
					if err := p.remove(p.ids[i]); err != nil {
						return err
					}
					p.count--
				}
			}
			return p.index()
		})
		p.mu.Unlock()
	}
	return nil
}

// apply runs a change of the partition's memory after its write reached
// PostgreSQL. When the change fails (its file could not be written), the write
// stands, and the partition is marked stale so the next search loads it again from
// PostgreSQL. The caller holds p.mu.
func (p *partition) apply(model string, change func() error) {
	if err := change(); err != nil {
		p.loadedOK = false
		slog.Warn("embedded: the in-memory vectors of a model will be reloaded from PostgreSQL", "model", model, "err", err)
	}
}

// Search scans the model's vectors and returns the k with the highest cosine.
func (s *Store) Search(ctx context.Context, model string, query []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := vectorstore.ValidateSearch(model, query, k); err != nil {
		return nil, err
	}
	p, err := s.partition(ctx, model)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.ids) == 0 {
		return []vectorstore.Hit{}, nil
	}
	if len(query) != p.dim {
		return nil, fmt.Errorf("%w: model %q has %d dimensions, the query %d", vectorstore.ErrDimension, model, p.dim, len(query))
	}
	var only map[uuid.UUID]bool
	if len(f.PaperIDs) > 0 {
		only = make(map[uuid.UUID]bool, len(f.PaperIDs))
		for _, id := range f.PaperIDs {
			only[id] = true
		}
	}
	return p.search(normalised(query), k, only)
}

// search returns the k rows (of the papers in only, when set) with the highest dot
// product with the normalised query q, scored exactly. Small partitions, and
// searches filtered to a few papers, score every row on its codes. Larger ones
// score the rows of the IVF index's nprobe lists nearest q when the partition has
// an index (see ivf.go), or else the candidates nearest by sign bits (the Hamming
// distance between the rows' and the query's sign bits, a 32nd of the work of the
// codes). Either way the best rerankDepth(k) by codes are then rescored from the
// exact rows. The caller holds p.mu for reading.
func (p *partition) search(q []float32, k int, only map[uuid.UUID]bool) ([]vectorstore.Hit, error) {
	qq := newQuery(q)
	if len(p.ids) < exactBelow || only != nil {
		return p.exact(qq, k, only, nil)
	}
	if p.ivf != nil {
		return p.exact(qq, k, nil, p.ivf.rows(q, p.ivf.nprobe))
	}
	return p.quantised(qq, k)
}

// quantised is the sign-bit search: Hamming distances pick rerankCount(k)
// candidates, which are scored on their codes and then exactly.
func (p *partition) quantised(q query, k int) ([]vectorstore.Hit, error) {
	return p.exact(q, k, nil, p.candidates(q.vec, p.rerankCount(k)))
}

// rerankCount is how many candidates the sign-bit search scores on their codes.
func (p *partition) rerankCount(k int) int {
	return max(k*4, minRerank, len(p.ids)/rerankFraction)
}

// rerankDepth is how many of the best rows by codes are rescored exactly for k
// hits: the codes misjudge a cosine by a few thousandths (quant.go), much less
// than the gap between the 10th and the 40th neighbour.
func rerankDepth(k int) int { return max(k*rerankPerHit, rerankMin) }

const (
	// exactBelow is the partition size under which every search scores every row.
	exactBelow = 40_000
	// rerankFraction: a sign-bit search scores len/rerankFraction candidates
	// (recall@10 at 1M synthetic vectors in docs/benchmarks.md).
	rerankFraction = 10
	// minRerank is the fewest candidates a sign-bit search scores: the smaller
	// the partition, the larger the share its true neighbours need.
	minRerank = 20_000
	// rerankPerHit and rerankMin size the short list rescored from the exact rows.
	rerankPerHit = 4
	rerankMin    = 40
)

// candidates returns the indexes of the n rows whose sign bits are nearest the
// query's, by a histogram of Hamming distances (at most dim+1 buckets) rather than
// a sort.
func (p *partition) candidates(q []float32, n int) []int {
	qs := make([]uint64, p.words)
	signBits(qs, q)
	dist := make([]uint16, len(p.ids))
	hist := make([]int, p.words*64+1)
	for i := range p.ids {
		row := p.signs[i*p.words : (i+1)*p.words]
		d := 0
		for w, x := range row {
			d += bits.OnesCount64(x ^ qs[w])
		}
		dist[i] = uint16(d)
		hist[d]++
	}
	// Rows strictly under cut are all taken; rows at cut fill what is left.
	cut, below := 0, 0
	for cut < len(hist) && below+hist[cut] < n {
		below += hist[cut]
		cut++
	}
	atCut := n - below
	out := make([]int, 0, n)
	for i, d := range dist {
		switch {
		case int(d) < cut:
			out = append(out, i)
		case int(d) == cut && atCut > 0:
			out = append(out, i)
			atCut--
		}
	}
	return out
}

// exact returns the k rows nearest q by their exact cosine: every row, or the rows
// in rows when it is not nil, is scored on its codes, and the best rerankDepth(k)
// of them are rescored from the exact rows.
func (p *partition) exact(q query, k int, only map[uuid.UUID]bool, rows []int) ([]vectorstore.Hit, error) {
	depth := rerankDepth(k)
	top := make(minHeap, 0, depth+1)
	n := len(p.ids)
	if rows != nil {
		n = len(rows)
	}
	for r := range n {
		i := r
		if rows != nil {
			i = rows[r]
		}
		if only != nil && !only[p.papers[i]] {
			continue
		}
		pushTop(&top, depth, i, q.approx(p.codes, i))
	}
	return p.rerank(q.vec, top, k)
}

// rerank scores the candidates exactly from the partition's file and returns the k
// best, best first.
func (p *partition) rerank(q []float32, cands []scored, k int) ([]vectorstore.Hit, error) {
	// In file order, so neighbouring rows share reads of the page cache.
	slices.SortFunc(cands, func(a, b scored) int { return a.i - b.i })
	vec := make([]float32, p.dim)
	buf := make([]byte, p.dim*4)
	top := make(minHeap, 0, k+1)
	for _, c := range cands {
		if err := p.floats.read(c.i, vec, buf); err != nil {
			return nil, err
		}
		pushTop(&top, k, c.i, dot(vec, q))
	}
	out := make([]vectorstore.Hit, len(top))
	for n := len(top) - 1; n >= 0; n-- {
		sc := heap.Pop(&top).(scored)
		out[n] = vectorstore.Hit{ChunkID: p.ids[sc.i], PaperID: p.papers[sc.i], Score: sc.score}
	}
	return out, nil
}

// loaded returns the model's partition when it is in memory.
func (s *Store) loaded(model string) *partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts[model]
}

// partition returns the model's partition, loading it from PostgreSQL the first
// time and reloading it when PostgreSQL has changed behind it.
//
// Every search comes through here, so the common case takes the partition's lock
// only for reading: an exclusive lock would wait for every search under way to
// finish, and hold every new one back meanwhile, so that concurrent searches ran
// in waves (the load test, docs/benchmarks.md "Load test (issue 23)"). When the
// check against PostgreSQL is due, one search makes it while the others go on
// with the rows loaded, which already hold every write made through this store.
func (s *Store) partition(ctx context.Context, model string) (*partition, error) {
	s.mu.Lock()
	p, ok := s.parts[model]
	if !ok {
		p = newPartition(s.dir)
		s.parts[model] = p
	}
	s.mu.Unlock()

	p.mu.RLock()
	loaded, due := p.loadedOK, time.Since(p.checked) >= RefreshEvery
	p.mu.RUnlock()
	switch {
	case loaded && !due:
		return p, nil
	case loaded && !p.checking.CompareAndSwap(false, true):
		return p, nil // another search is checking
	case loaded:
		defer p.checking.Store(false)
	}
	if err := s.refresh(ctx, model, p); err != nil {
		return nil, err
	}
	return p, nil
}

// refresh compares the partition with PostgreSQL (its row count and newest write)
// and reloads it when they differ and none of this store's own writes was under
// way meanwhile. The comparison's query runs before the partition is locked, so
// searches go on while it runs; only a reload holds them.
func (s *Store) refresh(ctx context.Context, model string, p *partition) error {
	// Done first: a write that ends between the two reads counts as under way.
	done := s.writesDone.Load()
	begun := s.writesBegun.Load()
	var count int64
	var newest *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT count(*), max(created_at) FROM chunk_embeddings WHERE model = $1`, model).Scan(&count, &newest); err != nil {
		return fmt.Errorf("embedded: check %q: %w", model, err)
	}
	var nw time.Time
	if newest != nil {
		nw = *newest
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loadedOK && time.Since(p.checked) < RefreshEvery {
		return nil // another caller loaded or checked it meanwhile
	}
	if p.loadedOK && (begun != done || s.writesBegun.Load() != begun) {
		// One of this store's writes was under way: PostgreSQL may have it while
		// the partition does not yet (it waits for this lock), which is no other
		// node's change. Reloading for it would hold every search for a whole
		// load (about a minute at 100k rows under load); the next check decides.
		p.checked = time.Now()
		return nil
	}
	if p.loadedOK && count == p.count && nw.Equal(p.newest) {
		p.checked = time.Now()
		return nil
	}
	if err := p.load(ctx, s.pool, model, count); err != nil {
		p.loadedOK = false
		return err
	}
	p.count, p.newest, p.checked, p.loadedOK = count, nw, time.Now(), true
	return nil
}

// load replaces the partition's contents with PostgreSQL's, streaming the rows
// into codes and file one at a time: at no point are all of a model's float vectors
// in memory. count, the rows PostgreSQL reported just before, sizes the id slices.
// The caller holds p.mu.
func (p *partition) load(ctx context.Context, pool *pgxpool.Pool, model string, count int64) error {
	p.clear()
	rows, err := pool.Query(ctx, `
		SELECT e.chunk_id, c.paper_id, e.vector
		  FROM chunk_embeddings e JOIN paper_chunks c ON c.id = e.chunk_id
		 WHERE e.model = $1`, model)
	if err != nil {
		return fmt.Errorf("embedded: load %q: %w", model, err)
	}
	defer rows.Close()
	p.ids, p.papers = make([]uuid.UUID, 0, count), make([]uuid.UUID, 0, count)
	p.pos.reserve(nil, int(count))
	var chunkID, paperID uuid.UUID
	var vec []float32
	for rows.Next() {
		if err := rows.Scan(&chunkID, &paperID, &vec); err != nil {
			return fmt.Errorf("embedded: load %q: %w", model, err)
		}
		if err := p.put(chunkID, paperID, vec); err != nil {
			return fmt.Errorf("embedded: load %q: %w", model, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("embedded: load %q: %w", model, err)
	}
	if err := p.index(); err != nil {
		return fmt.Errorf("embedded: load %q: %w", model, err)
	}
	return nil
}

// clear empties the partition, releasing its codes. The caller holds p.mu.
func (p *partition) clear() {
	p.dim, p.ids, p.papers, p.signs, p.pos = 0, nil, nil, nil, rowIndex{}
	if p.codes != nil {
		p.codes.free()
		p.codes = nil
	}
	p.ivf, p.indexedN = nil, 0
}

// start prepares the empty partition for rows of dim components. The caller holds
// p.mu.
func (p *partition) start(dim int) error {
	if p.floats == nil {
		f, err := openFloatFile(p.dir)
		if err != nil {
			return err
		}
		p.floats = f
	}
	if err := p.floats.reset(dim); err != nil {
		return err
	}
	if p.codes != nil {
		p.codes.free()
	}
	p.dim, p.words = dim, (dim+63)/64
	p.codes = newCodes(dim)
	p.signs = nil
	p.ivf, p.indexedN = nil, 0 // the dimension may change
	return nil
}

// put adds or replaces one vector. The caller holds p.mu.
func (p *partition) put(chunkID, paperID uuid.UUID, vec []float32) error {
	if len(p.ids) == 0 {
		if err := p.start(len(vec)); err != nil {
			return err
		}
	}
	if len(vec) != p.dim {
		return nil // refused before it reached PostgreSQL; never mixed in memory
	}
	if len(p.scratch) != p.dim {
		p.scratch = make([]float32, p.dim)
	}
	n := normalise(p.scratch, vec)
	if i, ok := p.pos.find(p.ids, chunkID); ok {
		if err := p.floats.put(i, n); err != nil {
			return err
		}
		p.codes.set(i, n)
		if p.signs != nil {
			signBits(p.signs[i*p.words:(i+1)*p.words], n)
		}
		p.papers[i] = paperID
		if p.ivf != nil {
			p.ivf.unlink(i)
			p.ivf.link(i, p.ivf.nearest(n))
		}
		return nil
	}
	if err := p.floats.put(len(p.ids), n); err != nil {
		return err
	}
	if p.ivf != nil {
		p.ivf.link(len(p.ids), p.ivf.nearest(n))
	}
	p.ids = append(p.ids, chunkID)
	p.pos.insert(p.ids, chunkID, len(p.ids)-1)
	p.papers = append(p.papers, paperID)
	p.codes.append(n)
	if p.signs != nil {
		p.signs = append(p.signs, make([]uint64, p.words)...)
		signBits(p.signs[len(p.signs)-p.words:], n)
	}
	return nil
}

// remove deletes one vector by moving the last row into its place. The caller
// holds p.mu.
func (p *partition) remove(chunkID uuid.UUID) error {
	i, ok := p.pos.find(p.ids, chunkID)
	if !ok {
		return nil
	}
	last := len(p.ids) - 1
	if i != last {
		if err := p.floats.move(i, last); err != nil {
			return err
		}
	}
	// The index is told while p.ids still holds both rows' ids where it expects them.
	p.pos.delete(p.ids, chunkID)
	if i != last {
		p.pos.move(p.ids, p.ids[last], i)
	}
	if p.ivf != nil {
		p.ivf.removeRow(i)
	}
	if i != last {
		p.ids[i], p.papers[i] = p.ids[last], p.papers[last]
		p.codes.move(i, last)
		if p.signs != nil {
			copy(p.signs[i*p.words:(i+1)*p.words], p.signs[last*p.words:])
		}
	}
	p.ids, p.papers = p.ids[:last], p.papers[:last]
	p.codes.pop()
	if p.signs != nil {
		p.signs = p.signs[:last*p.words]
	}
	return nil
}

// buildSigns computes every row's sign bits from its codes (a code keeps its
// component's sign; one rounded to 0 counts as not positive).
func (p *partition) buildSigns() {
	p.signs = make([]uint64, len(p.ids)*p.words)
	for i := range p.ids {
		row := p.signs[i*p.words : (i+1)*p.words]
		for j, c := range p.codes.row(i) {
			if int8(c) > 0 {
				row[j/64] |= 1 << (j % 64)
			}
		}
	}
}

// signBits sets bit j of dst when v[j] is positive.
func signBits(dst []uint64, v []float32) {
	clear(dst)
	for j, x := range v {
		if x > 0 {
			dst[j/64] |= 1 << (j % 64)
		}
	}
}

// normalised returns v scaled to unit length (zero stays zero).
func normalised(v []float32) []float32 { return normalise(make([]float32, len(v)), v) }

// normalise writes v scaled to unit length to dst and returns dst.
func normalise(dst, v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		clear(dst)
		return dst
	}
	inv := float32(1 / math.Sqrt(sum))
	for i, x := range v {
		dst[i] = x * inv
	}
	return dst
}

type scored struct {
	i     int
	score float32
}

// minHeap keeps the k best hits with the worst on top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
