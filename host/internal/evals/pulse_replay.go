package evals

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
)

// simRanker orders a morning's candidates and returns the deck (paper indexes,
// best first).
type simRanker struct {
	name string
	// trains says whether the user's classifier is trained each night, as the
	// product trains it, for this ranker to use.
	trains bool
	// judged says whether stage 2 asks the relevance role.
	judged bool
	rank   func(u *simUser, cands []int, now time.Time) []int
}

// rankers are the rankers of a run, Lectern's first.
func rankers(broken, judged bool) []simRanker {
	out := []simRanker{
		{name: RankLectern, trains: true, rank: func(u *simUser, cands []int, now time.Time) []int {
			return u.indexes(u.lecternCards(cands, now, stage2TopK, deckSize))
		}},
		{name: RankRecency, rank: func(u *simUser, cands []int, now time.Time) []int {
			return top(cands, func(i int) float64 {
				p := u.c.published(i)
				return score.RecencySignal(&p, now)
			})
		}},
		{name: RankLibrary, rank: func(u *simUser, cands []int, now time.Time) []int {
			lib := u.profile(now).Library
			return top(cands, func(i int) float64 { return score.Cosine(u.c.vecs[i], lib) })
		}},
		{name: RankOracle, rank: func(u *simUser, cands []int, _ time.Time) []int {
			return top(cands, func(i int) float64 {
				if u.c.wouldSave[i] {
					return 1
				}
				return 0
			})
		}},
	}
	if judged {
		out = append(out, simRanker{name: RankJudged, trains: true, judged: true, rank: func(u *simUser, cands []int, now time.Time) []int {
			return u.indexes(u.lecternCards(cands, now, stage2TopK, deckSize))
		}})
	}
	if broken {
		out = append(out, simRanker{name: RankBroken, trains: true, rank: func(u *simUser, cands []int, now time.Time) []int {
			all := u.indexes(u.lecternCards(cands, now, 0, len(cands)))
			slices.Reverse(all)
			return all[:min(deckSize, len(all))]
		}})
	}
	return out
}

// top returns the deckSize candidates of highest score, ties in their order.
func top(cands []int, score func(int) float64) []int {
	s := make([]float64, len(cands))
	order := make([]int, len(cands))
	for j, i := range cands {
		s[j], order[j] = score(i), j
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s[b], s[a]) })
	out := make([]int, 0, deckSize)
	for _, j := range order[:min(deckSize, len(order))] {
		out = append(out, cands[j])
	}
	return out
}

// simUser is the simulated user's state under one ranker: their library, their
// thumbs, what each paper's card said when it was last shown, their classifier.
type simUser struct {
	ctx context.Context
	c   *simCorpus
	// judge is the relevance role of stage 2; nil scores without one.
	judge     pulse.Judge
	saved     []int
	library   []pulse.Dated
	inLibrary map[int]bool
	trashed   map[int]bool
	thumbs    map[int]simThumb
	shown     map[int]map[string]float64
	model     *classifier.Model
	optIn     bool
	trainings int
}

type simThumb struct {
	positive bool
	at       time.Time
}

// evalKey signs the simulated user's classifier, as the product signs every
// stored model (the blob is sealed and opened again before it is used).
var evalKey = []byte("lectern eval pulse: not a deployment key")

func (c *simCorpus) newUser(ctx context.Context) *simUser {
	u := &simUser{ctx: ctx, c: c, inLibrary: map[int]bool{}, trashed: map[int]bool{}, thumbs: map[int]simThumb{},
		shown: map[int]map[string]float64{}}
	for _, i := range c.seedLibrary {
		u.save(i, c.published(i).Add(12*time.Hour))
	}
	return u
}

func (u *simUser) save(i int, at time.Time) {
	u.saved = append(u.saved, i)
	u.library = append(u.library, pulse.Dated{Vec: u.c.vecs[i], At: at})
	u.inLibrary[i] = true
}

// profile is the user's profile as the nightly run builds it: the library and
// the papers rated up outside it (newest thumb) on the positive side, the papers
// turned down on the negative side, the topics.
func (u *simUser) profile(now time.Time) *pulse.Profile {
	pos := slices.Clone(u.library)
	var neg []pulse.Dated
	for _, i := range slices.Sorted(maps.Keys(u.thumbs)) {
		switch t := u.thumbs[i]; {
		case !t.positive:
			neg = append(neg, pulse.Dated{Vec: u.c.vecs[i], At: t.at})
		case !u.inLibrary[i]:
			pos = append(pos, pulse.Dated{Vec: u.c.vecs[i], At: t.at})
		}
	}
	return pulse.NewProfile(now, pos, neg, u.c.topicVecs, u.c.topicNames)
}

// lecternCards scores the candidates as the nightly run does with no relevance
// model: stage 1 keeps topK, the classifier (once trained) weighs in with the
// default weights, and the best size are cut.
func (u *simUser) lecternCards(cands []int, now time.Time, topK, size int) []pulse.Card {
	set := pulse.DefaultSettings()
	pc := make([]pulse.Candidate, len(cands))
	for j, i := range cands {
		p := u.c.papers[i]
		pub := u.c.published(i)
		pc[j] = pulse.Candidate{ID: u.c.ids[i], Title: p.Title, Abstract: p.Abstract, Vec: u.c.vecs[i], Published: &pub}
		for _, a := range p.Authors {
			pc[j].Authors = append(pc[j].Authors, score.Author{Name: a})
		}
	}
	scored := u.profile(now).Stage1(pc, pulse.RankOpts{Tracked: u.c.tracked, Lambda: set.Lambda, TopK: topK, Now: now})
	if u.judge != nil {
		g := &pulse.Generator{Judge: u.judge}
		g.Stage2(u.ctx, u.interests(), scored, &pulse.Stats{})
	}
	cards := pulse.Cut(scored, score.Effective(set.Weights, u.optIn), u.model, size, now)
	for _, card := range cards[:min(deckSize, len(cards))] {
		u.shown[index(card.PaperID)] = card.Signals
	}
	return cards
}

// interests is what the relevance role is told: the user's topics and their
// newest library papers.
func (u *simUser) interests() string {
	topics := make([]pulse.Topic, len(u.c.topicNames))
	for i, k := range u.c.topicNames {
		topics[i] = pulse.Topic{Name: k, Query: query(k), Enabled: true}
	}
	library := make([]papers.ProfilePaper, 0, len(u.saved))
	for _, i := range slices.Backward(u.saved) {
		library = append(library, papers.ProfilePaper{Title: u.c.papers[i].Title, Abstract: u.c.papers[i].Abstract})
	}
	return pulse.Interests(topics, library)
}

func (u *simUser) indexes(cards []pulse.Card) []int {
	out := make([]int, len(cards))
	for i, c := range cards {
		out[i] = index(c.PaperID)
	}
	return out
}

func index(id uuid.UUID) int { return int(binary.BigEndian.Uint64(id[8:])) - 1 }

// train fits the classifier as pulse.Trainer does: the newest thumb on each
// paper, with the signals its card had when shown; at least 30 with both
// labels, the newest 20% of each class held out.
func (u *simUser) train(now time.Time) (*float64, error) {
	var examples []classifier.Example
	for _, i := range slices.Sorted(maps.Keys(u.thumbs)) {
		if sig, ok := u.shown[i]; ok {
			t := u.thumbs[i]
			examples = append(examples, classifier.Example{Signals: sig, Positive: t.positive, At: t.at})
		}
	}
	m, err := classifier.Train(examples, now)
	var skip *classifier.SkipError
	if errors.As(err, &skip) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	blob, tag, err := classifier.Seal(m, uuid.Nil, evalKey)
	if err != nil {
		return nil, err
	}
	if u.model, err = classifier.Open(blob, tag, uuid.Nil, evalKey); err != nil {
		return nil, err
	}
	u.optIn = true
	u.trainings++
	return m.AUC, nil
}

// candidates are the papers the morning's run may suggest: published in the
// lookback window, not in the library, not trashed, not turned down in the
// last 60 days.
func (u *simUser) candidates(day int, now time.Time) []int {
	var out []int
	for d := day - lookbackDays; d <= day; d++ {
		for _, i := range u.c.byDay[d] {
			if u.inLibrary[i] || u.trashed[i] {
				continue
			}
			if t, ok := u.thumbs[i]; ok && !t.positive && now.Sub(t.at) < downWindow*24*time.Hour {
				continue
			}
			out = append(out, i)
		}
	}
	return out
}

// act is what the user does with the morning's deck: they look at most cards,
// save the ones their taste would save (often with a thumbs-up), and turn down
// or dismiss some of the rest.
func (u *simUser) act(deck []int, day int, now time.Time) (saves int) {
	for rank, i := range deck {
		at := now.Add(time.Duration(rank+1) * time.Minute)
		d := uint64(day + preDays)
		if u.c.chance(uint64(i), d, 2) >= lookChance {
			continue
		}
		if u.c.wouldSave[i] {
			u.save(i, at)
			saves++
			if u.c.chance(uint64(i), d, 3) < upWhenSaved {
				u.thumbs[i] = simThumb{positive: true, at: at}
			}
			continue
		}
		switch x := u.c.chance(uint64(i), d, 4); {
		case x < downWhenNot:
			u.thumbs[i] = simThumb{at: at}
		case x < downWhenNot+dismissWhen:
			u.trashed[i] = true
			u.thumbs[i] = simThumb{at: at}
		}
	}
	return saves
}

// replay runs the user's mornings under r and measures its decks.
func (c *simCorpus) replay(ctx context.Context, r simRanker, judge pulse.Judge) (Ranked, error) {
	u := c.newUser(ctx)
	if r.judged {
		u.judge = judge
	}
	out := Ranked{Name: r.name}
	var auc *float64
	shownLiked, candLiked := map[int]bool{}, map[int]bool{}
	var cands int
	for day := range c.days {
		now := c.morning(day)
		if r.trains {
			// The nightly training runs before the deck (03:30, the deck at 06:00).
			a, err := u.train(now.Add(-150 * time.Minute))
			if err != nil {
				return Ranked{}, fmt.Errorf("train the classifier: %w", err)
			}
			if a != nil {
				auc = a
			}
		}
		cs := u.candidates(day, now)
		cands += len(cs)
		for _, i := range cs {
			if c.wouldSave[i] {
				candLiked[i] = true
			}
		}
		deck := r.rank(u, cs, now)
		liked := 0
		clusters := map[string]bool{}
		for _, i := range deck {
			if c.wouldSave[i] {
				liked++
				shownLiked[i] = true
			}
			clusters[c.papers[i].Cluster] = true
		}
		out.PrecisionAt10 += float64(liked) / deckSize
		out.ClustersPerDeck += float64(len(clusters))
		out.IntraDeckSimilarity += c.similarity(deck)
		out.Saves += float64(u.act(deck, day, now))
	}
	n := float64(c.days)
	out.PrecisionAt10 /= n
	out.ClustersPerDeck /= n
	out.IntraDeckSimilarity /= n
	if len(candLiked) > 0 {
		out.Coverage = float64(len(shownLiked)) / float64(len(candLiked))
	}
	if r.trains {
		out.AUC, out.Trainings = auc, float64(u.trainings)
	}
	if r.name == RankLectern {
		c.candidatesPerDay = float64(cands) / n
	}
	return out, nil
}

// similarity is the mean cosine between two papers of deck.
func (c *simCorpus) similarity(deck []int) float64 {
	var sum float64
	pairs := 0
	for a := range deck {
		for b := a + 1; b < len(deck); b++ {
			sum += score.Cosine(c.vecs[deck[a]], c.vecs[deck[b]])
			pairs++
		}
	}
	if pairs == 0 {
		return 0
	}
	return sum / float64(pairs)
}
