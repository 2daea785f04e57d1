package extractive

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/llm"
)

// Sentence lengths, in words, the JSON tasks read. Shorter ones are labels and
// fragments; longer ones are usually text the splitter could not cut (tables,
// front matter).
var (
	summaryProse = proseOpts{minWords: 8, maxWords: 60}
	relaxedProse = proseOpts{minWords: 4, maxWords: longSentenceWords}
)

// maxFindings bounds Summary.KeyFindings.
const maxFindings = 5

// resultPhrases are the result cues of key findings, matched at the start of a
// word in the sentence's lowercase words (plainWords; so "improv" matches
// "improved" and "improvement"); resultPattern matches numbers that report
// results.
var resultPhrases = []string{
	"we show", "we find", "we found", "we demonstrate", "we observe", "we report",
	"results show", "results indicate", "results suggest", "results demonstrate", "results reveal",
	"show that", "showed that", "found that", "indicate that", "indicated that", "demonstrate that",
	"outperform", "improv", "significant", "increas", "decreas", "reduc", "achiev",
	"higher than", "lower than", "better than", "worse than", "more than", "less than",
	"accuracy", "state of the art", "effective", "associated with", "correlat",
}

// resultPattern: a percentage, a decimal number, a p-value, or a ratio ("2x",
// "3-fold").
var resultPattern = regexp.MustCompile(`\d\s?%|\d+\.\d+|\bp\s?[<=>≤]\s?0?\.\d|\b\d+(\.\d+)?\s?(x|×|-fold|fold)\b`)

// resultCues counts the result cues of a sentence: one per matched phrase, one for
// any result number.
func resultCues(u *unit) int {
	n := countPhrases(u.plain, resultPhrases)
	if hasDigit(u.span.Text) && resultPattern.MatchString(u.span.Text) {
		n++
	}
	return n
}

// wordString joins tokens as " a b c " for word-start phrase matching.
func wordString(toks []string) string {
	return " " + strings.Join(toks, " ") + " "
}

// countPhrases counts how many of phrases occur at a word start in toks.
func countPhrases(toks []string, phrases []string) int {
	s := wordString(toks)
	n := 0
	for _, p := range phrases {
		if strings.Contains(s, " "+p) {
			n++
		}
	}
	return n
}

// summarize makes an extractive Summary: the candidate sentences (prose of 8 to
// 60 words outside references, captions, equations and front matter; 4 to 120
// words when that leaves none) are ranked by rank. The summary is the top 3 to 5
// sentences (3 under 15 candidates, 4 under 30, else 5) that do not repeat one
// another, in document order; the TL;DR is the best of them. Key findings are up
// to maxFindings sentences with result cues (resultCues), ranked by score × (1 +
// 0.5 × cues, at most 3 counted), topped up with the best-ranked sentences to at
// least three. TLDR and Summary are in display form (white space collapsed,
// line-end hyphenation undone); a finding's Text and Quote are the verbatim
// sentence.
func summarize(ctx context.Context, docs []llm.Document) (*llm.Summary, error) {
	out := &llm.Summary{KeyFindings: []llm.Finding{}}
	cands, r, err := rankedProse(ctx, docs)
	if err != nil || len(cands) == 0 {
		return out, err
	}
	k := 5
	switch {
	case len(cands) < 15:
		k = 3
	case len(cands) < 30:
		k = 4
	}
	var chosen []int
	for _, i := range r.order {
		if len(chosen) == k {
			break
		}
		if !r.redundant(i, chosen) {
			chosen = append(chosen, i)
		}
	}
	out.TLDR = display(r.units[tldr(r, chosen)].span.Text)
	inOrder := slices.Clone(chosen)
	slices.SortFunc(inOrder, func(a, b int) int { return compareUnits(r.units[a], r.units[b]) })
	parts := make([]string, len(inOrder))
	for i, j := range inOrder {
		parts[i] = display(r.units[j].span.Text)
	}
	out.Summary = strings.Join(parts, " ")

	cues := make([]int, len(cands))
	var withCues []int
	for _, i := range r.order {
		if cues[i] = resultCues(r.units[i]); cues[i] > 0 {
			withCues = append(withCues, i)
		}
	}
	slices.SortStableFunc(withCues, func(a, b int) int {
		sa := r.scores[a] * (1 + 0.5*float64(min(cues[a], 3)))
		sb := r.scores[b] * (1 + 0.5*float64(min(cues[b], 3)))
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	var findings []int
	for _, i := range withCues {
		if len(findings) == maxFindings {
			break
		}
		if complete(r.units[i]) && !r.redundant(i, findings) {
			findings = append(findings, i)
		}
	}
	for _, i := range r.order {
		if len(findings) >= 3 {
			break
		}
		if complete(r.units[i]) && !slices.Contains(findings, i) && !r.redundant(i, findings) {
			findings = append(findings, i)
		}
	}
	for _, i := range findings {
		s := r.units[i].span.Text
		out.KeyFindings = append(out.KeyFindings, llm.Finding{Text: s, Quote: s})
	}
	return out, nil
}

// tldr picks the summary's short line: the best-ranked complete sentence of the
// abstract, else of the conclusion, else of the introduction, else of the whole
// ranking, else the best of the chosen summary sentences; a sentence that opens
// with a connective ("However", "This", "Here") leans on the one before it and is
// passed over. A researcher reads it as the paper's own one-line
// claim, so it must be a whole sentence from where papers state what they did.
func tldr(r *ranking, chosen []int) int {
	for _, sec := range []string{secAbstract, secConclusion, secIntro, ""} {
		for _, i := range r.order {
			u := r.units[i]
			if (sec == "" || u.section == sec) && complete(u) && !connectiveRE.MatchString(u.span.Text) {
				return i
			}
		}
	}
	return chosen[0]
}

// complete reports whether u reads as a whole sentence on its own: it opens with a
// capital letter (not a bracket, a list marker such as "(i)" or a lowercase word)
// and ends with a full stop, a question or an exclamation mark, closing quotes or
// brackets allowed after it; a caption, a sentence cut at a page or column edge, or
// text after a figure label fails.
func complete(u *unit) bool {
	s := strings.TrimSpace(u.span.Text)
	first, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(first) {
		return false
	}
	s = strings.TrimRight(s, `"')]}’”»`)
	last, _ := utf8.DecodeLastRuneInString(s)
	if last != '.' && last != '!' && last != '?' {
		return false
	}
	return !embeddedCaptionRE.MatchString(u.span.Text)
}

// embeddedCaptionRE finds a figure or table label inside a sentence, where a
// caption ran into the text around it in extraction ("... the content Figure 2:
// CMB spectrum ...").
var embeddedCaptionRE = regexp.MustCompile(`\b(?:Figure|Fig\.|Table)\s*\d+[a-z]?\s*[:|]`)

// compareUnits orders units as they appear in the request.
func compareUnits(a, b *unit) int {
	if a.doc != b.doc {
		return a.doc - b.doc
	}
	return a.span.Start - b.span.Start
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }
