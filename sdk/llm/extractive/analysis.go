package extractive

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/llm"
)

// unit is one sentence of one document, with what the tasks score it by.
type unit struct {
	doc      int      // index of the document in the request
	span     Span     // the sentence, verbatim
	plain    []string // plainWords(span.Text), for cue phrases
	toks     []string // plain stemmed, for scoring
	content  []string // toks without function words
	section  string   // section kind (sec... constants) the sentence is in
	heading  bool     // the sentence is a section heading or a running header
	ref      bool     // in a references section, or reads like a reference
	back     bool     // in the acknowledgements (answers may quote it, summaries not)
	fragment bool     // a piece of a sentence cut by the document's edge
	pos      float64  // position in the request: 0 first sentence, 1 last
	words    int      // white-space separated words
}

// splitDocs splits every document into sentence units (line statistics, such as
// the running headers, are taken over all the documents), tracking the section each
// sentence is in: the document's section attribute when it has one, else the last
// heading line seen in its text, starting from where the previous document left
// off when both belong to the same paper (chunks of one paper come in order).
//
// The host cuts papers into overlapping chunks at word boundaries, so a document
// may start or end inside a sentence. Such pieces are marked fragments: a first
// sentence that starts with a lowercase letter or is the tail of a sentence of the
// previous document, and a last sentence without final punctuation (when the
// document has more than one sentence).
func splitDocs(ctx context.Context, docs []llm.Document) ([]unit, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	lines := lineStats(texts...)
	var units []unit
	section := secNone
	prevStart := 0 // first unit of the previous document
	for di, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch {
		case d.Section != "":
			section = sectionOfAttr(d.Section)
		case di == 0 || docs[di-1].PaperID != d.PaperID:
			section = secNone
		}
		first := len(units)
		for _, sp := range sentences(d.Text, lines) {
			u := unit{doc: di, span: sp, section: section, words: wordCount(sp.Text)}
			if kind, ok := headingKind(sp.Text); ok {
				section, u.heading, u.section = kind, true, kind
			} else if numberedHeading(sp.Text) || lines.repeated[sp.Text] {
				u.heading = true
			}
			u.plain = plainWords(sp.Text)
			u.toks = make([]string, len(u.plain))
			for i, w := range u.plain {
				u.toks[i] = stem(w)
			}
			u.content = make([]string, 0, len(u.toks))
			for _, t := range u.toks {
				if !isStop(t) {
					u.content = append(u.content, t)
				}
			}
			u.ref = section == secReferences || looksLikeReference(sp.Text)
			u.back = section == secBack
			units = append(units, u)
		}
		if first < len(units) {
			head := &units[first]
			r, _ := utf8.DecodeRuneInString(head.span.Text)
			head.fragment = unicode.IsLower(r) || (di > 0 && tailOf(head, units[prevStart:first]))
			if last := &units[len(units)-1]; len(units)-first > 1 && !terminated(last.span.Text) {
				last.fragment = true
			}
		}
		prevStart = first
	}
	for i := range units {
		if len(units) > 1 {
			units[i].pos = float64(i) / float64(len(units)-1)
		}
	}
	return units, nil
}

// tailOf reports whether u's text ends one of the sentences in prev (chunks
// overlap, so a chunk's first sentence is often the end of one the previous chunk
// holds whole).
func tailOf(u *unit, prev []unit) bool {
	s := display(u.span.Text)
	for i := range prev {
		if p := display(prev[i].span.Text); len(p) > len(s) && strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}

// terminated reports whether s ends with sentence punctuation, possibly followed
// by closing quotes or brackets.
func terminated(s string) bool {
	s = strings.TrimRight(s, `"')]}’”» `)
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?…", r)
}

// sectionOfAttr reads a document's section attribute: a known heading gives its
// kind; QASPER-style nested names ("Proposed Method ::: Polarity Function") are
// read by their first part; anything else is secOther.
func sectionOfAttr(attr string) string {
	first, _, _ := strings.Cut(attr, ":::")
	if kind, ok := headingKind(first); ok {
		return kind
	}
	return secOther
}

var (
	refLead  = regexp.MustCompile(`^\s*(\[\d+\]\s+\p{Lu}|\d{1,3}\.\s+\p{Lu}[\p{L}'’-]*,?\s+(\p{Lu}\.|\p{Lu}[\p{L}'’-]+,)|(?i:in proceedings|proceedings of|in:\s))`)
	refPages = regexp.MustCompile(`\d+\s?\(\d+\)\s?:\s?\d+`)
	// refVenues are lowercase markers of a venue or of pages.
	refVenues = []string{"pp.", "vol.", "proc.", "proceedings", "journal", "conference", "doi", "arxiv", "preprint", " press", "in: "}
)

// looksLikeReference reports whether a sentence reads like an entry of a
// reference list: it starts with "[12] Smith", "12. Smith J," or "In
// Proceedings"; or it is a list of names or keywords (nameList); or it has at
// least two of: a year as references print it ("(2019)", "2019;"), two or more
// author initials ("J. Smith", "Smith, J."), a venue or page marker ("Proc.",
// "Journal", "pp.", "12(3):45").
func looksLikeReference(s string) bool {
	if refLead.MatchString(s) || nameList(s) {
		return true
	}
	n := 0
	if refYear(s) {
		n++
	}
	if initials(s) >= 2 {
		n++
	}
	if n == 0 {
		return false
	}
	lower := strings.ToLower(s)
	for _, v := range refVenues {
		if strings.Contains(lower, v) {
			n++
			break
		}
	}
	if n < 2 && strings.Contains(s, ":") && refPages.MatchString(s) {
		n++
	}
	return n >= 2
}

// refYear reports whether s holds a year as a reference prints it: 19xx or 20xx
// (with an optional letter, "2019a") in parentheses or followed by ";", ".", ","
// or ":".
func refYear(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if !(s[i] == '1' && s[i+1] == '9' || s[i] == '2' && s[i+1] == '0') || !allDigits(s[i:i+4]) {
			continue
		}
		if i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			continue
		}
		j := i + 4
		if j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		if j < len(s) && (s[j] >= '0' && s[j] <= '9') {
			continue
		}
		if i > 0 && s[i-1] == '(' && j < len(s) && s[j] == ')' {
			return true
		}
		if j < len(s) && strings.IndexByte(";.,:", s[j]) >= 0 {
			return true
		}
	}
	return false
}

// initials counts the author initials of s: a capital letter followed by a
// point, not preceded by a letter ("J. Smith", "Smith, J.").
func initials(s string) int {
	n := 0
	prevLetter := false
	for i, r := range s {
		if unicode.IsUpper(r) && !prevLetter {
			if j := i + utf8.RuneLen(r); j < len(s) && s[j] == '.' {
				n++
			}
		}
		prevLetter = unicode.IsLetter(r)
	}
	return n
}

// nameList reports whether s is mostly capitalised words: at least 70% of its
// words, or at least half with three commas or more (author lists, keyword lists,
// titles).
func nameList(s string) bool {
	words, caps := 0, 0
	for _, w := range strings.Fields(s) {
		r, _ := utf8.DecodeRuneInString(strings.TrimLeft(w, `([{"'“‘`))
		if !unicode.IsLetter(r) {
			continue
		}
		words++
		if unicode.IsUpper(r) {
			caps++
		}
	}
	if words < 4 {
		return false
	}
	return caps*10 >= words*7 || (caps*2 >= words && strings.Count(s, ",") >= 3)
}

var (
	captionRE    = regexp.MustCompile(`^(?i:figure|fig\.|table|tab\.|algorithm|listing|scheme|chart|plate)\s*[A-Z]?\d+[a-z]?\s*[.:|—–-]`)
	mathSymbols  = "=+×÷∑∏∫√∂∇±≤≥≈≠∈∉∀∃→←↔^_{}\\|<>"
	connectiveRE = regexp.MustCompile(`^(?i:however|moreover|furthermore|thus|therefore|hence|this|these|those|it|they|such|also|additionally|in addition|in contrast|on the other hand|similarly|finally|then|here|there)\b`)
)

// frontMatterMarks are lowercase marks of front matter and licence text.
var frontMatterMarks = []string{"@", "©", "http://", "https://", "www.", "copyright", "license", "licence",
	"all rights reserved", "correspondence", "arxiv:"}

// frontMatter reports whether s reads like front matter: an e-mail address, a
// URL, a licence or copyright line, a DOI or ISSN, "Received 9 November".
func frontMatter(s string) bool {
	lower := strings.ToLower(s)
	for _, m := range frontMatterMarks {
		if strings.Contains(lower, m) {
			return true
		}
	}
	for _, w := range []string{"doi", "issn"} {
		for i := strings.Index(lower, w); i >= 0; {
			end := i + len(w)
			if (i == 0 || !isWordByte(lower[i-1])) && (end == len(lower) || !isWordByte(lower[end])) {
				return true
			}
			j := strings.Index(lower[end:], w)
			if j < 0 {
				break
			}
			i = end + j
		}
	}
	for _, w := range []string{"received ", "accepted "} {
		if i := strings.Index(lower, w); i >= 0 && i+len(w) < len(lower) && lower[i+len(w)] >= '0' && lower[i+len(w)] <= '9' {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// proseOpts bounds the sentences a task reads.
type proseOpts struct {
	minWords, maxWords int
}

// prose reports whether u is a sentence worth quoting in a summary, an extraction
// or a card: not a heading, not a reference, not in the acknowledgements, not a
// fragment, not starting with a
// lowercase letter, not a figure or table caption, not front matter (e-mail
// addresses, licences, DOIs, dates of receipt), not an equation (math symbols, or
// fewer than 60% letters among its visible characters), and between o.minWords
// and o.maxWords words long.
func prose(u *unit, o proseOpts) bool {
	if u.heading || u.ref || u.back || u.fragment || u.words < o.minWords || u.words > o.maxWords {
		return false
	}
	s := u.span.Text
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsLower(r) {
		return false
	}
	if captionRE.MatchString(s) || frontMatter(s) {
		return false
	}
	letters, visible, symbols := 0, 0, 0
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			continue
		case unicode.IsLetter(r):
			letters++
		case strings.ContainsRune(mathSymbols, r):
			symbols++
		}
		visible++
	}
	return letters*10 >= visible*6 && symbols*20 <= letters
}

// vector is a sparse term vector.
type vector map[string]float64

func (v vector) normalize() vector {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	if sum > 0 {
		inv := 1 / math.Sqrt(sum)
		for k := range v {
			v[k] *= inv
		}
	}
	return v
}

// dot is the dot product (the cosine, for normalised vectors).
func (v vector) dot(w vector) float64 {
	if len(w) < len(v) {
		v, w = w, v
	}
	var s float64
	for k, x := range v {
		s += x * w[k]
	}
	return s
}

// ranking is the centroid ranking of a set of candidate sentences.
type ranking struct {
	units  []*unit
	vecs   []vector  // tf-idf vectors, normalised
	scores []float64 // centroid cosine times the priors
	order  []int     // indices of units by descending score
}

// centroidTerms is how many of the heaviest terms the centroid keeps, as in
// centroid-based summarisation (Radev et al.): the topic signature.
const centroidTerms = 40

// rank scores candidate sentences by the cosine of their tf-idf vector (idf from
// the candidates themselves, times the fixed word weight) with the centroid of all
// of them, times a position prior: 1.3 in an abstract, 1.2 in a conclusion, 1.15
// in an introduction, and 1 + 0.2·(1 - position) everywhere, so earlier text wins
// ties. Sentences opening with a connective or a pronoun ("However", "This",
// "They") read badly alone and score 0.75 times; sentences under 12 words 0.85.
func rank(cands []*unit) *ranking {
	r := &ranking{units: cands, vecs: make([]vector, len(cands)), scores: make([]float64, len(cands))}
	df := map[string]int{}
	for _, u := range cands {
		seen := map[string]bool{}
		for _, t := range u.content {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(cands))
	centroid := vector{}
	for i, u := range cands {
		tf := map[string]int{}
		for _, t := range u.content {
			tf[t]++
		}
		v := make(vector, len(tf))
		for t, c := range tf {
			v[t] = (1 + math.Log(float64(c))) * math.Log(1+n/float64(df[t])) * weight(t)
		}
		r.vecs[i] = v.normalize()
		for t, x := range v {
			centroid[t] += x
		}
	}
	if len(centroid) > centroidTerms {
		type tw struct {
			t string
			w float64
		}
		all := make([]tw, 0, len(centroid))
		for t, w := range centroid {
			all = append(all, tw{t, w})
		}
		slices.SortFunc(all, func(a, b tw) int {
			if a.w != b.w {
				if a.w > b.w {
					return -1
				}
				return 1
			}
			return strings.Compare(a.t, b.t)
		})
		centroid = vector{}
		for _, x := range all[:centroidTerms] {
			centroid[x.t] = x.w
		}
	}
	centroid.normalize()
	for i, u := range cands {
		s := r.vecs[i].dot(centroid)
		switch u.section {
		case secAbstract:
			s *= 1.3
		case secConclusion:
			s *= 1.2
		case secIntro:
			s *= 1.15
		}
		s *= 1 + 0.2*(1-u.pos)
		if connectiveRE.MatchString(u.span.Text) {
			s *= 0.75
		}
		if u.words < 12 {
			s *= 0.85
		}
		r.scores[i] = s
	}
	r.order = make([]int, len(cands))
	for i := range r.order {
		r.order[i] = i
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		switch {
		case r.scores[a] > r.scores[b]:
			return -1
		case r.scores[a] < r.scores[b]:
			return 1
		}
		return 0
	})
	return r
}

// redundancy is the cosine above which two sentences say the same thing.
const redundancy = 0.5

// redundant reports whether candidate i repeats one of the chosen ones.
func (r *ranking) redundant(i int, chosen []int) bool {
	for _, j := range chosen {
		if r.vecs[i].dot(r.vecs[j]) > redundancy || display(r.units[i].span.Text) == display(r.units[j].span.Text) {
			return true
		}
	}
	return false
}

// candidates returns the units that pass prose(o), dropping repeats of a sentence
// already seen (chunks of one paper overlap).
func candidates(units []unit, o proseOpts) []*unit {
	var out []*unit
	seen := map[string]bool{}
	for i := range units {
		u := &units[i]
		if !prose(u, o) {
			continue
		}
		key := display(u.span.Text)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, u)
	}
	return out
}

// rankedProse splits the documents into sentences and ranks those that read as
// summary prose (relaxing the bounds when none do): what summaries and
// extractions choose from. No candidates is not an error.
func rankedProse(ctx context.Context, docs []llm.Document) ([]*unit, *ranking, error) {
	units, err := splitDocs(ctx, docs)
	if err != nil {
		return nil, nil, err
	}
	cands := candidates(units, summaryProse)
	if len(cands) == 0 {
		cands = candidates(units, relaxedProse)
	}
	if len(cands) == 0 {
		return nil, nil, nil
	}
	return cands, rank(cands), nil
}
