package benchhttp

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Sizes of the generated corpus (issue 18 item 7): the shared corpus every user
// sees, and what each user keeps privately.
const (
	Papers           = 10_000
	PassagesPerPaper = 10
	Passages         = Papers * PassagesPerPaper
	// Users is how many users the mixed read set signs in and drives.
	Users = 10
	// SeededUsers is how many users the data set has, each with the same kind of
	// library, cards, projects and Pulse deck: the load test (--mix load) gives
	// each virtual user one of them.
	SeededUsers       = 200
	PulseCardsPerUser = 20
	CardsPerUser      = 1_000
	LibraryPerUser    = 2_000
	DecksPerUser      = 5
	ProjectsPerUser   = 8
	TasksPerProject   = 10
	PapersPerProject  = 15
	MilestonesPerProj = 3

	// vocabulary is how many distinct words the passages draw from, Zipf-weighted
	// (s = 1.1) as words in real text are.
	vocabulary    = 20_000
	wordsPerChunk = 120
)

// corpus makes the generated passages and the queries asked of them from one seed,
// so every run of the benchmark searches the same text.
type corpus struct {
	vocab []string
}

func newCorpus() *corpus {
	vocab := make([]string, vocabulary)
	for i := range vocab {
		// Letters first, so the English stemmer keeps each word whole and distinct.
		vocab[i] = fmt.Sprintf("w%c%c%c%d", 'a'+rune(i%26), 'a'+rune(i/26%26), 'a'+rune(i/676%26), i)
	}
	return &corpus{vocab: vocab}
}

// passages returns n passages of wordsPerChunk words each, the same for the same
// seed.
func (c *corpus) passages(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	zipf := rand.NewZipf(rng, 1.1, 1, vocabulary-1)
	out := make([]string, n)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for w := range wordsPerChunk {
			if w > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(c.vocab[zipf.Uint64()])
		}
		out[i] = sb.String()
	}
	return out
}

// query returns a passage search of two or three words: one of the 100 most
// frequent words (which match a large part of the corpus, as "model" or "protein"
// do in a real library) with one or two of middling frequency, which narrow it.
// rng must not be shared between goroutines.
func (c *corpus) query(rng *rand.Rand) string {
	words := []string{c.vocab[rng.IntN(100)], c.vocab[100+rng.IntN(4_900)]}
	if rng.IntN(2) == 0 {
		words = append(words, c.vocab[100+rng.IntN(4_900)])
	}
	return strings.Join(words, " ")
}
