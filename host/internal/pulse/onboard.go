package pulse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
)

// The cold start (issue 19 item 3): a new user names topics and authors, then
// rates a first batch of papers from the shared corpus up or down. Their ratings
// are the thumbs Pulse's deck ratings are (recommendation_feedback, source
// pulse_thumbs), so the embedding signal's centroids use them from the first
// night; and each rated paper is kept as a card of the user's cold-start deck with
// the signals it had when it was rated, so the classifier trains on it as on any
// deck card.

const (
	// OnboardingTarget is how many ratings the cold start asks for.
	OnboardingTarget = 8
	// onboardingBatch is how many candidates are offered at once.
	onboardingBatch = 10
	// maxInterests bounds the topics and authors the candidates are drawn for.
	maxInterests = 20
	// onboardingDeckDate dates the deck that holds the cold start's cards: one per
	// user, outside every window the deck's readers look in (today, the 7-day
	// fallback, the 30 days a deck paper may be rated in).
	onboardingDeckDate = "1970-01-01"
	// onboardingLookbackDays is how far back a cold-start discovery looks: further
	// than a night's, to find enough to rate.
	onboardingLookbackDays = 30
	// discoveryCap bounds a discovery run asked for while the user waits.
	discoveryCap = 45 * time.Second
)

// Ratings of a cold-start candidate.
const (
	RatingUp   = "up"
	RatingDown = "down"
	// RatingSkip passes a paper by: it is not offered again and gets no thumb.
	RatingSkip = "skip"
)

// ErrNothingToFollow means the user follows no topic and no author, so there is
// nothing to discover papers for.
var ErrNothingToFollow = errors.New("pulse: the user follows no topic and no author")

// Onboarding is a user's cold-start state: what they follow, how far they got in
// rating the first batch, and what to rate next.
type Onboarding struct {
	// LibraryEmpty is true while the user's library holds no paper: the cold
	// start is offered to them.
	LibraryEmpty bool `json:"library_empty"`
	TopicCount   int  `json:"topic_count"`
	AuthorCount  int  `json:"author_count"`
	// Rated counts the cold-start papers the user rated up or down.
	Rated int `json:"rated"`
	Up    int `json:"up"`
	Down  int `json:"down"`
	// Target is how many ratings the cold start asks for (8).
	Target int `json:"target"`
	// Complete is true once Rated reaches Target.
	Complete bool `json:"complete"`
	// HasDeck is true once a deck was made for the user (a night's run, or
	// Generate): the cold start has done its work.
	HasDeck bool `json:"has_deck"`
	// Candidates are up to 10 papers to rate, newest first for each interest,
	// the interests taken in turn.
	Candidates []OnboardingCandidate `json:"candidates"`
	// CorpusShort is true when the corpus holds too few papers on what the user
	// follows to reach the target: a discovery run can fetch more.
	CorpusShort bool `json:"corpus_short"`
	// Message says, when there is something to say, what the state means and
	// what to do.
	Message string `json:"message,omitempty"`
}

// OnboardingCandidate is a paper offered to rate, and why it was offered.
type OnboardingCandidate struct {
	Paper papers.Item `json:"paper"`
	// Matched names the interest it was drawn for, in words.
	Matched string `json:"matched"`
}

// OnboardingRating is what a cold-start rating did, and where the user stands.
type OnboardingRating struct {
	PaperID  uuid.UUID `json:"paper_id"`
	Rating   string    `json:"rating"`
	Rated    int       `json:"rated"`
	Target   int       `json:"target"`
	Complete bool      `json:"complete"`
}

// Discovery is what a cold-start discovery run fetched, and how each source did.
type Discovery struct {
	// Found counts the papers the sources returned that may be offered to the
	// user (the exclusion and their library left out).
	Found   int                     `json:"found"`
	Sources map[string]SourceStatus `json:"sources"`
	Message string                  `json:"message"`
}

// interest is a topic or author to draw candidates for.
type interest struct {
	match papers.Match
	label string
}

// following returns the user's enabled topics and their authors.
func (g *Generator) following(ctx context.Context, userID uuid.UUID) ([]Topic, []Author, error) {
	topics, err := g.Store.Topics(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	enabled := topics[:0]
	for _, t := range topics {
		if t.Enabled {
			enabled = append(enabled, t)
		}
	}
	authors, err := g.Store.Authors(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return enabled, authors, nil
}

// Onboarding returns the user's cold-start state with the next papers to rate.
func (g *Generator) Onboarding(ctx context.Context, userID uuid.UUID) (Onboarding, error) {
	topics, authors, err := g.following(ctx, userID)
	if err != nil {
		return Onboarding{}, err
	}
	library, err := g.Papers.LibraryProfile(ctx, userID, 1)
	if err != nil {
		return Onboarding{}, err
	}
	o := Onboarding{LibraryEmpty: len(library) == 0, TopicCount: len(topics), AuthorCount: len(authors),
		Target: OnboardingTarget, Candidates: []OnboardingCandidate{}}
	shown, err := g.Store.onboardingPapers(ctx, userID)
	if err != nil {
		return Onboarding{}, err
	}
	if err := g.countRatings(ctx, userID, shown, &o); err != nil {
		return Onboarding{}, err
	}
	o.Complete = o.Rated >= o.Target
	if o.HasDeck, err = g.Store.hasDeck(ctx, userID); err != nil {
		return Onboarding{}, err
	}
	if len(topics) == 0 && len(authors) == 0 {
		o.Message = "Follow a topic or an author first: the papers to rate are drawn from them."
		return o, nil
	}
	o.Candidates, err = g.candidates(ctx, userID, topics, authors, shown)
	if err != nil {
		return Onboarding{}, err
	}
	o.CorpusShort = !o.Complete && o.Rated+len(o.Candidates) < o.Target
	o.Message = onboardingMessage(o)
	return o, nil
}

func onboardingMessage(o Onboarding) string {
	switch {
	case o.Complete:
		return "You have rated enough for your first deck: it is made tonight, or now with Generate. Rating more sharpens it."
	case o.CorpusShort && len(o.Candidates) == 0:
		return "Lectern has no papers yet on what you follow. Fetch recent ones from the paper sources, or follow a broader topic."
	case o.CorpusShort:
		return fmt.Sprintf("Lectern has only %d papers on what you follow, fewer than the %d to rate. Fetch recent ones from the paper sources to rate more.",
			len(o.Candidates), o.Target-o.Rated)
	}
	return ""
}

// countRatings counts the user's thumbs on the cold-start papers shown: their
// newest thumb on each.
func (g *Generator) countRatings(ctx context.Context, userID uuid.UUID, shown []uuid.UUID, o *Onboarding) error {
	if len(shown) == 0 {
		return nil
	}
	isShown := make(map[uuid.UUID]bool, len(shown))
	for _, id := range shown {
		isShown[id] = true
	}
	feedback, err := g.Papers.FeedbackOf(ctx, userID, feedbackSize)
	if err != nil {
		return err
	}
	counted := map[uuid.UUID]bool{}
	for _, f := range feedback {
		if !isShown[f.PaperID] || counted[f.PaperID] {
			continue
		}
		counted[f.PaperID] = true
		o.Rated++
		if f.Positive {
			o.Up++
		} else {
			o.Down++
		}
	}
	return nil
}

// candidates draws up to 10 papers to rate from the shared corpus: for each topic
// and author, the newest that match and may be suggested, taken in turn so that
// every interest is represented; never one of shown.
func (g *Generator) candidates(ctx context.Context, userID uuid.UUID, topics []Topic, authors []Author, shown []uuid.UUID) ([]OnboardingCandidate, error) {
	var interests []interest
	for _, t := range topics {
		interests = append(interests, interest{papers.Match{Query: t.Query, Categories: t.Categories}, "Your topic “" + t.Name + "”"})
	}
	for _, a := range authors {
		interests = append(interests, interest{papers.Match{Author: a.Name}, "By " + a.Name + ", whom you follow"})
	}
	interests = interests[:min(len(interests), maxInterests)]
	lists := make([][]uuid.UUID, len(interests))
	for i, in := range interests {
		ids, err := g.Papers.Matching(ctx, userID, in.match, shown, onboardingBatch)
		if err != nil {
			return nil, err
		}
		lists[i] = ids
	}
	var ids []uuid.UUID
	matched := map[uuid.UUID]string{}
	for depth := 0; len(ids) < onboardingBatch; depth++ {
		more := false
		for i, list := range lists {
			if depth >= len(list) || len(ids) == onboardingBatch {
				continue
			}
			more = true
			if _, dup := matched[list[depth]]; !dup {
				matched[list[depth]] = interests[i].label
				ids = append(ids, list[depth])
			}
		}
		if !more {
			break
		}
	}
	items, err := g.Papers.GetMany(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]OnboardingCandidate, 0, len(ids))
	for _, id := range ids {
		if it, ok := items[id]; ok {
			out = append(out, OnboardingCandidate{Paper: it, Matched: matched[id]})
		}
	}
	return out, nil
}

// RateOnboarding records the user's rating of a cold-start paper: up and down
// are the thumbs a deck rating gives (recommendation_feedback, pulse_thumbs);
// skip gives none. Either way the paper becomes a card of the user's cold-start
// deck, with the signals it had before this rating, so it is not offered again
// and the classifier trains on it. ErrNotFound when the user may not see the
// paper; nothing is written then.
func (g *Generator) RateOnboarding(ctx context.Context, userID, paperID uuid.UUID, rating string) (OnboardingRating, error) {
	found, err := g.Papers.ProfileOf(ctx, userID, []uuid.UUID{paperID})
	if err != nil {
		return OnboardingRating{}, err
	}
	if len(found) == 0 {
		return OnboardingRating{}, ErrNotFound
	}
	card := g.onboardingCard(ctx, userID, found[0])
	if err := g.Store.recordOnboarding(ctx, userID, card, rating); err != nil {
		return OnboardingRating{}, err
	}
	shown, err := g.Store.onboardingPapers(ctx, userID)
	if err != nil {
		return OnboardingRating{}, err
	}
	var o Onboarding
	if err := g.countRatings(ctx, userID, shown, &o); err != nil {
		return OnboardingRating{}, err
	}
	return OnboardingRating{PaperID: paperID, Rating: rating, Rated: o.Rated, Target: OnboardingTarget,
		Complete: o.Rated >= OnboardingTarget}, nil
}

// onboardingCard scores p as the nightly run would (its stage-1 signals against
// what the user reads and rated so far, this paper's own thumbs left out) into a
// card. When that cannot be done the card has no signals, which the classifier
// skips, and the rating still counts.
func (g *Generator) onboardingCard(ctx context.Context, userID uuid.UUID, p papers.ProfilePaper) Card {
	card := Card{PaperID: p.ID, Rank: 1, Signals: map[string]float64{}}
	sig, facts, weights, err := g.stage1Of(ctx, userID, p)
	if err != nil {
		g.log().WarnContext(ctx, "pulse: a cold-start rating is kept without its signals", "user", userID, "error", err)
		return card
	}
	card.Signals, card.Score = sig, score.Final(weights, sig)
	card.Why = score.Why(weights, sig, facts, g.now())
	return card
}

// stage1Of is the stage-1 signals of p for the user now, with the facts of its
// why and the weights in force.
func (g *Generator) stage1Of(ctx context.Context, userID uuid.UUID, p papers.ProfilePaper) (map[string]float64, score.Facts, score.Weights, error) {
	now := g.now()
	set, err := g.Store.Settings(ctx, userID)
	if err != nil {
		return nil, score.Facts{}, nil, err
	}
	topics, authors, err := g.following(ctx, userID)
	if err != nil {
		return nil, score.Facts{}, nil, err
	}
	library, err := g.Papers.LibraryProfile(ctx, userID, profileSize)
	if err != nil {
		return nil, score.Facts{}, nil, err
	}
	feedback, err := g.Papers.FeedbackOf(ctx, userID, feedbackSize)
	if err != nil {
		return nil, score.Facts{}, nil, err
	}
	others := feedback[:0:0]
	for _, f := range feedback {
		if f.PaperID != p.ID {
			others = append(others, f)
		}
	}
	prof, err := g.profile(ctx, userID, now, library, others, topics)
	if err != nil {
		return nil, score.Facts{}, nil, err
	}
	vecs, err := g.Embed(ctx, []string{p.Title + "\n" + p.Abstract})
	if err != nil {
		return nil, score.Facts{}, nil, fmt.Errorf("pulse: embed a cold-start paper: %w", err)
	}
	if len(vecs) != 1 {
		return nil, score.Facts{}, nil, fmt.Errorf("pulse: embed a cold-start paper: %d vectors for one text", len(vecs))
	}
	cand := Candidate{ID: p.ID, Title: p.Title, Abstract: p.Abstract, Vec: vecs[0], Published: p.Published}
	for _, a := range p.Authors {
		cand.Authors = append(cand.Authors, score.Author{Name: a.Name})
	}
	sc := prof.Stage1([]Candidate{cand}, RankOpts{Tracked: trackedAuthors(authors), Lambda: set.Lambda, Now: now})[0]
	return sc.Signals, score.Facts{Topic: sc.Topic, Author: sc.Author, Published: p.Published},
		score.Effective(set.Weights, set.ClassifierOptIn), nil
}

// DiscoverForOnboarding fetches recent papers (the last 30 days) for the user's
// topics and authors through the paper sources, as the nightly run does, into the
// shared corpus, within 45 seconds. A source that fails is reported in words and
// never fails the run; ErrNothingToFollow when the user follows nothing.
func (g *Generator) DiscoverForOnboarding(ctx context.Context, userID uuid.UUID) (Discovery, error) {
	set, err := g.Store.Settings(ctx, userID)
	if err != nil {
		return Discovery{}, err
	}
	topics, authors, err := g.following(ctx, userID)
	if err != nil {
		return Discovery{}, err
	}
	if len(topics) == 0 && len(authors) == 0 {
		return Discovery{}, ErrNothingToFollow
	}
	set.LookbackDays = max(set.LookbackDays, onboardingLookbackDays)
	stats := Stats{SourceCounts: map[string]int{}, Sources: map[string]SourceStatus{}}
	dctx, cancel := context.WithTimeout(ctx, discoveryCap)
	ids := g.discover(dctx, userID, g.now(), set, topics, authors, nil, &stats)
	cancel()
	if ctx.Err() != nil {
		return Discovery{}, ctx.Err()
	}
	fresh, err := g.Papers.Suggestable(ctx, userID, ids)
	if err != nil {
		return Discovery{}, err
	}
	d := Discovery{Found: len(fresh), Sources: stats.Sources}
	d.Message = discoveryMessage(d)
	return d, nil
}

func discoveryMessage(d Discovery) string {
	var failed []string
	answered := 0
	for name, st := range d.Sources {
		switch {
		case name == "search": // the search as a whole, not a source
		case st.Status == "ok":
			answered++
		default:
			failed = append(failed, name)
		}
	}
	slices.Sort(failed)
	switch {
	case len(d.Sources) == 0:
		return "No paper source is enabled on this Lectern, so there was nowhere to look. An admin can enable sources under Admin, Plugins."
	case answered == 0:
		return "None of the paper sources could be reached, so no new papers were fetched. Rate the papers already here, or try again later; tonight's run asks the sources again."
	case d.Found == 0 && len(failed) > 0:
		return "The sources that answered had nothing new on what you follow, and " + strings.Join(failed, ", ") +
			" could not be reached. Try a broader topic, or again later."
	case d.Found == 0:
		return "The sources had nothing new on what you follow in the last 30 days. Try a broader topic or another author."
	case len(failed) > 0:
		return fmt.Sprintf("Found %d papers on what you follow; they are in the list to rate. %s could not be reached.",
			d.Found, strings.Join(failed, ", "))
	}
	return fmt.Sprintf("Found %d papers on what you follow; they are in the list to rate.", d.Found)
}

// onboardingPapers returns the papers of the user's cold-start deck: those they
// rated or skipped.
func (s *Store) onboardingPapers(ctx context.Context, userID uuid.UUID) ([]uuid.UUID, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.paper_id FROM pulse_cards c JOIN pulse_decks d ON d.id = c.deck_id
		 WHERE d.user_id = $1 AND d.deck_date = $2::date AND c.user_id = $1
		 ORDER BY c.rank`, userID, onboardingDeckDate)
	if err != nil {
		return nil, fmt.Errorf("pulse: cold-start papers: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("pulse: cold-start papers: %w", err)
	}
	return out, nil
}

// hasDeck reports whether a deck was ever made for the user, the cold start's
// own aside.
func (s *Store) hasDeck(ctx context.Context, userID uuid.UUID) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pulse_decks WHERE user_id = $1 AND deck_date <> $2::date)`,
		userID, onboardingDeckDate).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("pulse: has a deck: %w", err)
	}
	return ok, nil
}

// recordOnboarding keeps card in the user's cold-start deck (the first signals a
// paper had stay) and, unless rating is skip, gives the paper the user's thumb,
// in one transaction.
func (s *Store) recordOnboarding(ctx context.Context, userID uuid.UUID, card Card, rating string) error {
	sig, err := json.Marshal(card.Signals)
	if err != nil {
		return fmt.Errorf("pulse: record a cold-start rating: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var deck uuid.UUID
		if err := tx.QueryRow(ctx, `
			INSERT INTO pulse_decks (user_id, deck_date, stats) VALUES ($1, $2::date, '{"onboarding": true}')
			ON CONFLICT (user_id, deck_date) DO UPDATE SET generated_at = pulse_decks.generated_at
			RETURNING id`, userID, onboardingDeckDate).Scan(&deck); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO pulse_cards (deck_id, user_id, paper_id, rank, score, signals, why)
			VALUES ($1, $2, $3, (SELECT count(*) + 1 FROM pulse_cards WHERE deck_id = $1), $4, $5, $6)
			ON CONFLICT (deck_id, paper_id) DO NOTHING`, deck, userID, card.PaperID, card.Score, sig, card.Why); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE pulse_decks SET card_count = (SELECT count(*) FROM pulse_cards WHERE deck_id = $1)
			WHERE id = $1 AND user_id = $2`, deck, userID); err != nil {
			return err
		}
		if rating == RatingSkip {
			return nil
		}
		return papers.GiveFeedbackTx(ctx, tx, userID, card.PaperID, rating == RatingUp, papers.FeedbackPulse, "")
	})
	if err != nil {
		return fmt.Errorf("pulse: record a cold-start rating: %w", err)
	}
	return nil
}
