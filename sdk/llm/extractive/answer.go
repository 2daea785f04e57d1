package extractive

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
)

// NoAnswer is the whole answer when no sentence of the documents clears the
// relevance floor. It cites nothing; the host can compare an answer with it.
const NoAnswer = "The documents do not contain the answer to this question."

// answerLead opens an answer that quotes the documents.
const answerLead = "According to the documents:"

// The answer ranking: BM25 over the request's sentences, with a bonus for
// question word pairs found side by side, and a floor on how much of the
// question a sentence covers. The floors were tuned on PubMedQA questions 0 to
// 299 (TestAnswerPubMedQA checks them on 300 to 499).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// bigramBonus is the weight of a matched question word pair, relative to its
	// two words' BM25 idf.
	bigramBonus = 0.5
	// minCoverage is the share of the question's idf-weighted terms a sentence
	// must contain to be quoted at all. 0.4 on the full-text evaluation set
	// (docs/benchmarks.md): 0.3 answered three of its ten unanswerable questions
	// from sentences sharing two or three common words with them; 0.45 turns
	// away answerable ones. PubMedQA's floors (TestAnswerPubMedQA) still hold.
	minCoverage = 0.4
	// minDocCoverage is the share of the question's idf-weighted terms the
	// sentence's document must contain.
	minDocCoverage = 0.45
	// minRelative is the score, relative to the best sentence, that later quotes
	// need.
	minRelative = 0.5
	// covFactor blends coverage into the score: × (1 - covFactor + covFactor ×
	// coverage), so a sentence with all the question's words beats one that
	// repeats a few.
	covFactor = 0.5
	// fragmentFactor scales the score of a piece of a sentence cut by a chunk's
	// edge: the whole sentence is usually in the neighbouring chunk.
	fragmentFactor = 0.5
	// maxQuotes bounds the quotes of one answer: a careful reader quotes the one
	// to three sentences that answer, not every related one.
	maxQuotes = 3
	// minAnswerTokens is the shortest sentence (in words of two letters or more)
	// an answer quotes: shorter ones are labels and fragments ("better",
	// "heparin-induced thrombocytopenia.").
	minAnswerTokens = 5
)

// quote is a sentence an answer quotes, with the id that cites it.
type quote struct {
	doc  int
	id   string
	span Span
}

// answer picks the sentences that answer question. Every sentence of the
// documents (outside reference lists and headings, of minAnswerTokens words or
// more) is scored by BM25 (idf over the request's sentences) against the
// question's words other than function words, each weighted by its fixed weight,
// plus bigramBonus for every pair of adjacent question words found adjacent in
// the sentence; the score is then blended with the sentence's coverage
// (covFactor) and halved for a fragment cut by a chunk's edge. Coverage is the
// share of the question's idf-weighted words a sentence (or its document)
// contains, where a word found in no sentence counts with the highest idf.
//
// A sentence clears the floor when its coverage is at least minCoverage, its
// document's at least minDocCoverage, and it contains a word that is not filler
// (when the question has one). The best such sentence is quoted, and up to
// maxQuotes in all follow in score order while they clear the floor, score at
// least minRelative of the first and do not repeat a quote. No quote means
// NoAnswer.
func answer(ctx context.Context, question string, docs []llm.Document) ([]quote, error) {
	units, err := splitDocs(ctx, docs)
	if err != nil {
		return nil, err
	}
	var cands []*unit
	for i := range units {
		u := &units[i]
		if !u.heading && !u.ref && len(u.toks) >= minAnswerTokens && u.words <= longSentenceWords && !nonProse(u, question) {
			cands = append(cands, u)
		}
	}
	kind, subject := readQuestion(question)
	qToks := tokenize(question)
	var qTerms, qSeq []string
	seenQ := map[string]bool{}
	for _, t := range qToks {
		if isStop(t) {
			continue
		}
		qSeq = append(qSeq, t)
		if !seenQ[t] {
			seenQ[t] = true
			qTerms = append(qTerms, t)
		}
	}
	if len(qTerms) == 0 || len(cands) == 0 {
		return nil, nil
	}
	df := make(map[string]int, len(qTerms))
	var totalLen float64
	for _, u := range cands {
		totalLen += float64(len(u.content))
		seen := map[string]bool{}
		for _, t := range u.content {
			if seenQ[t] && !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(cands))
	avgLen := max(totalLen/n, 1)
	idf := func(t string) float64 {
		d := float64(df[t])
		return math.Log(1 + (n-d+0.5)/(d+0.5))
	}
	var mass float64
	hasContent := false
	for _, t := range qTerms {
		mass += weight(t) * idf(t)
		hasContent = hasContent || weight(t) == weightContent
	}

	// The question terms each document holds.
	docTerms := map[int]map[string]bool{}
	for _, u := range cands {
		for _, t := range u.content {
			if seenQ[t] {
				if docTerms[u.doc] == nil {
					docTerms[u.doc] = map[string]bool{}
				}
				docTerms[u.doc][t] = true
			}
		}
	}
	docCoverage := func(doc int) float64 {
		var m float64
		for t := range docTerms[doc] {
			m += weight(t) * idf(t)
		}
		return m / mass
	}

	type scored struct {
		u        *unit
		score    float64
		coverage float64
		content  bool
	}
	all := make([]scored, 0, len(cands))
	for _, u := range cands {
		tf := map[string]int{}
		for _, t := range u.content {
			if seenQ[t] {
				tf[t]++
			}
		}
		if len(tf) == 0 {
			continue
		}
		s := scored{u: u}
		norm := bm25K1 * (1 - bm25B + bm25B*float64(len(u.content))/avgLen)
		var matched float64
		for t, c := range tf {
			f := float64(c)
			s.score += weight(t) * idf(t) * f * (bm25K1 + 1) / (f + norm)
			matched += weight(t) * idf(t)
			s.content = s.content || weight(t) == weightContent
		}
		for i := 1; i < len(qSeq); i++ {
			a, b := qSeq[i-1], qSeq[i]
			if tf[a] > 0 && tf[b] > 0 && adjacent(u.content, a, b) {
				s.score += bigramBonus * min(weight(a), weight(b)) * (idf(a) + idf(b)) / 2
			}
		}
		s.coverage = matched / mass
		s.score *= 1 - covFactor + covFactor*s.coverage
		if u.fragment {
			s.score *= fragmentFactor
		}
		s.score *= kindFactor(kind, subject, u, seenQ)
		all = append(all, s)
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var out []quote
	var chosen []*unit
	best := 0.0
	defer func() { inReadingOrder(docs, out) }()
	for _, s := range all {
		if len(out) == maxQuotes || (len(out) > 0 && s.score < minRelative*best) {
			break
		}
		if s.coverage < minCoverage || (hasContent && !s.content) || docCoverage(s.u.doc) < minDocCoverage || repeats(s.u, chosen) {
			continue
		}
		if len(out) == 0 {
			best = s.score
		}
		chosen = append(chosen, s.u)
		id := docs[s.u.doc].ID
		if id == "" {
			id = "S" + strconv.Itoa(s.u.doc+1)
		}
		out = append(out, quote{doc: s.u.doc, id: id, span: s.u.span})
	}
	return out, nil
}

// Factors of the question's kind (readQuestion) on a sentence's score.
const (
	// numberNearFactor: a count question and a number within numberWindow words
	// of a question term; noNumberFactor: no number at all.
	numberNearFactor = 1.6
	noNumberFactor   = 0.5
	numberWindow     = 8
	// missingTargetFactor: a count question that names what it counts, and a
	// sentence that does not mention it.
	missingTargetFactor = 0.4
	// definesFactor: a definition question and a sentence that says what its
	// subject is.
	definesFactor = 1.8
	// recommendsFactor and notRecommendsFactor: a recommendation question and a
	// sentence that does, or does not, recommend.
	recommendsFactor    = 1.6
	notRecommendsFactor = 0.8
)

// kindFactor weighs sentence u for a question of kind: a count prefers a number
// next to a question term, a definition a sentence defining the subject, a
// recommendation a sentence that recommends.
func kindFactor(kind questionKind, subject string, u *unit, qTerm map[string]bool) float64 {
	switch kind {
	case askQuantity:
		if subject != "" {
			// The question names what it counts: a sentence without it counts
			// something else ("n=881" of another survey).
			target := map[string]bool{stem(strings.ToLower(subject)): true}
			near, any := numberNear(u, target, numberWindow)
			switch {
			case near:
				return numberNearFactor
			case !slices.ContainsFunc(u.toks, func(t string) bool { return target[t] }):
				return missingTargetFactor
			case !any:
				return noNumberFactor
			}
			return 1
		}
		near, any := numberNear(u, qTerm, numberWindow)
		switch {
		case near:
			return numberNearFactor
		case !any:
			return noNumberFactor
		}
	case askDefinition:
		if defines(u, subject) {
			return definesFactor
		}
	case askRecommendation:
		if recommends(u) {
			return recommendsFactor
		}
		return notRecommendsFactor
	}
	return 1
}

// inReadingOrder orders quotes as a reader meets them: by paper, in the order of
// each paper's best quote, then by page, passage and position.
func inReadingOrder(docs []llm.Document, quotes []quote) {
	paperRank := map[string]int{}
	for _, q := range quotes {
		if _, ok := paperRank[docs[q.doc].PaperID]; !ok {
			paperRank[docs[q.doc].PaperID] = len(paperRank)
		}
	}
	slices.SortStableFunc(quotes, func(a, b quote) int {
		da, db := docs[a.doc], docs[b.doc]
		if ra, rb := paperRank[da.PaperID], paperRank[db.PaperID]; ra != rb {
			return ra - rb
		}
		if da.Page != db.Page {
			return da.Page - db.Page
		}
		if a.doc != b.doc {
			return a.doc - b.doc
		}
		return a.span.Start - b.span.Start
	})
}

// adjacent reports whether a and b follow each other in seq.
func adjacent(seq []string, a, b string) bool {
	for i := 1; i < len(seq); i++ {
		if seq[i-1] == a && seq[i] == b {
			return true
		}
	}
	return false
}

// repeats reports whether u says what one of chosen says: one displayed text
// holds the other (overlapping chunks repeat sentences, whole or cut), or four
// fifths of their distinct words are shared.
func repeats(u *unit, chosen []*unit) bool {
	s := display(u.span.Text)
	for _, c := range chosen {
		cs := display(c.span.Text)
		if strings.Contains(cs, s) || strings.Contains(s, cs) || jaccard(c.content, u.content) >= 0.8 {
			return true
		}
	}
	return false
}

func jaccard(a, b []string) float64 {
	sa := map[string]bool{}
	for _, t := range a {
		sa[t] = true
	}
	sb := map[string]bool{}
	inter := 0
	for _, t := range b {
		if !sb[t] {
			sb[t] = true
			if sa[t] {
				inter++
			}
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// answerText renders an answer: NoAnswer, or answerLead and each quote verbatim in
// double quotes followed by its citation, one paragraph each:
//
//	According to the documents:
//
//	"First quoted sentence." [S1]
//
//	"Second quoted sentence." [S3]
func answerText(quotes []quote) []string {
	if len(quotes) == 0 {
		return phrases(NoAnswer)
	}
	out := phrases(answerLead)
	for _, q := range quotes {
		ds := phrases(`"` + q.span.Text + `" [` + q.id + `]`)
		ds[0] = "\n\n" + ds[0]
		out = append(out, ds...)
	}
	return out
}
