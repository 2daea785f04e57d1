package evals

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/pdftext"
	"github.com/lectern-research/lectern/host/internal/rag"
)

// FullTextScores are the figures of one full-text run.
type FullTextScores struct {
	Set string `json:"set"`
	// Model and Method are those of the last answer (the builtin method's
	// "extractive", or the model assigned to the answer role).
	Model        string `json:"model"`
	Method       string `json:"method"`
	Papers       int    `json:"papers"`
	Questions    int    `json:"questions"`
	Answerable   int    `json:"answerable"`
	Unanswerable int    `json:"unanswerable"`

	// Hits counts answerable questions whose answer has a statement that cites a
	// passage of the right paper, where both the statement (its quoted words) and
	// the passage hold a gold phrase.
	Hits int `json:"hits"`
	// PageHits counts answerable questions with a citation of the right paper on
	// a gold page.
	PageHits int `json:"page_hits"`
	// Abstained counts questions whose answer says the papers do not hold it;
	// CorrectAbstentions those of them that are unanswerable.
	Abstained          int `json:"abstained"`
	CorrectAbstentions int `json:"correct_abstentions"`
	// Citations are those of the answers to answerable questions;
	// CorrectCitations cite a passage of the right paper that holds a gold phrase.
	Citations        int `json:"citations"`
	CorrectCitations int `json:"correct_citations"`
	// Fallbacks counts answers the builtin method gave because the assigned model
	// failed (only with --role answer).
	Fallbacks int `json:"fallbacks"`

	// EvidenceHitRate = Hits / Answerable. PageAccuracy = PageHits / Answerable.
	// AbstentionPrecision = CorrectAbstentions / Abstained. AbstentionRecall =
	// CorrectAbstentions / Unanswerable. CitationPrecision = CorrectCitations /
	// Citations.
	EvidenceHitRate     float64 `json:"evidence_hit_rate"`
	PageAccuracy        float64 `json:"page_accuracy"`
	AbstentionPrecision float64 `json:"abstention_precision"`
	AbstentionRecall    float64 `json:"abstention_recall"`
	CitationPrecision   float64 `json:"citation_precision"`

	// ByKind is the evidence hit rate per question kind (and the abstention
	// recall for "unanswerable").
	ByKind map[string]KindScore `json:"by_kind"`
	Misses []Miss               `json:"misses,omitempty"`
}

// KindScore is how one kind of question fared.
type KindScore struct {
	Questions int `json:"questions"`
	Correct   int `json:"correct"`
}

// Kinds of a Miss.
const (
	MissFalseAbstention = "false abstention"
	MissNoEvidence      = "no evidence"
	MissWrongPage       = "wrong page"
	MissAnswered        = "answered the unanswerable"
)

// Miss is one question the answer got wrong, with what it quoted, so a reader
// of the report sees the failure without rerunning it.
type Miss struct {
	Kind     string `json:"kind"`
	Question string `json:"question"`
	// Quoted is what the answer's first statements quote, with the paper and
	// page each cites ("" for an abstention).
	Quoted string `json:"quoted,omitempty"`
	// Want names the gold paper and pages.
	Want string `json:"want,omitempty"`
}

// judged is one answer, scored.
type judged struct {
	abstained bool
	hit       bool
	pageHit   bool
	citations int
	correct   int
}

// notFound matches the sentences in which an answer says the papers do not hold
// the answer: the builtin method's rag.NoContext and its "The documents do not
// contain the answer", and a model's usual wordings.
var notFound = regexp.MustCompile(`(?i)\b(?:do(?:es)?n[o']t|does not|do not|cannot|can ?not|could not|neither|none of)\b.{0,60}\b(?:contain|answer|hold|mention|say|state|report|provide|include|give|specif)|\bno (?:information|passage|mention)\b|\bnot (?:mentioned|stated|reported|specified|given)\b`)

// citedAnswer is what scoring needs of an answer: its text, its citations and
// the text of each cited passage by marker.
type citedAnswer struct {
	answer   *rag.Answer
	passages map[string]string
}

// abstains reports whether an answer says the papers do not hold the answer: it
// cites nothing, or its first sentence says so.
func abstains(a *rag.Answer) bool {
	if len(a.Citations) == 0 {
		return true
	}
	first := a.Text
	if i := strings.IndexAny(first, ".\n"); i >= 0 {
		first = first[:i]
	}
	return notFound.MatchString(first)
}

// fold is the form phrases are compared in: pdftext.Normalize (hyphenation,
// ligatures, quotes, dashes, whitespace) and lower case.
func fold(s string) string { return strings.ToLower(pdftext.Normalize(s)) }

// holdsAny reports whether text contains one of the phrases, compared folded.
func holdsAny(text string, phrases []string) bool {
	t := fold(text)
	return slices.ContainsFunc(phrases, func(p string) bool { return strings.Contains(t, fold(p)) })
}

// judge scores one answer to q; gold is the paper that answers q (uuid.Nil for an
// unanswerable question).
func judge(q FullTextQuestion, gold uuid.UUID, c citedAnswer) judged {
	j := judged{abstained: abstains(c.answer)}
	if !q.Answerable() || j.abstained {
		return j
	}
	byMarker := map[string]rag.Citation{}
	for _, cit := range c.answer.Citations {
		byMarker[cit.Marker] = cit
		j.citations++
		if cit.PaperID == gold && holdsAny(c.passages[cit.Marker], q.Evidence) {
			j.correct++
		}
		if cit.PaperID == gold && slices.Contains(q.Pages, cit.Page) {
			j.pageHit = true
		}
	}
	for _, claim := range rag.Claims(c.answer.Text) {
		if !holdsAny(rag.QuotedWords(claim.Text), q.Evidence) {
			continue
		}
		for _, id := range claim.IDs {
			if cit, ok := byMarker[id]; ok && cit.PaperID == gold && holdsAny(c.passages[id], q.Evidence) {
				j.hit = true
			}
		}
	}
	return j
}

// add counts one judged answer into s, with a miss when it is wrong. names maps
// paper uuids to the set's ids for the report.
func (s *FullTextScores) add(q FullTextQuestion, j judged, a *rag.Answer, names map[uuid.UUID]string) {
	if a.Fallback != nil {
		s.Fallbacks++
	}
	k := s.ByKind[q.Kind]
	k.Questions++
	if j.abstained {
		s.Abstained++
	}
	miss := Miss{Question: q.Question}
	if q.Answerable() {
		miss.Want = fmt.Sprintf("%s p. %s", q.Paper, joinInts(q.Pages))
	}
	switch {
	case !q.Answerable() && j.abstained:
		s.CorrectAbstentions++
		k.Correct++
	case !q.Answerable():
		miss.Kind = MissAnswered
	case j.abstained:
		miss.Kind = MissFalseAbstention
	default:
		s.Citations += j.citations
		s.CorrectCitations += j.correct
		if j.hit {
			s.Hits++
			k.Correct++
		} else {
			miss.Kind = MissNoEvidence
		}
		if j.pageHit {
			s.PageHits++
		} else if j.hit {
			miss.Kind = MissWrongPage
		}
	}
	s.ByKind[q.Kind] = k
	if miss.Kind != "" {
		if miss.Kind != MissFalseAbstention {
			miss.Quoted = quoted(a, names)
		}
		s.Misses = append(s.Misses, miss)
	}
}

// finish computes the rates.
func (s *FullTextScores) finish() {
	s.EvidenceHitRate = ratio(s.Hits, s.Answerable)
	s.PageAccuracy = ratio(s.PageHits, s.Answerable)
	s.AbstentionPrecision = ratio(s.CorrectAbstentions, s.Abstained)
	s.AbstentionRecall = ratio(s.CorrectAbstentions, s.Unanswerable)
	s.CitationPrecision = ratio(s.CorrectCitations, s.Citations)
}

// quoted summarises what an answer's first two statements quote and cite.
func quoted(a *rag.Answer, names map[uuid.UUID]string) string {
	byMarker := map[string]rag.Citation{}
	for _, c := range a.Citations {
		byMarker[c.Marker] = c
	}
	var parts []string
	for _, claim := range rag.Claims(a.Text) {
		if len(parts) == 2 {
			break
		}
		where := ""
		for _, id := range claim.IDs {
			if c, ok := byMarker[id]; ok {
				where = fmt.Sprintf(" (%s p. %d)", names[c.PaperID], c.Page)
				break
			}
		}
		parts = append(parts, fmt.Sprintf("%q%s", clip(strings.Join(strings.Fields(rag.QuotedWords(claim.Text)), " "), 110), where))
	}
	return strings.Join(parts, "; ")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// String formats the scores as a plain-text report: the figures, the evidence hit
// rate per kind, then every miss.
func (s *FullTextScores) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RAG eval, set %s (model %s, method %s): %d papers, %d questions, %d answerable, %d unanswerable\n",
		s.Set, s.Model, s.Method, s.Papers, s.Questions, s.Answerable, s.Unanswerable)
	fmt.Fprintf(&b, "  evidence hit rate     %.3f  (%d of %d answerable questions quote and cite gold evidence)\n", s.EvidenceHitRate, s.Hits, s.Answerable)
	fmt.Fprintf(&b, "  page accuracy         %.3f  (%d of %d answerable questions cite a gold page)\n", s.PageAccuracy, s.PageHits, s.Answerable)
	fmt.Fprintf(&b, "  abstention precision  %.3f  (%d of %d abstentions were on unanswerable questions)\n", s.AbstentionPrecision, s.CorrectAbstentions, s.Abstained)
	fmt.Fprintf(&b, "  abstention recall     %.3f  (%d of %d unanswerable questions declined)\n", s.AbstentionRecall, s.CorrectAbstentions, s.Unanswerable)
	fmt.Fprintf(&b, "  citation precision    %.3f  (%d of %d citations hold gold evidence)\n", s.CitationPrecision, s.CorrectCitations, s.Citations)
	if s.Fallbacks > 0 {
		fmt.Fprintf(&b, "  fallbacks             %d answers came from the builtin method because the assigned model failed\n", s.Fallbacks)
	}
	b.WriteString("  by kind:")
	for _, k := range questionKinds {
		if ks, ok := s.ByKind[k]; ok {
			fmt.Fprintf(&b, " %s %d/%d", k, ks.Correct, ks.Questions)
		}
	}
	b.WriteString("\n")
	for _, m := range s.Misses {
		fmt.Fprintf(&b, "  miss (%s): %s", m.Kind, m.Question)
		if m.Want != "" {
			fmt.Fprintf(&b, " [want %s]", m.Want)
		}
		if m.Quoted != "" {
			fmt.Fprintf(&b, "\n      quoted: %s", m.Quoted)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
