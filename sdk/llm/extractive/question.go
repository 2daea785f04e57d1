package extractive

import (
	"regexp"
	"strings"
)

// questionKind is what a question asks for, read from its wording. Each kind
// prefers the sentences that answer that kind of question: a count wants a number
// beside the counted thing, a definition wants a sentence that says what the
// thing is, a recommendation wants a sentence that recommends.
type questionKind int

const (
	askPlain questionKind = iota
	askQuantity
	askDefinition
	askRecommendation
)

var (
	quantityQ = regexp.MustCompile(`(?i)\b(how (many|much|long|large|big|often|old|far|fast|small)|what (percentage|percent|proportion|fraction|share|ratio|number|amount|size)|what was the (size|number|rate)|number of|sample size|to what extent)\b`)
	// definitionQ captures the subject: "What is PaperMage?", "What are
	// trace trees?", "Define X", "What does X stand for / mean".
	definitionQ = regexp.MustCompile(`(?i)^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(.+?)\s*\??\s*$|^\s*define\s+(.+?)\s*[.?]?\s*$|^\s*what\s+(?:does|do)\s+(.+?)\s+(?:mean|stand for|refer to)\s*\??\s*$`)
	// quantityTarget captures what a count counts: "how many participants",
	// "how much memory"; costQ a price asked for.
	quantityTarget = regexp.MustCompile(`(?i)\bhow (?:many|much)\s+([\p{L}][\p{L}\-]+)`)
	costQ          = regexp.MustCompile(`(?i)\b(cost|costs|price|priced)\b`)
	recommendQ     = regexp.MustCompile(`(?i)\b(recommend\w*|suggest\w*|advi[cs]e\w*|should|guideline\w*|best practice\w*|propose\w* (?:for|to))\b`)
)

// readQuestion returns the kind of a question and its subject: for a definition
// the words of the thing defined, as typed; for a count the word counted ("how
// many participants": "participants"; a price asked for: "cost"), or "" when the
// question does not name it.
func readQuestion(q string) (questionKind, string) {
	if m := definitionQ.FindStringSubmatch(q); m != nil {
		subject := strings.TrimSpace(m[1] + m[2] + m[3])
		// "What is the number of ..." is a count, not a definition.
		if !quantityQ.MatchString(q) && subject != "" {
			return askDefinition, subject
		}
	}
	switch {
	case quantityQ.MatchString(q):
		if m := quantityTarget.FindStringSubmatch(q); m != nil && !isStop(strings.ToLower(m[1])) {
			return askQuantity, m[1]
		}
		return askQuantity, ""
	case costQ.MatchString(q):
		return askQuantity, "cost"
	case recommendQ.MatchString(q):
		return askRecommendation, ""
	}
	return askPlain, ""
}

// numberWords are the spelled-out numbers a count is written with.
var numberWords = wordSet(`one two three four five six seven eight nine ten eleven twelve
	thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty
	sixty seventy eighty ninety hundred hundreds thousand thousands million millions billion
	dozen dozens half quarter third twice`)

// numberNear reports whether the sentence u holds a number within window words of
// one of the terms qTerm, and whether it holds a number at all.
func numberNear(u *unit, qTerm map[string]bool, window int) (near, any bool) {
	var nums, terms []int
	for i, t := range u.toks {
		if allDigits(t) || numberWords[t] {
			nums = append(nums, i)
		}
		if qTerm[t] {
			terms = append(terms, i)
		}
	}
	for _, n := range nums {
		for _, q := range terms {
			if n-q <= window && q-n <= window {
				return true, true
			}
		}
	}
	return false, len(nums) > 0
}

// recommendCues are the words of a sentence that recommends.
var recommendCues = []string{
	"recommend", "suggest", "should", "advis", "advice", "encourag", "must ", "need to", "needs to",
	"best practice", "guideline", "we urge", "it is important to", "it is essential", "ought to",
	"is advisable", "prefer", "we call for",
}

// recommends reports whether the sentence u recommends something.
func recommends(u *unit) bool {
	return countPhrases(u.plain, recommendCues) > 0
}

// defines reports whether the sentence says what subject is: "X is a ...", "X,
// a ...", "X (...) is ...", "X refers to / denotes / stands for ...", "we
// present/introduce X", "X: a ...". The subject is matched as typed, case and
// white space aside.
func defines(u *unit, subject string) bool {
	words := strings.Fields(subject)
	if len(words) == 0 || len(words) > 8 {
		return false
	}
	for i, w := range words {
		words[i] = regexp.QuoteMeta(strings.Trim(w, `"'“”‘’`))
	}
	x := strings.Join(words, `[\s\-]+`)
	re, err := regexp.Compile(`(?i)(?:\b|^)` + x + `(?:\b|$)\s*(?:\([^)]{0,80}\)\s*)?(?:,\s*(?:an?|the)\s|:\s*(?:an?|the)?\s*\w|(?:is|are|was|were)\s+(?:an?|the|defined|called|designed|used)\b|refers?\s+to\b|denotes?\b|stands?\s+for\b|means\b|consists?\s+of\b)|(?:we|this paper|this work)\s+(?:present|introduce|propose|describe|release|build|develop)s?\s+(?:an?\s+|the\s+)?` + x + `\b`)
	if err != nil {
		return false
	}
	return re.MatchString(display(u.span.Text))
}

var (
	codeLine   = regexp.MustCompile(`(?m)^\s*(?:import\s+\w|from\s+[\w.]+\s+import\b|def\s+\w+\(|class\s+\w+[(:]|>>>|\$\s|pip\s+install|#include|return\s|for\s+\w+\s+in\s+[\w.]+\s*:|[\w.]+\s*=\s*[\w.]+\()|\bprint\(`)
	codeCall   = regexp.MustCompile(`\w\.\w+\(|\w\(\)|==|!=|->|::|\w_\w+\s*=|\[\s*\d+\s*\]\s*=`)
	figureQ    = regexp.MustCompile(`(?i)\b(figure|fig|table|caption|chart|plot)\b`)
	codeSymbol = "(){}[]=;<>_\\/"
)

// nonProse reports whether the sentence u is not prose a reader would quote as an
// answer: a piece of program code, a table row or a caption (captions stay when
// the question asks about a figure or a table).
func nonProse(u *unit, question string) bool {
	s := u.span.Text
	if codeLine.MatchString(s) || len(codeCall.FindAllStringIndex(s, 3)) >= 2 {
		return true
	}
	visible, symbols := 0, 0
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\t' {
			continue
		}
		visible++
		if strings.ContainsRune(codeSymbol, r) {
			symbols++
		}
	}
	if visible > 0 && symbols*100 > visible*8 {
		return true
	}
	// A table row: most of its words are numbers.
	fields := strings.Fields(s)
	numeric := 0
	for _, f := range fields {
		f = strings.Trim(f, "%()[],;±")
		if f != "" && strings.IndexFunc(f, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' && r != '-' }) < 0 {
			numeric++
		}
	}
	if len(fields) >= 6 && numeric*100 >= len(fields)*40 {
		return true
	}
	if !figureQ.MatchString(question) && (captionRE.MatchString(s) || embeddedCaptionRE.MatchString(s)) {
		return true
	}
	return false
}
