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
// Writes go to PostgreSQL alone. Every search first reads the change log
// chunk_embedding_changes (migration 0023), filled by triggers on
// chunk_embeddings, from the xmin of the snapshot it last read, and reads the
// vectors of the chunks named there again: a search sees every write committed
// before it began, whichever process made it (this host, a worker host, the
// import command).
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
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// The change log's limits.
const (
	// changeRetention is how long the change log keeps a row; the store
	// deletes older ones at most every pruneEvery.
	changeRetention = 24 * time.Hour
	pruneEvery      = time.Hour
	// followTrust is how long after its last read of the change log a
	// partition may still follow it rather than load again: well inside
	// changeRetention, so that no row it needs has been pruned (unless a write
	// transaction on chunk_embeddings stayed open for twelve hours).
	followTrust = 12 * time.Hour
	// maxFollow is the most changed chunks a search reads again one by one;
	// past it the partition loads whole (a re-embedding, a bulk import).
	maxFollow = 20000
)

// Store is the embedded vector store.
type Store struct {
	pool *pgxpool.Pool
	dir  string

	mu     sync.Mutex
	parts  map[string]*partition
	pruned time.Time // when this store last pruned the change log
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
	since    uint64     // the change log is read from this transaction id (the xmin of the last read's snapshot)
	read     time.Time  // when the change log was last read
	loadedOK bool

	// syncMu lets one search at a time bring the partition up to date (follow
	// or reload); since, read and loadedOK change only under it (and p.mu when
	// the rows change). synced is when the last successful catch-up began: a
	// search that arrived before it needs no catch-up of its own, so N searches
	// arriving together cost about two reads of the change log, not N, and none
	// waits on the exclusive lock unless there is something to apply.
	syncMu sync.Mutex
	synced time.Time
	// applied is the change of each chunk (its xid in the log) already read
	// since the log's read point: the read point is the oldest transaction still
	// open anywhere in the cluster, so a follow sees changes it applied before
	// again while any long transaction runs, and takes the exclusive lock only
	// for the ones it has not. Guarded by syncMu.
	applied map[uuid.UUID]uint64
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
	if err := vectorstore.ValidateUpsert(model, items); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	dim := len(items[0].Vector)
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
				RETURNING chunk_id`,
				it.ChunkID, model, dim, it.Vector, it.PaperID)
		}
		res := tx.SendBatch(ctx, batch)
		defer res.Close()
		for _, it := range items {
			var id uuid.UUID
			err := res.QueryRow().Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%w: chunk %s of paper %s does not exist", vectorstore.ErrInvalid, it.ChunkID, it.PaperID)
			}
			if err != nil {
				return err
			}
		}
		return res.Close()
	})
	if err != nil {
		return fmt.Errorf("embedded: upsert: %w", err)
	}
	// The next search of every host, this one's too, reads the change log the
	// triggers wrote, and with it these vectors.
	s.maybePrune(ctx)
	return nil
}

// Delete removes these chunks' vectors under model.
func (s *Store) Delete(ctx context.Context, model string, chunkIDs []uuid.UUID) error {
	if len(chunkIDs) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM chunk_embeddings WHERE model = $1 AND chunk_id = ANY($2)`, model, chunkIDs); err != nil {
		return fmt.Errorf("embedded: delete: %w", err)
	}
	return nil
}

// DeletePaper removes every vector of the paper's chunks under every model.
func (s *Store) DeletePaper(ctx context.Context, paperID uuid.UUID) error {
	if _, err := s.pool.Exec(ctx, `
		DELETE FROM chunk_embeddings
		 WHERE chunk_id IN (SELECT id FROM paper_chunks WHERE paper_id = $1)`, paperID); err != nil {
		return fmt.Errorf("embedded: delete paper: %w", err)
	}
	return nil
}

// maybePrune deletes the change log's rows older than changeRetention, at most
// every pruneEvery per store; every host does it, which is harmless. A failure
// is logged: the rows wait for the next prune.
func (s *Store) maybePrune(ctx context.Context) {
	s.mu.Lock()
	due := time.Since(s.pruned) >= pruneEvery
	if due {
		s.pruned = time.Now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM chunk_embedding_changes WHERE noted_at < now() - make_interval(secs => $1)`,
		changeRetention.Seconds()); err != nil {
		slog.Warn("embedded: prune the vectors' change log; the next write tries again", "err", err)
		s.mu.Lock()
		s.pruned = time.Time{}
		s.mu.Unlock()
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
// codes). A sparse query (quant.go) scores every row on its few nonzero
// components instead, which reads less than the sign bits of every row and the
// codes of the candidates, and misses no row the codes rank high: the sign bits of
// a query's zero components say nothing of it. Either way the best
// rerankDepth(k) by codes are then rescored from the exact rows. The caller holds
// p.mu for reading.
func (p *partition) search(q []float32, k int, only map[uuid.UUID]bool) ([]vectorstore.Hit, error) {
	qq := newQuery(q)
	if len(p.ids) < exactBelow || only != nil || qq.sparse() {
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
	// sparseRerankPerHit sizes it for a sparse query, scored on a few components
	// whose codes are each off by at most 1/254 of their row's largest: twice k
	// kept the exact top k/2 whole at 100k rows (TestSparseQueriesKeepTheirTopHalf;
	// even k did), and each row read again is a read of the partition's file.
	sparseRerankPerHit = 2
)

// sparseRerankDepth is rerankDepth for a sparse query.
func sparseRerankDepth(k int) int { return max(k*sparseRerankPerHit, rerankMin) }

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
// of them (sparseRerankDepth(k) for a sparse query) are rescored from the exact
// rows.
func (p *partition) exact(q query, k int, only map[uuid.UUID]bool, rows []int) ([]vectorstore.Hit, error) {
	if rows == nil && q.sparse() {
		depth := sparseRerankDepth(k)
		top := make(minHeap, 0, depth+1)
		p.scanSparse(q, depth, only, &top)
		return p.rerank(q.vec, top, k)
	}
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

// scanSparse scores every row (of the papers in only, when set) on the sparse
// query's nonzero components, one component at a time, keeping the best depth in
// top. A component comes from its kept column (columns.go) when the budget holds
// one; else it is read from the codes, walking each block's rows at a fixed
// stride so that the bytes arrive by the processor's prefetch.
func (p *partition) scanSparse(q query, depth int, only map[uuid.UUID]bool, top *minHeap) {
	c := p.codes
	accp := accPool.Get().(*[]int32)
	defer accPool.Put(accp)
	if cap(*accp) < c.len() {
		*accp = make([]int32, c.len())
	}
	acc := (*accp)[:c.len()]
	clear(acc)
	// Kept columns are added four at a time, so that each pass over the sums
	// reads and writes them once for four components.
	var kept [][][]byte
	var keptQ []int32
	for _, j := range q.nz {
		qc := int32(int8(q.codes[j]))
		if col := c.column(j); col != nil {
			kept, keptQ = append(kept, col), append(keptQ, qc)
			continue
		}
		for b, block := range c.blocks {
			first := b * c.blockRows
			part := acc[first:min(first+c.blockRows, len(acc))]
			for r, o := 0, j; r < len(part); r, o = r+1, o+c.dim {
				part[r] += qc * int32(int8(block[o]))
			}
		}
	}
	for b := range c.blocks {
		first := b * c.blockRows
		part := acc[first:min(first+c.blockRows, len(acc))]
		i := 0
		for ; i+4 <= len(kept); i += 4 {
			addColumns4(part, kept[i][b], kept[i+1][b], kept[i+2][b], kept[i+3][b], keptQ[i:i+4])
		}
		for ; i < len(kept); i++ {
			qc := keptQ[i]
			for r, x := range kept[i][b][:len(part)] {
				part[r] += qc * int32(int8(x))
			}
		}
	}
	scales := c.scales[:len(acc)]
	for i, s := range acc {
		score := float32(s) * q.scale * scales[i]
		if len(*top) == depth && score <= (*top)[0].score {
			continue // most rows: decided without a call or a lookup
		}
		if only != nil && !only[p.papers[i]] {
			continue
		}
		pushTop(top, depth, i, score)
	}
}

// addColumns4 adds to each sum the products of four components' codes with q's.
func addColumns4(acc []int32, c0, c1, c2, c3 []byte, q []int32) {
	n := len(acc)
	c0, c1, c2, c3 = c0[:n], c1[:n], c2[:n], c3[:n]
	q0, q1, q2, q3 := q[0], q[1], q[2], q[3]
	for r := range acc {
		acc[r] += q0*int32(int8(c0[r])) + q1*int32(int8(c1[r])) + q2*int32(int8(c2[r])) + q3*int32(int8(c3[r]))
	}
}

// accPool holds scanSparse's sums, one a row, between searches.
var accPool = sync.Pool{New: func() any { return new([]int32) }}

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

// partition returns the model's partition, up to date with every write
// committed before the call: loaded from PostgreSQL the first time (or when the
// change log cannot be followed), else brought up to date from the change log.
func (s *Store) partition(ctx context.Context, model string) (*partition, error) {
	s.mu.Lock()
	p, ok := s.parts[model]
	if !ok {
		p = newPartition(s.dir)
		s.parts[model] = p
	}
	s.mu.Unlock()

	arrived := time.Now()
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.loadedOK && p.synced.After(arrived) {
		// A catch-up that began after this search arrived has finished: it saw
		// every write committed before the search.
		return p, nil
	}
	begun := time.Now()
	if p.loadedOK && time.Since(p.read) < followTrust {
		full, err := p.follow(ctx, s.pool, model)
		if err != nil {
			return nil, err
		}
		if !full {
			p.synced = begun
			return p, nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reload(ctx, s.pool, model); err != nil {
		p.loadedOK = false
		return nil, err
	}
	p.synced = begun
	return p, nil
}

// reload loads the partition whole and notes where the change log is to be
// read from next: the xmin of a snapshot taken before the load, so that a write
// that commits during the load is read again by the next follow (reading a
// change twice is harmless). The caller holds p.syncMu and p.mu.
func (p *partition) reload(ctx context.Context, pool *pgxpool.Pool, model string) error {
	var xmin string
	var count int64
	var logged []uuid.UUID
	var xids []string
	if err := pool.QueryRow(ctx, `
		WITH c AS (SELECT chunk_id, xid FROM chunk_embedding_changes
		            WHERE model = $1 AND xid >= pg_snapshot_xmin(pg_current_snapshot()) LIMIT $2)
		SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
		       (SELECT count(*) FROM chunk_embeddings WHERE model = $1),
		       coalesce((SELECT array_agg(chunk_id) FROM c), '{}'),
		       coalesce((SELECT array_agg(xid::text) FROM c), '{}')`,
		model, maxFollow).Scan(&xmin, &count, &logged, &xids); err != nil {
		return fmt.Errorf("embedded: check %q: %w", model, err)
	}
	since, err := strconv.ParseUint(xmin, 10, 64)
	if err != nil {
		return fmt.Errorf("embedded: check %q: transaction id %q: %w", model, xmin, err)
	}
	if err := p.load(ctx, pool, model, count); err != nil {
		return err
	}
	// The changes the log showed before the load are in what it read: a follow
	// need not read them again (one committed during the load may be, once).
	p.applied = make(map[uuid.UUID]uint64, len(logged))
	for i, id := range logged {
		if i < len(xids) {
			if x, err := strconv.ParseUint(xids[i], 10, 64); err == nil {
				p.applied[id] = x
			}
		}
	}
	p.since, p.read, p.loadedOK = since, time.Now(), true
	return nil
}

// follow reads the chunks the change log names since p.since and reads their
// vectors again: a chunk still there is put, one that is gone is removed. It
// returns full = true when the partition should load whole instead: more
// changes than maxFollow, a vector of another dimension, or a change memory
// could not take. The caller holds p.syncMu; follow takes p.mu only to apply
// changes, so searches go on while it reads the log.
func (p *partition) follow(ctx context.Context, pool *pgxpool.Pool, model string) (full bool, err error) {
	var xmin string
	var changed []uuid.UUID
	var xids []string
	if err := pool.QueryRow(ctx, `
		WITH c AS (SELECT chunk_id, xid FROM chunk_embedding_changes
		            WHERE model = $1 AND xid >= $2::text::xid8 LIMIT $3)
		SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
		       coalesce((SELECT array_agg(chunk_id) FROM c), '{}'),
		       coalesce((SELECT array_agg(xid::text) FROM c), '{}')`,
		model, strconv.FormatUint(p.since, 10), maxFollow+1).Scan(&xmin, &changed, &xids); err != nil {
		return false, fmt.Errorf("embedded: read the changes of %q: %w", model, err)
	}
	since, err := strconv.ParseUint(xmin, 10, 64)
	if err != nil {
		return false, fmt.Errorf("embedded: read the changes of %q: transaction id %q: %w", model, xmin, err)
	}
	if len(changed) > maxFollow || len(xids) != len(changed) {
		return true, nil
	}
	var fresh []uuid.UUID
	seen := make(map[uuid.UUID]uint64, len(changed))
	for i, id := range changed {
		x, err := strconv.ParseUint(xids[i], 10, 64)
		if err != nil {
			return true, nil
		}
		seen[id] = x
		if done, ok := p.applied[id]; !ok || done != x {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) > 0 {
		p.mu.Lock()
		full, err := p.reread(ctx, pool, model, fresh)
		p.mu.Unlock()
		if full || err != nil {
			return full, err
		}
	}
	if p.applied == nil {
		p.applied = map[uuid.UUID]uint64{}
	}
	for id, x := range seen {
		p.applied[id] = x
	}
	for id, x := range p.applied {
		if x < since {
			delete(p.applied, id) // below the read point: the log will not name it again
		}
	}
	p.since, p.read = since, time.Now()
	return false, nil
}

// reread reads the vectors of the changed chunks again and applies them to
// memory: a chunk that is gone is removed. It returns full = true when memory
// could not take a change (its file could not be written, or the model's
// vectors changed dimension); the partition then loads whole. The caller holds
// p.mu.
func (p *partition) reread(ctx context.Context, pool *pgxpool.Pool, model string, changed []uuid.UUID) (full bool, err error) {
	rows, err := pool.Query(ctx, `
		SELECT e.chunk_id, c.paper_id, e.vector
		  FROM chunk_embeddings e JOIN paper_chunks c ON c.id = e.chunk_id
		 WHERE e.model = $1 AND e.chunk_id = ANY($2)`, model, changed)
	if err != nil {
		return false, fmt.Errorf("embedded: read the changed vectors of %q: %w", model, err)
	}
	defer rows.Close()
	type vector struct {
		chunk, paper uuid.UUID
		vec          []float32
	}
	var present []vector
	for rows.Next() {
		var v vector
		if err := rows.Scan(&v.chunk, &v.paper, &v.vec); err != nil {
			return false, fmt.Errorf("embedded: read the changed vectors of %q: %w", model, err)
		}
		present = append(present, v)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("embedded: read the changed vectors of %q: %w", model, err)
	}
	kept := make(map[uuid.UUID]bool, len(present))
	for _, v := range present {
		kept[v.chunk] = true
	}
	for _, id := range changed {
		if kept[id] {
			continue // replaced in place below
		}
		if err := p.remove(id); err != nil {
			slog.Warn("embedded: the in-memory vectors of a model will be loaded again from PostgreSQL", "model", model, "err", err)
			return true, nil
		}
	}
	for _, v := range present {
		if len(p.ids) > 0 && len(v.vec) != p.dim {
			return true, nil
		}
		if err := p.put(v.chunk, v.paper, v.vec); err != nil {
			slog.Warn("embedded: the in-memory vectors of a model will be loaded again from PostgreSQL", "model", model, "err", err)
			return true, nil
		}
	}
	if err := p.index(); err != nil {
		slog.Warn("embedded: the in-memory vectors of a model will be loaded again from PostgreSQL", "model", model, "err", err)
		return true, nil
	}
	return false, nil
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
