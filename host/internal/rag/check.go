package rag

import (
	"strings"
	"unicode"

	"github.com/lectern-research/lectern/host/internal/quote"
)

// A model's answer is checked the way a quote is: every sentence that carries a
// citation marker is held against the passages it cites. Words it puts in
// quotation marks must be found there verbatim (the quote verifier); a sentence
// without quotation marks is verified when the passage holds it whole, and is
// otherwise a paraphrase, which is kept and shown as unverified, never hidden. A
// marker naming a passage the model was not given is dropped from the text before
// it is streamed (markerFilter).

// Statuses of a checked sentence.
const (
	// SentenceVerified: its quoted words (or the whole sentence) are in a cited
	// passage, verbatim.
	SentenceVerified = "verified"
	// SentenceParaphrase: no verbatim quote, but most of its content words and all
	// of its numbers are in a cited passage. Unverified.
	SentenceParaphrase = "paraphrase"
	// SentenceUnsupported: neither, or its quoted words are not in the cited
	// passages. Unverified.
	SentenceUnsupported = "unsupported"
)

// paraphraseSupport is the share of a sentence's content words a cited passage
// must hold for the sentence to count as a paraphrase of it.
const paraphraseSupport = 0.6

// SentenceCheck is the check of one sentence of an answer that carries a citation
// marker.
type SentenceCheck struct {
	// Text is the sentence, without its marker.
	Text string `json:"text"`
	// Markers are the cited passages' markers, "S1" for [S1].
	Markers []string `json:"markers"`
	// Verified is true when Status is SentenceVerified; a paraphrase is shown,
	// marked unverified.
	Verified bool   `json:"verified"`
	Status   string `json:"status"`
	// Support is the share of the sentence's content words found in the best cited
	// passage, 1 for a verified sentence.
	Support float64 `json:"support"`
}

// checkAnswer checks each cited sentence of answer against the passages its
// marker names, and says for each marker whether every sentence citing it was
// verified against that passage.
func checkAnswer(answer string, docs []document) ([]SentenceCheck, map[string]bool) {
	byMarker := make(map[string]document, len(docs))
	for _, d := range docs {
		byMarker[d.ID] = d
	}
	indexes := map[string]*quote.Index{}
	index := func(d document) *quote.Index {
		if x, ok := indexes[d.ID]; ok {
			return x
		}
		x := quote.NewIndex(d.Text)
		indexes[d.ID] = x
		return x
	}
	out := []SentenceCheck{}
	verified := map[string]bool{}
	for _, c := range Claims(answer) {
		sentence := citedSentence(c.Text)
		check := SentenceCheck{Text: sentence, Markers: []string{}, Status: SentenceUnsupported}
		for _, id := range c.IDs {
			d, ok := byMarker[id]
			if !ok {
				continue
			}
			check.Markers = append(check.Markers, id)
			status, support := checkSentence(sentence, d.Text, index(d))
			if _, seen := verified[id]; !seen {
				verified[id] = true
			}
			verified[id] = verified[id] && status == SentenceVerified
			if rank(status) > rank(check.Status) || status == check.Status && support > check.Support {
				check.Status, check.Support = status, support
			}
		}
		if len(check.Markers) == 0 || sentence == "" {
			continue
		}
		check.Verified = check.Status == SentenceVerified
		out = append(out, check)
	}
	return out, verified
}

func rank(status string) int {
	switch status {
	case SentenceVerified:
		return 2
	case SentenceParaphrase:
		return 1
	}
	return 0
}

// checkSentence holds one sentence against one passage (x indexes passage).
func checkSentence(sentence, passage string, x *quote.Index) (status string, support float64) {
	if q, ok := quotedSpan(sentence); ok {
		r := x.Verify(q)
		if r.Verified {
			return SentenceVerified, 1
		}
		if r.Reason != quote.ReasonTooShort {
			// Words presented as the paper's own that the paper does not hold.
			return SentenceUnsupported, lexicalSupport(sentence, passage)
		}
	}
	if r := x.Verify(sentence); r.Verified {
		return SentenceVerified, 1
	}
	support = lexicalSupport(sentence, passage)
	if support >= paraphraseSupport && numbersHeld(sentence, passage) {
		return SentenceParaphrase, support
	}
	return SentenceUnsupported, support
}

// quotePairs are the quotation marks a model quotes with.
var quotePairs = [][2]string{{"\u201c", "\u201d"}, {`"`, `"`}, {"\u2018", "\u2019"}}

// quotedSpan returns the longest span of sentence in quotation marks.
func quotedSpan(sentence string) (string, bool) {
	best := ""
	for _, p := range quotePairs {
		rest := sentence
		for {
			i := strings.Index(rest, p[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(p[0]):]
			j := strings.Index(rest, p[1])
			if j < 0 {
				break
			}
			if span := rest[:j]; len(span) > len(best) {
				best = span
			}
			rest = rest[j+len(p[1]):]
		}
	}
	return best, strings.TrimSpace(best) != ""
}

// citedSentence is the sentence a marker ends: the claim's text after its last
// sentence break, with a quotation at its end kept whole even when the quoted
// words hold full stops.
func citedSentence(claim string) string {
	c := strings.TrimSpace(strings.TrimLeftFunc(claim, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(".,;:!?)", r)
	}))
	cut := len(c)
	for _, p := range quotePairs {
		end := strings.LastIndex(c, p[1])
		if end <= 0 {
			continue
		}
		if open := strings.LastIndex(c[:end], p[0]); open >= 0 && open < cut {
			cut = open
		}
	}
	start := 0
	for i, r := range c[:cut] {
		if strings.ContainsRune(".!?", r) && i+1 < len(c) && unicode.IsSpace(rune(c[i+1])) {
			start = i + 1
		}
	}
	return strings.TrimSpace(c[start:])
}

// lexicalSupport is the share of sentence's content words found in passage,
// compared by a crude stem; 0 when the sentence has none.
func lexicalSupport(sentence, passage string) float64 {
	words := contentWords(sentence)
	if len(words) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, w := range contentWords(passage) {
		have[w] = true
	}
	found := 0
	for _, w := range words {
		if have[w] {
			found++
		}
	}
	return float64(found) / float64(len(words))
}

// numbersHeld reports whether every number of sentence is in passage: a
// paraphrase that changes a figure is not supported, however many words match.
func numbersHeld(sentence, passage string) bool {
	have := map[string]bool{}
	for _, n := range numbers(passage) {
		have[n] = true
	}
	for _, n := range numbers(sentence) {
		if !have[n] {
			return false
		}
	}
	return true
}

func numbers(s string) []string {
	var out []string
	for _, t := range tokens(s) {
		if t != "" && unicode.IsDigit(rune(t[0])) {
			out = append(out, strings.TrimRight(t, "."))
		}
	}
	return out
}

// tokens splits s into lowercase words and numbers (a number keeps its inner
// decimal point or comma).
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != ','
	})
}

// contentWords are the stems of s's words that are not function words, of three
// letters or more.
func contentWords(s string) []string {
	var out []string
	for _, t := range tokens(s) {
		t = strings.Trim(t, ".,")
		if len(t) < 3 || stopWords[t] || unicode.IsDigit(rune(t[0])) {
			continue
		}
		out = append(out, stem(t))
	}
	return out
}

// stem strips the commonest English inflections, so that "participants" meets
// "participant" and "motivated" meets "motivation" less often than it should, but
// "found" never meets "find": a paraphrase check may be strict.
func stem(w string) string {
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// stopWords are English function words, which say nothing of whether a passage
// supports a sentence.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against all also although among and another any are
		because been before being below between both but can cannot could did does doing done down during each
		either even ever every for from further had has have having her here hers him his how however into its
		itself just may might more most much must neither nor not now off once only onto other others our ours out
		over own per rather same shall she should since some still such than that the their theirs them then there
		therefore these they this those though through thus too toward towards under until upon very via was were
		what whatever when where whereas whether which while who whom whose why will with within without would yet
		you your according documents document paper papers authors author study studies state states stated says
		said report reports reported note notes noted`) {
		m[w] = true
	}
	return m
}()

// markerFilter rewrites an answer's [S1]-style markers as the answer streams:
// ids naming no passage the model was given are taken out of each marker, and a
// marker left empty is dropped with the space before it. It holds back the end of
// the text while it could still be the start of a marker, so a marker split
// across pieces of the stream is seen whole.
type markerFilter struct {
	known   map[string]bool
	pending string
	// dropped counts the ids taken out.
	dropped int
}

func newMarkerFilter(docs []document) *markerFilter {
	known := make(map[string]bool, len(docs))
	for _, d := range docs {
		known[d.ID] = true
	}
	return &markerFilter{known: known}
}

// maxMarkerLen bounds how much text the filter holds back for one marker.
const maxMarkerLen = 64

// write takes the next piece of the answer and returns the text that may be sent.
func (f *markerFilter) write(piece string) string {
	s := f.pending + piece
	cut := len(s)
	if open := strings.LastIndexByte(s, '['); open >= 0 && !strings.Contains(s[open:], "]") &&
		len(s)-open <= maxMarkerLen && markerPrefix(s[open+1:]) {
		cut = open
	}
	// Whitespace before a marker that may yet be dropped waits with it.
	cut = len(strings.TrimRightFunc(s[:cut], unicode.IsSpace))
	f.pending = s[cut:]
	return f.rewrite(s[:cut])
}

// flush returns what the filter still holds, at the end of the answer.
func (f *markerFilter) flush() string {
	s := f.pending
	f.pending = ""
	return f.rewrite(s)
}

// markerPrefix reports whether s could continue a marker after its "[".
func markerPrefix(s string) bool {
	for _, r := range s {
		if r != 'S' && r != ',' && r != ';' && r != ' ' && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

func (f *markerFilter) rewrite(s string) string {
	locs := marker.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		var keep []string
		ids := markerID.FindAllString(s[loc[0]:loc[1]], -1)
		for _, id := range ids {
			if f.known[id] {
				keep = append(keep, id)
			} else {
				f.dropped++
			}
		}
		switch {
		case len(keep) == len(ids):
			b.WriteString(s[last:loc[1]])
		case len(keep) == 0:
			b.WriteString(strings.TrimRightFunc(s[last:loc[0]], unicode.IsSpace))
		default:
			b.WriteString(s[last:loc[0]])
			b.WriteString("[" + strings.Join(keep, ", ") + "]")
		}
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
