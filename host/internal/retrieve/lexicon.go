package retrieve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/bm25"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// lexicon is the lexical ranking: an in-process BM25 index of every passage
// (package bm25), kept in step with PostgreSQL, which stays the truth. It loads
// every passage's tsvector on first use; before each search it reads the change
// log and reloads the papers named there, so a search sees every write committed
// before it started, whichever node made it. Who may see a paper is asked of
// PostgreSQL at each search, in the same round trip as the change log and the
// query's parse (papers.SearchInputs), and the passages returned are read again
// under the visibility predicate.
type lexicon struct {
	store *papers.Store
	index *bm25.Index

	mu      sync.Mutex // one catch-up at a time; guards the fields below
	loaded  bool
	horizon uint64
	// ready is loaded, read without waiting for mu (which a load holds).
	ready atomic.Bool
	// loading is closed when the load in progress ends; loadErr is how.
	loadMu  sync.Mutex
	loading chan struct{}
	loadErr error
	// seen is the change applied per paper, for changes at or above horizon: a
	// long transaction holds the horizon back, and those changes would otherwise
	// be reloaded at every search.
	seen map[uuid.UUID]uint64
	// caughtUp is when the last catch-up that completed began.
	caughtUp time.Time
}

func newLexicon(store *papers.Store) *lexicon {
	return &lexicon{store: store, index: bm25.New(), seen: map[uuid.UUID]uint64{}}
}

// catchUp brings the index up to every change committed before asOf. When a
// catch-up that began after asOf has completed meanwhile, there is nothing to do.
func (l *lexicon) catchUp(ctx context.Context, asOf time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded && l.caughtUp.After(asOf) {
		return nil
	}
	began := time.Now()
	if !l.loaded {
		if err := l.load(ctx); err != nil {
			return err
		}
	} else {
		changes, horizon, err := l.store.PassageChanges(ctx, l.horizon)
		if err != nil {
			return fmt.Errorf("retrieve: lexical index: %w", err)
		}
		if err := l.apply(ctx, changes, horizon); err != nil {
			return err
		}
	}
	l.caughtUp = began
	return nil
}

// since is the transaction id to read the change log from. While the index is
// still loading (the first search after a start, on a large corpus), a search
// waits at most loadWait for it and is then answered by Lexical's capped ranking
// (errNotReady), so nobody waits a minute for the first answer of the day.
func (l *lexicon) since(ctx context.Context, asOf time.Time) (uint64, error) {
	if !l.ready.Load() {
		if err := l.waitLoaded(ctx); err != nil {
			return 0, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.horizon, nil
}

// loadWait is how long a search waits for the index to load before it is
// answered without it.
const loadWait = 2 * time.Second

// errNotReady says the index is still loading; Lexical ranks the query.
var errNotReady = errors.New("retrieve: the lexical index is still loading")

// waitLoaded starts loading the index (once at a time, in the background, so a
// search that gives up waiting does not stop it) and waits for it, at most
// loadWait.
func (l *lexicon) waitLoaded(ctx context.Context) error {
	l.loadMu.Lock()
	if l.loading == nil {
		ch := make(chan struct{})
		l.loading = ch
		go func() {
			err := l.catchUp(context.WithoutCancel(ctx), time.Now())
			l.loadMu.Lock()
			l.loadErr = err
			if err != nil {
				l.loading = nil // the next search tries again
			}
			l.loadMu.Unlock()
			close(ch)
		}()
	}
	ch := l.loading
	l.loadMu.Unlock()
	t := time.NewTimer(loadWait)
	defer t.Stop()
	select {
	case <-ch:
		l.loadMu.Lock()
		defer l.loadMu.Unlock()
		return l.loadErr
	case <-t.C:
		return errNotReady
	case <-ctx.Done():
		return ctx.Err()
	}
}

// applyRead applies changes read (with their horizon) by a search that began at
// asOf, unless a catch-up that began later has been applied.
func (l *lexicon) applyRead(ctx context.Context, changes []papers.PassageChange, horizon uint64, asOf time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.caughtUp.After(asOf) {
		return nil
	}
	if err := l.apply(ctx, changes, horizon); err != nil {
		return err
	}
	l.caughtUp = asOf
	return nil
}

// apply reloads the papers named by changes that the index has not applied yet,
// and moves the horizon. Call it with l.mu held.
func (l *lexicon) apply(ctx context.Context, changes []papers.PassageChange, horizon uint64) error {
	var stale []uuid.UUID
	for _, c := range changes {
		if l.seen[c.PaperID] != c.XID {
			stale = append(stale, c.PaperID)
		}
	}
	if len(stale) > 0 {
		rows, err := l.store.PassageTermsOf(ctx, stale)
		if err != nil {
			return fmt.Errorf("retrieve: lexical index: %w", err)
		}
		byPaper := make(map[uuid.UUID]*bm25.Paper, len(stale))
		for _, id := range stale {
			byPaper[id] = &bm25.Paper{ID: id}
		}
		if err := addPassages(byPaper, rows); err != nil {
			return err
		}
		l.index.ReplacePapers(paperList(byPaper))
	}
	for id, xid := range l.seen {
		if xid < horizon {
			delete(l.seen, id)
		}
	}
	for _, c := range changes {
		l.seen[c.PaperID] = c.XID
	}
	l.horizon = horizon
	return nil
}

// load reads every passage into the index, a thousand at a time, so that no
// more than those are held parsed besides the index.
func (l *lexicon) load(ctx context.Context) error {
	// A load that failed halfway left papers in the index: start afresh.
	l.index = bm25.New()
	batch := map[uuid.UUID]*bm25.Paper{}
	rows := 0
	horizon, err := l.store.AllPassageTerms(ctx, func(p papers.PassageTerms) error {
		if err := addPassages(batch, []papers.PassageTerms{p}); err != nil {
			return err
		}
		if rows++; rows%1000 == 0 {
			l.index.AppendPapers(paperList(batch))
			clear(batch)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("retrieve: lexical index: %w", err)
	}
	l.index.AppendPapers(paperList(batch))
	l.horizon, l.loaded = horizon, true
	l.ready.Store(true)
	return nil
}

// addPassages parses rows' vectors into their papers in byPaper, adding a paper
// when missing.
func addPassages(byPaper map[uuid.UUID]*bm25.Paper, rows []papers.PassageTerms) error {
	for _, r := range rows {
		terms, length, err := bm25.ParseTSVector(r.Vector)
		if err != nil {
			return fmt.Errorf("retrieve: lexical index: passage %s: %w", r.ID, err)
		}
		p := byPaper[r.PaperID]
		if p == nil {
			p = &bm25.Paper{ID: r.PaperID}
			byPaper[r.PaperID] = p
		}
		p.Public = r.Public
		p.Passages = append(p.Passages, bm25.Passage{ID: r.ID, PaperID: r.PaperID, ChunkIndex: r.ChunkIndex,
			Terms: terms, Length: length})
	}
	return nil
}

func paperList(byPaper map[uuid.UUID]*bm25.Paper) []bm25.Paper {
	out := make([]bm25.Paper, 0, len(byPaper))
	for _, p := range byPaper {
		out = append(out, *p)
	}
	return out
}

// errUnsupported says the index cannot evaluate a query; Lexical ranks it.
var errUnsupported = errors.New("retrieve: query not supported by the lexical index")

// search ranks, by BM25 over the index, the n passages best matching q among the
// papers userID may see, restricted to paperIDs when given, with each passage's
// paper, section and pages read from PostgreSQL under the visibility predicate.
// Once the index has caught up, it tells note who may see what (sight).
func (l *lexicon) search(ctx context.Context, userID uuid.UUID, q string, paperIDs []uuid.UUID, n int, note *sightNote) ([]Passage, error) {
	began := time.Now()
	since, err := l.since(ctx, began)
	if err != nil {
		return nil, err
	}
	in, err := l.store.SearchInputs(ctx, userID, q, since)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	if err := l.applyRead(ctx, in.Changes, in.Horizon, began); err != nil {
		return nil, err
	}
	note.set(&sight{index: l.index, private: setOf(in.PrivateVisible)})
	query, err := bm25.ParseQuery(in.TSQuery)
	if errors.Is(err, bm25.ErrUnsupported) {
		return nil, errUnsupported
	}
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	if query.Empty() {
		return nil, nil
	}
	params := bm25.SearchParams{Limit: n, Private: in.PrivateVisible}
	if len(paperIDs) > 0 {
		params.Only = setOf(paperIDs)
	}
	params.Candidate = func(ids []uuid.UUID) (map[uuid.UUID]bool, error) {
		return l.store.MatchingPassages(ctx, q, ids)
	}
	hits, err := l.index.Search(query, params)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	// The index kept only passages userID may see (the public papers and
	// in.PrivateVisible); Search and SearchQuestion read the details of those they
	// return, checking again who may see them.
	out := make([]Passage, len(hits))
	for i, h := range hits {
		out[i] = Passage{ChunkID: h.ID, PaperID: h.PaperID, Score: h.Score}
	}
	return out, nil
}

func setOf(ids []uuid.UUID) map[uuid.UUID]bool {
	s := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// sight says which papers one caller may see, as of a search: the lexical index,
// caught up for the search, knows which papers everyone may see, and the search's
// inputs name the caller's private ones (visiblePredicate, in two parts). The
// vector ranking keeps its hits by it instead of asking PostgreSQL about every
// paper of its 100 hits (0.8 ms of PostgreSQL a search under load); a paper the
// index holds no passage of is still asked. The passages a search returns are
// read again under the visibility predicate whatever the sight said.
type sight struct {
	index   *bm25.Index
	private map[uuid.UUID]bool
}

// sightNote hands a search's sight from its lexical ranking to its vector ranking,
// which runs at the same time; nil when the index gave none (it was loading, or
// the ranking was made in PostgreSQL).
type sightNote struct {
	once sync.Once
	done chan struct{}
	s    *sight
}

func newSightNote() *sightNote { return &sightNote{done: make(chan struct{})} }

// set gives the sight; only the first call counts. A nil note takes nothing.
func (n *sightNote) set(s *sight) {
	if n == nil {
		return
	}
	n.once.Do(func() {
		n.s = s
		close(n.done)
	})
}

// wait returns the sight once given (nil for none, or for a nil note).
func (n *sightNote) wait(ctx context.Context) (*sight, error) {
	if n == nil {
		return nil, nil
	}
	select {
	case <-n.done:
		return n.s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
