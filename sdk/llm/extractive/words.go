package extractive

import "strings"

// The fixed idf estimate. The plugin sees one request at a time and has no corpus
// statistics, so a word's weight comes from which of these tiers it falls in:
//
//	tier                                         weight
//	function words (stopWords)                   0.1
//	academic filler (fillerWords)                0.4
//	numbers, and other tokens of 1-2 characters  0.5
//	everything else                              1.0
//
// A word pair (bigram) weighs bigramScale times the lower weight of its two words.
// The tiers approximate the idf of a large English scientific corpus: function
// words occur in nearly every passage, filler words in most papers, and the rest
// are rare enough that treating them alike costs little.
const (
	weightStop    = 0.1
	weightFiller  = 0.4
	weightShort   = 0.5
	weightContent = 1.0
	bigramScale   = 0.5
)

// stopWords are English function words: articles, pronouns, prepositions,
// conjunctions, auxiliaries, question words and common adverbs. The answer task
// ignores them in questions; the embedder weighs them weightStop.
var stopWords = wordSet(`
	a about above across after afterwards again against all almost alone along already
	also although always am among amongst an and another any anyhow anyone anything
	anyway anywhere are around as at be became because become becomes becoming been
	before beforehand behind being below beside besides between beyond both but by can
	cannot could did do does doing done down during each either else elsewhere enough
	etc even ever every everyone everything everywhere except few for former formerly
	from further furthermore had has have having he hence her here hereby herein hers
	herself him himself his how however i if in indeed into is it its itself just
	latter least less many may me meanwhile might mine more moreover most mostly much
	must my myself namely neither never nevertheless next no nobody none nor not nothing
	now nowhere of off often on once only onto or other others otherwise our ours
	ourselves out over own per perhaps quite rather re same seem seemed seeming seems
	she should since so some somehow someone something sometime sometimes somewhere
	still such than that the their theirs them themselves then thence there thereafter
	thereby therefore therein thereupon these they this those though through throughout
	thru thus to together too toward towards under until up upon us very via was we well
	were what whatever when whence whenever where whereas whereby wherein whether which
	while whither who whoever whole whom whose why will with within without would yet
	you your yours yourself yourselves let lets shall ll ve isn aren wasn weren don
	doesn didn won wouldn couldn shouldn`)

// fillerWords are words frequent in any scientific paper whatever its topic
// ("paper", "result", "propose", "figure", ...), and the words of a request rather
// than of a topic ("describe", "explain", "think"). They weigh weightFiller. The
// lookup is by stem (fillerStems), so "results" and "proposed" are filler too.
var fillerWords = wordSet(`
	paper article study work approach method result finding propose proposed present
	presented show shown showed use used using based new novel different various
	several number given example case et al fig figure table section eq equation
	respectively provide provided include included including consider considered
	obtain obtained perform performed observe observed first second third one two
	three four five many high low large small important general particular specific
	possible able due describe described explain explained discuss discussed tell list
	name give mention mentioned author conclusion introduction abstract related also
	further however thus therefore overall total way ways make made set get got take
	taken like type kind part think thought say said know known mean meant feel felt
	happen look see seem`)

// fillerStems are the stems of fillerWords.
var fillerStems = func() map[string]bool {
	m := map[string]bool{}
	for w := range fillerWords {
		m[stem(w)] = true
	}
	return m
}()

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// isStop reports whether the token is a function word (function words are never
// stemmed).
func isStop(tok string) bool { return stopWords[tok] }

// weight is a token's fixed idf estimate (see the tier table above).
func weight(tok string) float64 {
	switch {
	case stopWords[tok]:
		return weightStop
	case fillerStems[tok]:
		return weightFiller
	case allDigits(tok) || shortToken(tok):
		return weightShort
	}
	return weightContent
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// shortToken reports whether tok has at most two characters.
func shortToken(tok string) bool {
	n := 0
	for range tok {
		n++
		if n > 2 {
			return false
		}
	}
	return true
}
