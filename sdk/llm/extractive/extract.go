package extractive

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
)

// maxPerType bounds the extraction items of one type.
const maxPerType = 3

// minCueScore is the cue score a sentence needs to be classified at all.
const minCueScore = 1.5

// cue is a phrase, matched at the start of a word in a sentence's lowercase
// words (plainWords: hyphens and punctuation read as spaces, line-end hyphenation
// undone), with the weight it adds to its type.
type cue struct {
	phrase string
	w      float64
}

// extractCues are the cue lists of the extraction types, in the order items are
// output. A phrase is a word prefix: "limitation" matches "limitations",
// "improv" matches "improved".
var extractCues = []struct {
	typ     string
	cues    []cue
	pattern *regexp.Regexp // raw-text cue about numbers, weight patternWeight
}{
	{typ: llm.ItemClaim, cues: []cue{
		{"we argue", 2}, {"we claim", 2}, {"we propose", 2}, {"we hypothes", 2}, {"we believe", 1.5},
		{"we present", 1.5}, {"we introduce", 1.5}, {"we conclude", 2}, {"our contribution", 2},
		{"contribution", 1}, {"in this paper", 1}, {"in this work", 1}, {"this paper", 1},
		{"position paper", 1.5}, {"key insight", 1.5}, {"we show that", 1}, {"suggest that", 1},
		{"indicate that", 1}, {"demonstrate that", 1}, {"is effective", 1}, {"are effective", 1},
		{"conclusion", 1}, {"important", 0.5}, {"should", 0.5},
	}},
	{typ: llm.ItemMethod, cues: []cue{
		{"we use", 1.5}, {"we train", 1.5}, {"we apply", 1.5}, {"we employ", 1.5}, {"we adopt", 1.5},
		{"we design", 1.5}, {"we implement", 1.5}, {"we compute", 1.5}, {"we estimate", 1.5},
		{"we model", 1}, {"we fine tune", 1.5}, {"fine tun", 1}, {"algorithm", 1}, {"architecture", 1},
		{"procedure", 1}, {"pipeline", 1}, {"framework", 0.5}, {"was conducted", 1.5},
		{"were conducted", 1.5}, {"conducted", 1}, {"analysed", 1}, {"analyzed", 1},
		{"regression", 1}, {"randomi", 1}, {"focus group", 1.5}, {"interview", 1}, {"protocol", 0.5},
		{"by using", 1}, {"based on", 0.5}, {"loss function", 1}, {"trained", 1}, {"encoder", 0.5},
		{"method", 0.5}, {"approach", 0.5}, {"qualitative", 0.5}, {"quantitative", 0.5},
		{"measured", 1}, {"simulat", 1}, {"optimi", 0.5},
	}},
	{typ: llm.ItemDataset, cues: []cue{
		{"dataset", 2}, {"data set", 2}, {"corpus", 2}, {"corpora", 2}, {"benchmark", 1.5},
		{"training set", 2}, {"test set", 2}, {"validation set", 2}, {"participant", 1.5},
		{"patient", 0.5}, {"subject", 0.5}, {"cohort", 1.5}, {"recruited", 2}, {"enrolled", 2},
		{"collected", 1.5}, {"annotated", 1.5}, {"questionnaire", 1}, {"survey", 1}, {"record", 0.5},
		{"database", 1}, {"consist", 1}, {"sample of", 1}, {"data", 0.5},
	}, pattern: regexp.MustCompile(`(?i)\bn\s?=\s?\d|\b\d[\d,]*\s(participants|patients|subjects|documents|sentences|images|papers|articles|examples|samples|questions|tweets|records|pairs)\b`)},
	{typ: llm.ItemResult, cues: []cue{
		{"outperform", 2}, {"results show", 2}, {"results indicate", 2}, {"results suggest", 1.5},
		{"we find", 2}, {"we found", 2}, {"we observe", 2}, {"found that", 1.5}, {"showed that", 1.5},
		{"show that", 1}, {"significant", 1.5}, {"higher than", 1.5}, {"lower than", 1.5},
		{"better than", 1.5}, {"improv", 1}, {"accuracy", 1}, {"f1", 1}, {"increas", 1},
		{"decreas", 1}, {"reduc", 1}, {"achiev", 1}, {"associated with", 1}, {"correlat", 1},
		{"state of the art", 1}, {"compared to", 0.5}, {"compared with", 0.5},
	}, pattern: resultPattern},
	{typ: llm.ItemLimitation, cues: []cue{
		{"limitation", 3}, {"drawback", 3}, {"weakness", 3}, {"shortcoming", 3}, {"caveat", 3},
		{"future work", 2.5}, {"future research", 2}, {"small sample", 2.5}, {"not generaliz", 2.5},
		{"not generalis", 2.5}, {"generalizab", 1.5}, {"generalisab", 1.5}, {"limited", 1.5},
		{"fail", 1.5}, {"unable", 1.5}, {"not able", 1.5}, {"lack", 1.5}, {"bias", 1.5},
		{"unclear", 1.5}, {"however", 1}, {"does not", 1}, {"do not", 1}, {"cannot", 1},
		{"remain", 1}, {"challeng", 1}, {"difficult", 1}, {"restricted", 1}, {"doubt", 1},
		{"although", 0.5}, {"only", 0.5},
	}},
}

// patternWeight is the weight of a type's raw-text pattern cue.
const patternWeight = 1.5

// selfPhrases mark a sentence about the paper's own work; they add selfWeight to
// the claim and limitation scores, so that "its limitations" in a study's
// discussion outweighs "functional limitation" in its background.
var selfPhrases = []string{"we", "our", "this study", "this paper", "this work", "present study", "current study", "the author"}

const selfWeight = 1.0

// typePriority breaks ties between types: the more specific cue lists win.
var typePriority = map[string]int{
	llm.ItemLimitation: 5, llm.ItemResult: 4, llm.ItemDataset: 3, llm.ItemMethod: 2, llm.ItemClaim: 1,
}

// classify returns the extraction type of a sentence, its cue score and how sure
// the label is: the type whose cues (plus selfWeight for claims and limitations
// about the paper's own work) add up to the most, ties to typePriority, or ""
// when no type reaches minCueScore. The confidence is the winning type's share of
// all the cue weight found (selfWeight left out) (a sentence with result and method cues alike is a
// coin toss), saturated by its size (one weak cue is weak evidence):
// share × score / (score + 1.5).
func classify(u *unit) (string, float64, float64) {
	s := wordString(u.plain)
	self := false
	for _, p := range selfPhrases {
		self = self || strings.Contains(s, " "+p+" ")
	}
	best, bestScore, bestCues, total := "", 0.0, 0.0, 0.0
	for _, ec := range extractCues {
		var cues float64
		for _, c := range ec.cues {
			if strings.Contains(s, " "+c.phrase) {
				cues += c.w
			}
		}
		if ec.pattern != nil && hasDigit(u.span.Text) && ec.pattern.MatchString(u.span.Text) {
			cues += patternWeight
		}
		total += cues
		score := cues
		if self && (ec.typ == llm.ItemClaim || ec.typ == llm.ItemLimitation) {
			score += selfWeight
		}
		if score > bestScore || (score == bestScore && best != "" && typePriority[ec.typ] > typePriority[best]) {
			best, bestScore, bestCues = ec.typ, score, cues
		}
	}
	if bestScore < minCueScore || total == 0 {
		return "", 0, 0
	}
	return best, bestScore, bestCues / total * bestScore / (bestScore + 1.5)
}

// extract classifies the candidate sentences (as summarize chooses them) by their
// cue phrases (extractCues) into claims, methods, datasets, results and
// limitations, and keeps up to maxPerType of each, ranked by cue score × (0.5 +
// the sentence's rank score), without repeats. Items come out type by type in the
// order of extractCues; Quote and Content are the verbatim sentence, Confidence
// classify's.
func extract(ctx context.Context, docs []llm.Document) (*llm.Extraction, error) {
	out := &llm.Extraction{Items: []llm.ExtractionItem{}}
	cands, r, err := rankedProse(ctx, docs)
	if err != nil || len(cands) == 0 {
		return out, err
	}
	types := make([]string, len(cands))
	value := make([]float64, len(cands))
	conf := make([]float64, len(cands))
	for i, u := range cands {
		var cs float64
		types[i], cs, conf[i] = classify(u)
		value[i] = cs * (0.5 + r.scores[i])
	}
	for _, ec := range extractCues {
		var idx []int
		for i, t := range types {
			if t == ec.typ {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case value[a] > value[b]:
				return -1
			case value[a] < value[b]:
				return 1
			}
			return compareUnits(cands[a], cands[b])
		})
		var kept []int
		for _, i := range idx {
			if len(kept) == maxPerType {
				break
			}
			if !r.redundant(i, kept) {
				kept = append(kept, i)
			}
		}
		for _, i := range kept {
			s := strings.TrimSpace(cands[i].span.Text)
			c := math.Round(conf[i]*100) / 100
			out.Items = append(out.Items, llm.ExtractionItem{Type: ec.typ, Content: s, Quote: s, Confidence: &c})
		}
	}
	return out, nil
}
