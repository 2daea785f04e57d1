package retrieve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/lectern-research/lectern/host/internal/bm25"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// rrfK is reciprocal rank fusion's constant: a passage's fused score is the sum of
// 1/(rrfK + rank) over the rankings it appears in (Cormack et al., 2009).
const rrfK = 60

// Retriever answers passage searches. Without an embedder or a vector store it
// ranks by words alone.
type Retriever struct {
	pool     *pgxpool.Pool
	embedder embedding.Embedder
	vectors  vectorstore.Store
	lex      *lexicon
	// capped ranks words in PostgreSQL (Lexical) instead of the index; the
	// benchmark compares the two.
	capped bool
}

// New returns a Retriever; embedder and vectors may be nil. Its lexical index is
// loaded on the first search (or by Warm).
func New(pool *pgxpool.Pool, embedder embedding.Embedder, vectors vectorstore.Store) *Retriever {
	return &Retriever{pool: pool, embedder: embedder, vectors: vectors, lex: newLexicon(papers.New(pool))}
}

// Warm loads the lexical index now rather than on the first search.
func (r *Retriever) Warm(ctx context.Context) error {
	return r.lex.catchUp(ctx, time.Now())
}

// lexical is the lexical ranking: every passage matching q ranked by BM25 in the
// index, or, for a query the index cannot evaluate (a prefix, more than
// bm25.MaxTerms words) or while the index is still loading, Lexical's capped
// ranking in PostgreSQL.
// The index's sight, when it gives one, goes to note.
func (r *Retriever) lexical(ctx context.Context, userID uuid.UUID, q string, paperIDs []uuid.UUID, n int, note *sightNote) ([]Passage, error) {
	defer note.set(nil) // none was given
	if !r.capped {
		out, err := r.lex.search(ctx, userID, q, paperIDs, n, note)
		if !errors.Is(err, errUnsupported) && !errors.Is(err, errNotReady) {
			return out, err
		}
	}
	return Lexical(ctx, r.pool, userID, q, paperIDs, n)
}

// Search returns the limit passages best matching q among papers userID may see,
// restricted to paperIDs when given, each with its snippet and highlights. Each
// ranking contributes its top candidates(limit) by id and score only; where each
// passage is and its snippet are read last, in one query, for the passages
// returned (a headline reads the whole passage, and building one for every
// candidate cost most of a search; reading the details of every candidate cost
// two queries over 250 passages to show 20).
func (r *Retriever) Search(ctx context.Context, userID uuid.UUID, q string, paperIDs []uuid.UUID, limit int) ([]Passage, error) {
	ranked, err := r.search(ctx, userID, q, q, q, paperIDs, limit)
	if err != nil || len(ranked) == 0 {
		return ranked, err
	}
	heads, err := papers.New(r.pool).Headlines(ctx, userID, q, chunkIDs(ranked))
	if err != nil {
		return nil, fmt.Errorf("retrieve: snippets: %w", err)
	}
	out := ranked[:0]
	for _, p := range ranked {
		h, ok := heads[p.ChunkID]
		if !ok {
			continue // its paper was hidden between ranking and now
		}
		p.PaperID, p.Title, p.Section, p.PageStart, p.PageEnd = h.PaperID, h.Title, h.Section, h.PageStart, h.PageEnd
		p.Snippet, p.Highlights = h.Snippet, h.Highlights
		if p.Highlights == nil {
			p.Highlights = [][2]int{}
		}
		out = append(out, p)
	}
	return out, nil
}

// SearchQuestion is Search for a question in plain words: its lexical ranking
// matches passages holding any of the question's words (a search query's
// matches must hold all of them), and the vector ranking reads the question as
// it is. The passages come back in full (Authors, Text, CharStart, PageStarts),
// read again only from papers userID may see, so a question's answer needs no
// other read.
func (r *Retriever) SearchQuestion(ctx context.Context, userID uuid.UUID, question string, paperIDs []uuid.UUID, limit int) ([]Passage, error) {
	ranked, err := r.search(ctx, userID, AnyWords(question), question, "", paperIDs, limit)
	if err != nil || len(ranked) == 0 {
		return ranked, err
	}
	full, err := papers.New(r.pool).VisiblePassageTexts(ctx, userID, chunkIDs(ranked))
	if err != nil {
		return nil, fmt.Errorf("retrieve: passages: %w", err)
	}
	byID := make(map[uuid.UUID]papers.Passage, len(full))
	for _, p := range full {
		byID[p.ChunkID] = p
	}
	out := make([]Passage, 0, len(ranked))
	for _, p := range ranked {
		f, ok := byID[p.ChunkID]
		if !ok {
			continue
		}
		p.PaperID, p.Title, p.Section, p.PageStart, p.PageEnd = f.PaperID, f.Title, f.Section, f.PageStart, f.PageEnd
		p.Authors, p.Text, p.CharStart, p.PageStarts = f.Authors, f.Text, f.CharStart, f.PageStarts
		out = append(out, p)
	}
	return out, nil
}

// AnyWords turns text into a web-search query that matches any of its words.
func AnyWords(text string) string {
	words := strings.FieldsFunc(text, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	kept := words[:0]
	for _, w := range words {
		if lw := strings.ToLower(w); lw != "or" && lw != "and" && lw != "not" {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, " or ")
}

// search fuses the lexical ranking of q, a web-search query, with the vector
// ranking of vq, which keeps only passages that the negations of exclude (a
// web-search query; "" for a question, whose dashes are words) do not rule out.
func (r *Retriever) search(ctx context.Context, userID uuid.UUID, q, vq, exclude string, paperIDs []uuid.UUID, limit int) ([]Passage, error) {
	n := candidates(limit)
	if r.embedder == nil || r.vectors == nil {
		lexical, err := r.lexical(ctx, userID, q, paperIDs, n, nil)
		if err != nil {
			return nil, err
		}
		return lexical[:min(limit, len(lexical))], nil
	}
	// The two rankings share only the lexical index's sight until fusion: read
	// them at once.
	var lexical, similar []Passage
	note := newSightNote()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		lexical, err = r.lexical(gctx, userID, q, paperIDs, n, note)
		return err
	})
	g.Go(func() error {
		var err error
		similar, err = r.similar(gctx, userID, vq, exclude, paperIDs, n, note)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return fuse(limit, lexical, similar), nil
}

// similar is the vector ranking: the n passages nearest q that userID may see and
// that the negations of exclude, a web-search query, do not rule out. Who may see
// what is read from note's sight when the lexical ranking gives one.
func (r *Retriever) similar(ctx context.Context, userID uuid.UUID, q, exclude string, paperIDs []uuid.UUID, n int, note *sightNote) ([]Passage, error) {
	emb, err := r.embedder.Embed(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("retrieve: embed the question: %w", err)
	}
	ruledOut, err := r.ruledOut(ctx, exclude)
	if err != nil {
		return nil, err
	}
	// The vector store knows nothing of ownership: keep what the caller may see.
	// Others' private papers often hold a few of the nearest places (in the HTTP
	// benchmark, the uploads of one user held some of the first n in 4 searches of
	// 5 for the other users, and the second request was half of a search's cost),
	// so the first request asks for 2n, and the rare search still short asks for
	// 8n. Each hit asked for is read again exactly, so asking for 8n every time
	// would cost every search four times the reads. The question is compared with
	// the passages of the model that embedded it.
	var out []Passage
	for _, k := range []int{2 * n, 8 * n} {
		hits, err := r.vectors.Search(ctx, emb.Model, emb.Vectors[0], k, vectorstore.Filter{PaperIDs: paperIDs})
		if err != nil {
			return nil, fmt.Errorf("retrieve: %w", err)
		}
		seen, err := note.wait(ctx)
		if err != nil {
			return nil, err
		}
		if out, err = r.visible(ctx, userID, hits, seen); err != nil {
			return nil, err
		}
		if ruledOut != "" {
			if out, err = r.without(ctx, ruledOut, out); err != nil {
				return nil, err
			}
		}
		full := len(out) >= n
		out = out[:min(n, len(out))]
		if full || len(hits) < k {
			return out, nil
		}
	}
	return out, nil
}

// ruledOut returns what the negations of exclude, a web-search query, rule out,
// as tsquery text (bm25.Query.Excluded); "" when it negates nothing. On
// "heart failure -rehabilitation" the vector ranking found passages about
// rehabilitation, which the lexical ranking had rightly left out.
func (r *Retriever) ruledOut(ctx context.Context, exclude string) (string, error) {
	// PostgreSQL reads a negation only from a dash: a query without one has none.
	if !strings.Contains(exclude, "-") {
		return "", nil
	}
	tsq, err := papers.New(r.pool).TSQuery(ctx, exclude)
	if err != nil {
		return "", fmt.Errorf("retrieve: %w", err)
	}
	q, err := bm25.ParseQuery(tsq)
	if errors.Is(err, bm25.ErrUnsupported) {
		return "", nil // more words than the parser takes: the vector ranking stays as it is
	}
	if err != nil {
		return "", fmt.Errorf("retrieve: %w", err)
	}
	return q.Excluded(), nil
}

// without returns the passages, in order, that tsquery does not match.
func (r *Retriever) without(ctx context.Context, tsquery string, ps []Passage) ([]Passage, error) {
	if len(ps) == 0 {
		return ps, nil
	}
	matched, err := papers.New(r.pool).PassagesMatchingTSQuery(ctx, tsquery, chunkIDs(ps))
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	out := ps[:0]
	for _, p := range ps {
		if !matched[p.ChunkID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// candidates is how deep each ranking is read before fusion.
func candidates(limit int) int { return max(2*limit, 50) }

// visible returns, in the hits' order, the hits whose paper userID may see, by id
// and paper only (Search and SearchQuestion read the details of the passages they
// return). The papers s knows are judged by it (s may be nil); the others are
// asked of PostgreSQL.
func (r *Retriever) visible(ctx context.Context, userID uuid.UUID, hits []vectorstore.Hit, s *sight) ([]Passage, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	seen := make(map[uuid.UUID]bool, len(hits))
	paperIDs := make([]uuid.UUID, 0, len(hits))
	for _, h := range hits {
		if !seen[h.PaperID] {
			seen[h.PaperID] = true
			paperIDs = append(paperIDs, h.PaperID)
		}
	}
	may := make(map[uuid.UUID]bool, len(paperIDs))
	ask := paperIDs
	if s != nil {
		public := s.index.Public(paperIDs)
		ask = nil
		for _, id := range paperIDs {
			everyone, known := public[id]
			switch {
			case !known:
				ask = append(ask, id)
			case everyone || s.private[id]:
				may[id] = true
			}
		}
	}
	if len(ask) > 0 {
		ok, err := papers.New(r.pool).VisibleIDs(ctx, userID, ask)
		if err != nil {
			return nil, fmt.Errorf("retrieve: vector hits: %w", err)
		}
		for _, id := range ok {
			may[id] = true
		}
	}
	out := make([]Passage, 0, len(hits))
	for _, h := range hits {
		if may[h.PaperID] {
			out = append(out, Passage{ChunkID: h.ChunkID, PaperID: h.PaperID, Score: float64(h.Score)})
		}
	}
	return out, nil
}

// fuse merges rankings by reciprocal rank fusion; ties keep the earlier ranking's
// order. A passage found by both keeps the first ranking's details.
func fuse(limit int, rankings ...[]Passage) []Passage {
	score := map[uuid.UUID]float64{}
	first := map[uuid.UUID]int{}
	var all []Passage
	for _, ranking := range rankings {
		for rank, p := range ranking {
			if _, seen := score[p.ChunkID]; !seen {
				first[p.ChunkID] = len(all)
				all = append(all, p)
			}
			score[p.ChunkID] += 1 / float64(rrfK+rank+1)
		}
	}
	for i := range all {
		all[i].Score = score[all[i].ChunkID]
	}
	slices.SortStableFunc(all, func(a, b Passage) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return first[a.ChunkID] - first[b.ChunkID]
	})
	if all == nil {
		return []Passage{}
	}
	return all[:min(limit, len(all))]
}

// chunkIDs are the passages' ids, in order.
func chunkIDs(ps []Passage) []uuid.UUID {
	ids := make([]uuid.UUID, len(ps))
	for i, p := range ps {
		ids[i] = p.ChunkID
	}
	return ids
}
