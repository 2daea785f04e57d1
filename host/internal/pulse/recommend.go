package pulse

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/pulse/score"
)

const (
	// recommendWindow is how far back the recommender looks for papers.
	recommendWindow = 30 * 24 * time.Hour
	// recommendPool bounds the papers it scores.
	recommendPool = 500
)

// Recommend returns up to limit papers of the shared corpus, discovered in the
// last 30 days, most like the user's library (and the papers they rated up) and
// never excluded (the canonical exclusion, and nothing already in the library).
// It asks no model: it ranks by similarity to what the user reads (the embedding
// signal) and recency. A user with neither a library nor a thumbs-up gets none.
func (g *Generator) Recommend(ctx context.Context, userID uuid.UUID, limit int) ([]Card, error) {
	now := g.now()
	library, err := g.Papers.LibraryProfile(ctx, userID, profileSize)
	if err != nil {
		return nil, err
	}
	feedback, err := g.Papers.FeedbackOf(ctx, userID, feedbackSize)
	if err != nil {
		return nil, err
	}
	if up, _, _ := thumbs(feedback, library); len(library) == 0 && len(up) == 0 {
		return []Card{}, nil
	}
	ids, err := g.Papers.RecentlyDiscovered(ctx, now.Add(-recommendWindow), recommendPool)
	if err != nil {
		return nil, err
	}
	cands, err := g.Papers.Suggestable(ctx, userID, ids)
	if err != nil || len(cands) == 0 {
		return []Card{}, err
	}
	set, err := g.Store.Settings(ctx, userID)
	if err != nil {
		return nil, err
	}
	prof, err := g.profile(ctx, userID, now, library, feedback, nil)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Title + "\n" + c.Abstract
	}
	vecs, err := g.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	w := score.Weights{score.Embedding: 1, score.Recency: 0.2}
	cards := make([]Card, len(cands))
	for i, c := range cands {
		sig := map[string]float64{
			score.Embedding: score.EmbeddingSignal(vecs[i], prof.Library, prof.Negative, set.Lambda),
			score.Recency:   score.RecencySignal(c.Published, now),
		}
		cards[i] = Card{PaperID: c.ID, Score: score.Final(w, sig), Signals: sig,
			Why: score.Why(w, sig, score.Facts{Published: c.Published}, now)}
	}
	slices.SortStableFunc(cards, func(a, b Card) int { return cmp.Compare(b.Score, a.Score) })
	cards = cards[:min(limit, len(cards))]
	for i := range cards {
		cards[i].Rank = i + 1
	}
	return cards, nil
}
