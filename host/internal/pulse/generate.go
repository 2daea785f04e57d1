package pulse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse/arxivcal"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

// Judgement is the relevance role's view of one candidate: relevance and novelty
// from 1 to 10, and a sentence.
type Judgement struct {
	Relevance, Novelty int
	Reason             string
}

// Judge asks the relevance role how a paper fits the user's interests.
type Judge func(ctx context.Context, interests, title, abstract string) (Judgement, error)

// Embed embeds texts, one vector per text.
type Embed func(ctx context.Context, texts []string) ([][]float32, error)

// Discover runs one discovery search for the user (search.Service.Search with
// Params.Instance set).
type Discover func(ctx context.Context, userID uuid.UUID, p search.Params) (search.Response, error)

// Generator makes decks.
type Generator struct {
	Store    *Store
	Papers   *papers.Store
	Discover Discover
	Embed    Embed
	// Judge may be nil: the deck is then scored without the relevance role.
	Judge Judge
	// Key resolves the classifier's signing key when it is needed.
	Key    func() ([]byte, error)
	Logger *slog.Logger
	Now    func() time.Time

	// Stage2TopK is how many stage-1 survivors are judged (default 40).
	Stage2TopK int
	// JudgeTimeout bounds one judgement (default 120 s), JudgeCap all of them
	// (default 900 s).
	JudgeTimeout, JudgeCap time.Duration
}

const (
	profileSize    = 200
	feedbackSize   = 1000
	perQuery       = 50
	maxAuthorQuery = 10
	// maxStarredQuery bounds the starred papers whose citing papers are asked for.
	maxStarredQuery = 5
	judgeConcurrent = 4
)

// Run makes and stores the user's deck of date (their local calendar day,
// YYYY-MM-DD) and returns it.
func (g *Generator) Run(ctx context.Context, userID uuid.UUID, date string) (Deck, error) {
	now := g.now()
	start := time.Now()
	runID, err := g.Store.StartRun(ctx, userID)
	if err != nil {
		return Deck{}, err
	}
	deck, stats, err := g.make(ctx, userID, now)
	status := "ok"
	switch {
	case err != nil:
		status = "failed"
	case stats.DegradedReason != "":
		status = "degraded"
	}
	detail := map[string]any{"sources": stats.Sources}
	if err != nil {
		detail["error"] = err.Error()
	}
	if ferr := g.Store.FinishRun(context.WithoutCancel(ctx), userID, runID, status, stats.CandidateCount, time.Since(start), detail); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return Deck{}, err
	}
	stats.DurationS = time.Since(start).Seconds()
	stats.CardCount = len(deck)
	if _, err := g.Store.SaveDeck(ctx, userID, date, deck, stats); err != nil {
		return Deck{}, err
	}
	return g.Store.Today(ctx, userID, date)
}

func (g *Generator) make(ctx context.Context, userID uuid.UUID, now time.Time) ([]Card, Stats, error) {
	stats := Stats{SourceCounts: map[string]int{}, Sources: map[string]SourceStatus{}}
	set, err := g.Store.Settings(ctx, userID)
	if err != nil {
		return nil, stats, err
	}
	topics, err := g.Store.Topics(ctx, userID)
	if err != nil {
		return nil, stats, err
	}
	topics = slices.DeleteFunc(topics, func(t Topic) bool { return !t.Enabled })
	authors, err := g.Store.Authors(ctx, userID)
	if err != nil {
		return nil, stats, err
	}
	library, err := g.Papers.LibraryProfile(ctx, userID, profileSize)
	if err != nil {
		return nil, stats, err
	}
	feedback, err := g.Papers.FeedbackOf(ctx, userID, feedbackSize)
	if err != nil {
		return nil, stats, err
	}

	// Discovery.
	ids := g.discover(ctx, userID, now, set, topics, authors, library, &stats)
	cands, err := g.Papers.Suggestable(ctx, userID, ids)
	if err != nil {
		return nil, stats, err
	}
	stats.CandidateCount = len(cands)
	if len(cands) == 0 {
		// Only an arXiv that answered, with nothing, is the calendar's doing.
		if st, asked := stats.Sources["arxiv"]; asked && st.Status == "ok" {
			stats.Quiet = arxivcal.Quiet(now.Add(-24*time.Hour), now)
		}
		return []Card{}, stats, nil
	}

	// Stage 1: what the user reads.
	profile, err := g.profile(ctx, userID, now, library, feedback, topics)
	if err != nil {
		return nil, stats, err
	}
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.Title + "\n" + c.Abstract
	}
	vecs, err := g.Embed(ctx, texts)
	if err != nil {
		return nil, stats, fmt.Errorf("pulse: embed the candidates: %w", err)
	}
	tracked := trackedAuthors(authors)
	pending := make([]Candidate, len(cands))
	for i, c := range cands {
		pending[i] = Candidate{ID: c.ID, Title: c.Title, Abstract: c.Abstract, Vec: vecs[i], Published: c.Published}
		for _, a := range c.Authors {
			pending[i].Authors = append(pending[i].Authors, score.Author{Name: a.Name})
		}
	}
	scored := profile.Stage1(pending, RankOpts{Tracked: tracked, Lambda: set.Lambda, TopK: cmp.Or(g.Stage2TopK, 40), Now: now})
	stats.Stage1Survivors = len(scored)

	// Stage 2: the relevance role.
	g.Stage2(ctx, Interests(topics, library), scored, &stats)

	// The classifier, the weights, the deck.
	model := g.classifier(ctx, userID, &stats)
	cards := Cut(scored, score.Effective(set.Weights, set.ClassifierOptIn), model, set.DeckSize, now)
	return cards, stats, nil
}

// discover asks the sources for recent papers on each topic and by each followed
// author, and returns the ids of what they found, each once. A source's trouble
// is recorded in stats and never fails the run.
func (g *Generator) discover(ctx context.Context, userID uuid.UUID, now time.Time, set Settings, topics []Topic,
	authors []Author, library []papers.ProfilePaper, stats *Stats) []uuid.UUID {
	from := now.AddDate(0, 0, -set.LookbackDays)
	since := paper.Date{Year: from.Year(), Month: int(from.Month()), Day: from.Day(), Precision: paper.PrecisionDay}
	var queries []search.Params
	for _, t := range topics {
		queries = append(queries, search.Params{Query: t.Query, Limit: perQuery, Sort: source.SortNewest, Instance: true,
			Filters: source.Filters{From: since, Categories: t.Categories}})
	}
	for i, a := range authors {
		if i == maxAuthorQuery {
			break
		}
		queries = append(queries, search.Params{Query: a.Name, Limit: perQuery, Sort: source.SortNewest, Instance: true,
			Filters: source.Filters{From: since, Authors: []string{a.Name}}})
	}
	if len(queries) == 0 && len(library) > 0 {
		// No topic yet: the titles of the newest library papers stand in.
		for _, p := range library[:min(3, len(library))] {
			queries = append(queries, search.Params{Query: p.Title, Limit: perQuery, Sort: source.SortNewest, Instance: true,
				Filters: source.Filters{From: since}})
		}
	}
	// The papers citing the user's starred papers, from the sources that know
	// the citation graph. (Papers a starred paper cites are older than any
	// lookback, so they are not asked for.)
	starred, err := g.Papers.StarredIDs(ctx, userID, maxStarredQuery)
	if err != nil {
		g.log().WarnContext(ctx, "pulse: read the starred papers", "user", userID, "error", err)
	}
	graph := len(queries)
	for _, s := range starred {
		queries = append(queries, search.Params{CitingIDs: &s, Limit: perQuery, Instance: true})
	}
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for qi, q := range queries {
		resp, err := g.Discover(ctx, userID, q)
		if err != nil && !errors.Is(err, search.ErrNoSources) {
			g.log().WarnContext(ctx, "pulse: a discovery search failed", "user", userID, "error", err)
			stats.Sources["search"] = SourceStatus{Status: "error", Message: "A discovery search failed; the deck uses what the others found."}
		}
		for _, r := range resp.Sources {
			st := SourceStatus{Status: "ok"}
			switch r.Status {
			case search.StatusUnsupported:
				continue
			case search.StatusOK:
			case search.StatusLimited:
				st = SourceStatus{Status: "rate_limit", Message: "The source asked Lectern to slow down; it is asked again later."}
			case search.StatusBackoff:
				st = SourceStatus{Status: "error", Message: "Skipped after repeated failures; Lectern tries again later."}
			default:
				st = SourceStatus{Status: "error", Message: sourceFailed}
			}
			if prev, ok := stats.Sources[r.Name]; !ok || prev.Status == "ok" {
				stats.Sources[r.Name] = st
			}
			stats.SourceCounts[r.Name] += r.Results
		}
		for _, r := range resp.Results {
			if qi >= graph && (r.PublicationDate == nil || r.PublicationDate.Before(from)) {
				continue // a citing paper older than the lookback
			}
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
	}
	noneAnswered(stats)
	return ids
}

// noneAnswered rewords the sources' troubles when not one of them answered:
// there are no others for the deck to use.
func noneAnswered(stats *Stats) {
	for _, st := range stats.Sources {
		if st.Status == "ok" {
			return
		}
	}
	for name, st := range stats.Sources {
		if st.Message == sourceFailed {
			st.Message = "The source could not be reached or failed; no other source answered either."
			stats.Sources[name] = st
		}
	}
}

// sourceFailed is what a failing source's status says while others answer.
const sourceFailed = "The source could not be reached or failed; the deck uses the others."

// trackedAuthors are the followed authors as the author signal compares them.
func trackedAuthors(authors []Author) []score.Author {
	out := make([]score.Author, len(authors))
	for i, a := range authors {
		out[i] = score.Author{Name: a.Name, S2ID: a.S2ID}
	}
	return out
}

// thumbs splits the user's feedback (newest first) into the papers they rated up
// and those they rated down, by their newest thumb on each, with when they gave
// it. A paper already in the library counts there, not again as a thumbs-up.
func thumbs(feedback []papers.Feedback, library []papers.ProfilePaper) (up, down []uuid.UUID, at map[uuid.UUID]time.Time) {
	inLibrary := make(map[uuid.UUID]bool, len(library))
	for _, p := range library {
		inLibrary[p.ID] = true
	}
	at = map[uuid.UUID]time.Time{}
	for _, f := range feedback {
		if _, seen := at[f.PaperID]; seen {
			continue
		}
		at[f.PaperID] = f.At
		switch {
		case !f.Positive:
			down = append(down, f.PaperID)
		case !inLibrary[f.PaperID]:
			up = append(up, f.PaperID)
		}
	}
	return up, down, at
}

// profile embeds what the user reads. The positive centroid is their library,
// each paper faded by how long ago it was added, and the papers they rated up,
// faded by how long ago they rated them; the negative centroid is the papers
// they rated down the same way. So a new user's first ratings (the cold start)
// count exactly as later ones do.
func (g *Generator) profile(ctx context.Context, userID uuid.UUID, now time.Time, library []papers.ProfilePaper,
	feedback []papers.Feedback, topics []Topic) (*Profile, error) {
	up, down, at := thumbs(feedback, library)
	rated, err := g.Papers.ProfileOf(ctx, userID, append(slices.Clone(up), down...))
	if err != nil {
		return nil, err
	}
	isDown := make(map[uuid.UUID]bool, len(down))
	for _, id := range down {
		isDown[id] = true
	}
	var liked, disliked []papers.ProfilePaper
	for _, p := range rated {
		if isDown[p.ID] {
			disliked = append(disliked, p)
		} else {
			liked = append(liked, p)
		}
	}
	var texts []string
	var posAt, negAt []time.Time
	for _, p := range library {
		texts = append(texts, p.Title+"\n"+p.Abstract)
		posAt = append(posAt, p.At)
	}
	for _, p := range liked {
		texts = append(texts, p.Title+"\n"+p.Abstract)
		posAt = append(posAt, at[p.ID])
	}
	for _, p := range disliked {
		texts = append(texts, p.Title+"\n"+p.Abstract)
		negAt = append(negAt, at[p.ID])
	}
	for _, t := range topics {
		texts = append(texts, t.Name+"\n"+t.Query)
	}
	if len(texts) == 0 {
		return &Profile{}, nil
	}
	vecs, err := g.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("pulse: embed the profile: %w", err)
	}
	pos := make([]Dated, len(posAt))
	for i, t := range posAt {
		pos[i] = Dated{Vec: vecs[i], At: t}
	}
	neg := make([]Dated, len(negAt))
	for i, t := range negAt {
		neg[i] = Dated{Vec: vecs[len(pos)+i], At: t}
	}
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	return NewProfile(now, pos, neg, vecs[len(pos)+len(neg):], names), nil
}

// Interests is what the relevance role is told the user cares about: their
// topics and the titles of their ten newest library papers.
func Interests(topics []Topic, library []papers.ProfilePaper) string {
	var b strings.Builder
	for _, t := range topics {
		fmt.Fprintf(&b, "%s: %s\n", t.Name, t.Query)
	}
	for _, p := range library[:min(10, len(library))] {
		fmt.Fprintf(&b, "%s\n", p.Title)
	}
	return strings.TrimSpace(b.String())
}

// Stage2 asks the relevance role about each candidate, four at a time, each
// call bounded and all of them capped; what could not be judged keeps its
// stage-1 signals and the deck says it is degraded. With no Judge it does
// nothing. It needs only the Generator's Judge and limits, no store.
func (g *Generator) Stage2(ctx context.Context, interests string, cands []*Scored, stats *Stats) {
	if g.Judge == nil || interests == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(g.JudgeCap, 900*time.Second))
	defer cancel()
	var mu sync.Mutex
	failed := 0
	sem := make(chan struct{}, judgeConcurrent)
	var wg sync.WaitGroup
	for _, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				mu.Lock()
				failed++
				mu.Unlock()
				return
			}
			defer func() { <-sem }()
			cctx, ccancel := context.WithTimeout(ctx, cmp.Or(g.JudgeTimeout, 120*time.Second))
			j, err := g.Judge(cctx, interests, c.Title, c.Abstract)
			ccancel()
			mu.Lock()
			defer mu.Unlock()
			stats.LLMCalls++
			if err != nil {
				failed++
				return
			}
			stats.Stage2Scored++
			c.Signals[score.LLMRelevance] = float64(min(max(j.Relevance, 1), 10)) / 10
			c.Signals[score.LLMNovelty] = float64(min(max(j.Novelty, 1), 10)) / 10
			c.Reason = j.Reason
		}()
	}
	wg.Wait()
	if failed > 0 {
		stats.DegradedReason = fmt.Sprintf("The relevance model could not judge %d of %d papers in time; they are ranked by similarity, topics, recency and authors alone.",
			failed, len(cands))
	}
}

// classifier loads and verifies the user's classifier; nil when there is none or
// it does not verify, which stats say in words.
func (g *Generator) classifier(ctx context.Context, userID uuid.UUID, stats *Stats) *classifier.Model {
	stored, err := g.Store.ActiveModel(ctx, userID)
	if errors.Is(err, ErrNotFound) {
		stats.Classifier.Degradation = "No classifier yet: it trains once you have rated at least 30 papers up and down."
		return nil
	}
	if err != nil {
		g.log().ErrorContext(ctx, "pulse: read the classifier", "user", userID, "error", err)
		stats.Classifier.Degradation = "The classifier could not be read; the deck is scored without it."
		return nil
	}
	stats.Classifier.SampleCount = stored.SampleCount
	key, err := g.Key()
	if err != nil {
		g.log().ErrorContext(ctx, "pulse: no key to verify the classifier", "error", err)
		stats.Classifier.Degradation = "The classifier cannot be verified: no signing key is configured (SERVICE_MODEL_HMAC_KEY). The deck is scored without it."
		return nil
	}
	m, err := classifier.Open(stored.Blob, stored.Tag, userID, key)
	if err != nil {
		g.log().WarnContext(ctx, "pulse: the stored classifier did not verify", "user", userID, "error", err)
		stats.Classifier.Degradation = "The stored classifier did not match its signature, so it was not loaded; the deck is scored without it until the next training replaces it."
		return nil
	}
	stats.Classifier.Available = true
	return m
}

func (g *Generator) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Generator) log() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}
