package extractive

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
)

// noveltyPhrases are the cues of the (weak) novelty estimate.
var noveltyPhrases = []string{
	"novel", "new", "first", "we propose", "we introduce", "we present", "state of the art",
	"outperform", "unlike", "for the first time", "previously unexplored", "open source",
}

// relevance judges the documents against the user's interests (the question) by
// lexical overlap of normalised words:
//
//   - coverage c: the share of the interests' words (function words left out,
//     each weighted by its fixed weight) found anywhere in the documents, where a
//     pair of adjacent interest words found side by side adds half the lower of
//     their weights to both sides;
//   - density d: the share of the documents' words (function words left out) that
//     are interest words, saturated as d / (d + 0.02);
//   - relevance = 1 + round(9 × (0.75·c + 0.25·d)), from 1 to 10.
//
// Novelty cannot be judged without a corpus; it is a weak estimate from novelty
// cue phrases (noveltyPhrases): 5 + round(5 × k / (k + 4)) for k distinct cues,
// so 5 means "no sign either way". Reason names the matched interest words,
// lowercased.
func relevance(ctx context.Context, question string, docs []llm.Document) (*llm.Relevance, error) {
	units, err := splitDocs(ctx, docs)
	if err != nil {
		return nil, err
	}
	docWords := map[string]bool{}
	docPairs := map[string]bool{}
	var allWords []string
	contentTotal := 0
	for i := range units {
		u := &units[i]
		if u.ref {
			continue
		}
		for j, t := range u.content {
			docWords[t] = true
			if j > 0 {
				docPairs[u.content[j-1]+" "+t] = true
			}
		}
		contentTotal += len(u.content)
		allWords = append(allWords, u.plain...)
		allWords = append(allWords, "\x00") // no phrase spans two sentences
	}

	// The interest words (stems, each once, with the first way the question
	// spells each) and their sequence.
	var interest []string
	isInterest := map[string]bool{}
	surface := map[string]string{}
	var seq []string
	for _, w := range strings.FieldsFunc(question, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		var part []string
		for _, p := range plainWords(w) {
			t := stem(p)
			if isStop(t) {
				continue
			}
			part = append(part, t)
			if !isInterest[t] {
				isInterest[t] = true
				surface[t] = p
				interest = append(interest, t)
			}
		}
		seq = append(seq, part...)
		seq = append(seq, "") // no pair spans two interests
	}
	if len(interest) == 0 {
		return &llm.Relevance{Relevance: 1, Novelty: 5, Reason: "The interests name no words to look for."}, nil
	}
	var total, found float64
	var matched []string
	for _, t := range interest {
		total += weight(t)
		if docWords[t] {
			found += weight(t)
			matched = append(matched, surface[t])
		}
	}
	for i := 1; i < len(seq); i++ {
		a, b := seq[i-1], seq[i]
		if a == "" || b == "" {
			continue
		}
		w := bigramScale * min(weight(a), weight(b))
		total += w
		if docPairs[a+" "+b] {
			found += w
		}
	}
	c := found / total
	hits := 0
	for i := range units {
		if units[i].ref {
			continue
		}
		for _, t := range units[i].content {
			if isInterest[t] {
				hits++
			}
		}
	}
	d := 0.0
	if contentTotal > 0 {
		d = float64(hits) / float64(contentTotal)
		d /= d + 0.02
	}
	rel := 1 + int(math.Round(9*(0.75*c+0.25*d)))
	k := 0
	s := wordString(allWords)
	for _, p := range noveltyPhrases {
		if strings.Contains(s, " "+p+" ") {
			k++
		}
	}
	nov := 5 + int(math.Round(5*float64(k)/float64(k+4)))
	reason := "The documents share none of the interest words."
	if len(matched) > 0 {
		reason = fmt.Sprintf("The documents share %d of %d interest words: %s.", len(matched), len(interest), strings.Join(matched, ", "))
	}
	return &llm.Relevance{Relevance: min(max(rel, 1), 10), Novelty: min(max(nov, 1), 10), Reason: reason}, nil
}
