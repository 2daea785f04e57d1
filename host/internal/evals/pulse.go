package evals

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// `lectern eval pulse` replays a simulated user's weeks with Pulse, day by day,
// once per ranker over the same corpus and the same user: Lectern's scoring
// (pulse.Profile.Stage1 and pulse.Cut, the classifier trained as the nightly job
// trains it), and two baselines, recency only and library similarity only. Each
// morning the candidates of the lookback window that the product would suggest
// are ranked, a deck of ten is cut, and the user acts on it by a hidden taste;
// what they save joins their library and their thumbs train the classifier, so
// each ranker lives with the consequences of its own decks.

// PulseOpts configure a run of the Pulse evaluation.
type PulseOpts struct {
	// Fixtures is the shared fixtures folder the corpus reads its real records from.
	Fixtures string
	// Seed is the first seed; Seeds how many consecutive seeds are run and
	// averaged (default 5). A seed fixes the generated papers, the user's taste
	// and every choice they make.
	Seed  uint64
	Seeds int
	// Days is how many mornings get a deck (default 45).
	Days int
	// PerDay is how many papers are generated per simulated day (default 30).
	PerDay int
	// Judge, when set, is the relevance role (the nightly run's stage 2): the
	// run then adds Lectern with its judgements beside Lectern without.
	Judge pulse.Judge
	// Broken adds the deliberately broken ranker (Lectern's score upside down),
	// which the tests use to show that the comparison can fail.
	Broken bool
}

// Ranker names in the report.
const (
	RankLectern = "lectern"
	RankJudged  = "lectern + relevance role"
	RankRecency = "recency only"
	RankLibrary = "library similarity only"
	RankOracle  = "oracle (hidden taste)"
	RankBroken  = "broken (lectern inverted)"
)

const (
	deckSize     = 10
	preDays      = 10 // days of papers before the first deck; the library is seeded from them
	lookbackDays = 7  // pulse.DefaultSettings().LookbackDays
	downWindow   = 60 // days a thumbs-down keeps a paper out (papers.ExclusionPredicate)
	stage2TopK   = 40 // the Generator's default
)

// The user's hidden taste and habits.
const (
	likeOnTopic  = 0.6  // chance they would save a paper of a cluster they like
	likeOffTopic = 0.03 // ... of any other cluster
	lookChance   = 0.85 // chance they act on a card at all on a given morning
	upWhenSaved  = 0.7  // chance a save comes with a thumbs-up
	downWhenNot  = 0.5  // a card they would not save: thumbs-down,
	dismissWhen  = 0.25 // dismiss (trash and thumbs-down), else nothing
	likedCount   = 2    // clusters they like
	minCluster   = 25   // a cluster liked must have at least this many papers,
	maxCluster   = 300  // and at most this many (no one likes "Computer Science")
)

// PulseScores is the report of a run: the figures of each ranker averaged over
// the seeds, and each seed's own.
type PulseScores struct {
	Seeds     []uint64 `json:"seeds"`
	Days      int      `json:"days"`
	Corpus    Corpus   `json:"corpus"`
	Rankers   []Ranked `json:"rankers"`
	PerSeed   []Seeded `json:"per_seed"`
	Embedding string   `json:"embedding_model"`
}

// Corpus says what the runs ranked (averaged over seeds).
type Corpus struct {
	Papers           float64 `json:"papers"`
	FromFixtures     int     `json:"from_fixtures"`
	Clusters         float64 `json:"clusters"`
	CandidatesPerDay float64 `json:"candidates_per_day"`
	LikedShare       float64 `json:"liked_share"`
}

// Seeded is one seed's figures.
type Seeded struct {
	Seed          uint64   `json:"seed"`
	LikedClusters []string `json:"liked_clusters"`
	Rankers       []Ranked `json:"rankers"`
}

// Ranked is one ranker's figures.
type Ranked struct {
	Name string `json:"name"`
	// PrecisionAt10 is the mean share of each deck's ten cards the user's hidden
	// taste would save.
	PrecisionAt10 float64 `json:"precision_at_10"`
	// Coverage is the share of the papers the user would save, of all that were
	// candidates on some morning, that reached a deck.
	Coverage float64 `json:"coverage"`
	// ClustersPerDeck is the mean number of distinct topic clusters in a deck;
	// IntraDeckSimilarity the mean cosine between two cards of one deck (lower is
	// more diverse).
	ClustersPerDeck     float64 `json:"clusters_per_deck"`
	IntraDeckSimilarity float64 `json:"intra_deck_similarity"`
	// Saves is how many papers the user saved over the run.
	Saves float64 `json:"saves"`
	// AUC is the held-out AUC of the last classifier trained (Lectern only), and
	// Trainings how many nights one was trained.
	AUC       *float64 `json:"classifier_auc,omitempty"`
	Trainings float64  `json:"classifier_trainings,omitempty"`
}

// RunPulse runs the evaluation.
func RunPulse(ctx context.Context, o PulseOpts) (*PulseScores, error) {
	o.Seeds = cmp.Or(o.Seeds, 5)
	o.Days = cmp.Or(o.Days, 45)
	o.PerDay = cmp.Or(o.PerDay, 30)
	if o.Seeds < 1 || o.Days < 1 || o.PerDay < 1 {
		return nil, fmt.Errorf("seeds, days and papers per day must be positive (got %d, %d, %d)", o.Seeds, o.Days, o.PerDay)
	}
	fixtures, err := fixturePapers(o.Fixtures)
	if err != nil {
		return nil, err
	}
	out := &PulseScores{Days: o.Days, Embedding: extractive.EmbeddingModel}
	for i := range o.Seeds {
		seed := o.Seed + uint64(i)
		c, err := newSimCorpus(ctx, seed, fixtures, o)
		if err != nil {
			return nil, err
		}
		s := Seeded{Seed: seed, LikedClusters: c.liked}
		for _, r := range rankers(o.Broken, o.Judge != nil) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			got, err := c.replay(ctx, r, o.Judge)
			if err != nil {
				return nil, fmt.Errorf("seed %d, %s: %w", seed, r.name, err)
			}
			s.Rankers = append(s.Rankers, got)
		}
		out.Seeds = append(out.Seeds, seed)
		out.PerSeed = append(out.PerSeed, s)
		out.Corpus.Papers += float64(len(c.papers)) / float64(o.Seeds)
		out.Corpus.Clusters += float64(len(c.clusters)) / float64(o.Seeds)
		out.Corpus.CandidatesPerDay += c.candidatesPerDay / float64(o.Seeds)
		out.Corpus.LikedShare += c.likedShare() / float64(o.Seeds)
		out.Corpus.FromFixtures = len(fixtures)
	}
	out.Rankers = average(out.PerSeed)
	return out, nil
}

// average is the mean of each ranker's figures over the seeds.
func average(seeds []Seeded) []Ranked {
	out := slices.Clone(seeds[0].Rankers)
	for i := range out {
		var auc float64
		aucs := 0
		out[i] = Ranked{Name: out[i].Name}
		for _, s := range seeds {
			r := s.Rankers[i]
			n := float64(len(seeds))
			out[i].PrecisionAt10 += r.PrecisionAt10 / n
			out[i].Coverage += r.Coverage / n
			out[i].ClustersPerDeck += r.ClustersPerDeck / n
			out[i].IntraDeckSimilarity += r.IntraDeckSimilarity / n
			out[i].Saves += r.Saves / n
			out[i].Trainings += r.Trainings / n
			if r.AUC != nil {
				auc += *r.AUC
				aucs++
			}
		}
		if aucs > 0 {
			mean := auc / float64(aucs)
			out[i].AUC = &mean
		}
	}
	return out
}

// Ranker returns the figures of the ranker called name; false when the run had
// none.
func (s *PulseScores) Ranker(name string) (Ranked, bool) {
	for _, r := range s.Rankers {
		if r.Name == name {
			return r, true
		}
	}
	return Ranked{}, false
}

// String prints the figures as a table.
func (s *PulseScores) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pulse eval: %d mornings, seeds %v, embedding %s\n", s.Days, s.Seeds, s.Embedding)
	fmt.Fprintf(&b, "corpus: %.0f papers (%d from the fixture recordings, the rest generated), %.0f clusters, %.0f candidates a morning, %.1f%% of papers the user would save\n\n",
		s.Corpus.Papers, s.Corpus.FromFixtures, s.Corpus.Clusters, s.Corpus.CandidatesPerDay, 100*s.Corpus.LikedShare)
	fmt.Fprintf(&b, "%-26s %8s %9s %14s %11s %7s %6s\n", "ranker", "P@10", "coverage", "clusters/deck", "intra-sim", "saves", "AUC")
	for _, r := range s.Rankers {
		auc := "-"
		if r.AUC != nil {
			auc = fmt.Sprintf("%.3f", *r.AUC)
		}
		fmt.Fprintf(&b, "%-26s %8.3f %9.3f %14.2f %11.3f %7.1f %6s\n", r.Name, r.PrecisionAt10, r.Coverage, r.ClustersPerDeck,
			r.IntraDeckSimilarity, r.Saves, auc)
	}
	b.WriteString("\nP@10: share of a deck's cards the hidden taste would save; coverage: share of the papers it would save that reached a deck;\n")
	b.WriteString("intra-sim: mean cosine between two cards of a deck; AUC: held-out AUC of the last classifier (newest 20% per class).")
	return b.String()
}

// simCorpus is one seed's papers, their vectors and the user's hidden taste.
type simCorpus struct {
	seed     uint64
	days     int
	papers   []simPaper
	vecs     [][]float32
	ids      []uuid.UUID
	clusters []string
	// liked are the clusters the user likes; wouldSave[i] is their hidden verdict
	// on paper i.
	liked     []string
	wouldSave []bool
	// The user's starting point: the library seeded from liked papers published
	// before the first deck, the topics they follow, the author they follow.
	seedLibrary      []int
	topicVecs        [][]float32
	topicNames       []string
	tracked          []score.Author
	byDay            map[int][]int
	candidatesPerDay float64
	start            time.Time
}

func newSimCorpus(ctx context.Context, seed uint64, fixtures []simPaper, o PulseOpts) (*simCorpus, error) {
	rng := rand.New(rand.NewPCG(seed, 0x70756c7365))
	ps := slices.Clone(fixtures)
	placeOnCalendar(ps, -preDays, o.Days-1)
	ps = append(ps, generatePapers(rng, o.PerDay, -preDays, o.Days-1)...)
	c := &simCorpus{seed: seed, days: o.Days, papers: ps, byDay: map[int][]int{},
		start: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	texts := make([]string, len(ps))
	sizes := map[string]int{}
	for i, p := range ps {
		// The text a candidate is embedded from in the nightly run.
		texts[i] = p.Title + "\n" + p.Abstract
		sizes[p.Cluster]++
		c.byDay[p.Day] = append(c.byDay[p.Day], i)
		var id uuid.UUID
		binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
		c.ids = append(c.ids, id)
	}
	for k := range sizes {
		c.clusters = append(c.clusters, k)
	}
	slices.Sort(c.clusters)
	// The order papers of one day come in is the seed's, not the corpus's: the
	// rankers break ties by it.
	for d := -preDays; d < o.Days; d++ {
		rng.Shuffle(len(c.byDay[d]), func(i, j int) { c.byDay[d][i], c.byDay[d][j] = c.byDay[d][j], c.byDay[d][i] })
	}
	vecs, err := builtinEmbed(ctx, texts)
	if err != nil {
		return nil, err
	}
	c.vecs = vecs
	c.drawTaste(rng, sizes)
	if err := c.drawStart(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// builtinEmbed embeds with the builtin plugin's lexical embedding, the embed
// role's model when no other is assigned.
func builtinEmbed(ctx context.Context, texts []string) ([][]float32, error) {
	r, err := embedding.Provider{P: extractive.New(nil), Name: extractive.EmbeddingModel}.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed the corpus: %w", err)
	}
	return r.Vectors, nil
}

// drawTaste picks the clusters the user likes and their verdict on each paper:
// most papers of those clusters, a few of the others.
func (c *simCorpus) drawTaste(rng *rand.Rand, sizes map[string]int) {
	var eligible []string
	for _, k := range c.clusters {
		// "Other" gathers the records their source gave no field: no one's taste.
		if k != "Other" && sizes[k] >= minCluster && sizes[k] <= maxCluster {
			eligible = append(eligible, k)
		}
	}
	rng.Shuffle(len(eligible), func(i, j int) { eligible[i], eligible[j] = eligible[j], eligible[i] })
	c.liked = eligible[:min(likedCount, len(eligible))]
	slices.Sort(c.liked)
	c.wouldSave = make([]bool, len(c.papers))
	for i := range c.papers {
		p := likeOffTopic
		if slices.Contains(c.liked, c.papers[i].Cluster) {
			p = likeOnTopic
		}
		c.wouldSave[i] = c.chance(uint64(i), 0, 1) < p
	}
}

// drawStart seeds the library with two liked papers of each liked cluster
// published before the first deck, names each liked cluster as a topic, and
// follows the first author of the first library paper.
func (c *simCorpus) drawStart(ctx context.Context) error {
	for _, k := range c.liked {
		n := 0
		for d := -preDays; d < 0 && n < 2; d++ {
			for _, i := range c.byDay[d] {
				if n < 2 && c.wouldSave[i] && c.papers[i].Cluster == k {
					c.seedLibrary = append(c.seedLibrary, i)
					n++
				}
			}
		}
		c.topicNames = append(c.topicNames, k)
	}
	texts := make([]string, len(c.liked))
	for i, k := range c.liked {
		// As the nightly run embeds a topic: its name and its query.
		texts[i] = k + "\n" + query(k)
	}
	vecs, err := builtinEmbed(ctx, texts)
	if err != nil {
		return err
	}
	c.topicVecs = vecs
	if len(c.seedLibrary) > 0 && len(c.papers[c.seedLibrary[0]].Authors) > 0 {
		c.tracked = []score.Author{{Name: c.papers[c.seedLibrary[0]].Authors[0]}}
	}
	return nil
}

func (c *simCorpus) likedShare() float64 {
	n := 0
	for _, w := range c.wouldSave {
		if w {
			n++
		}
	}
	return float64(n) / float64(len(c.wouldSave))
}

// chance is a number in [0, 1) fixed by the seed and (a, b, salt): the same
// paper on the same morning gets the same draw whichever ranker showed it, so
// the rankers differ by their decks alone.
func (c *simCorpus) chance(a, b, salt uint64) float64 {
	x := c.seed*0x9e3779b97f4a7c15 ^ a*0xbf58476d1ce4e5b9 ^ b*0x94d049bb133111eb ^ salt*0x2545f4914f6cdd1d
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

func (c *simCorpus) morning(day int) time.Time {
	return c.start.AddDate(0, 0, day).Add(6 * time.Hour)
}

func (c *simCorpus) published(i int) time.Time {
	return c.start.AddDate(0, 0, c.papers[i].Day)
}
