package quote

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pdftext"
)

const groundTruth = "pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt"

// sentenceEnd is the end of a sentence: a full stop, question or exclamation
// mark, then whitespace and a capital.
var sentenceEnd = regexp.MustCompile(`[.?!]\s+[A-Z]`)

// sentences returns the sentences of text of 60 to 300 bytes, as a reader
// copies them: on one line.
func sentences(text string) []string {
	var out []string
	start := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		s := text[start : m[0]+1]
		start = m[1] - 1
		if len(s) >= 60 && len(s) <= 300 && !strings.Contains(s, "et al") {
			out = append(out, strings.Join(strings.Fields(s), " "))
		}
	}
	return out
}

// TestFixtureSentences checks every sentence of a real paper's ground-truth
// text, and perturbations of them, against the text.
func TestFixtureSentences(t *testing.T) {
	t.Parallel()
	text := string(fixturetest.Read(t, groundTruth))
	x := NewIndex(text)
	sents := sentences(text)
	require.Greater(t, len(sents), 50)

	perturbed, material := 0, 0 // material: refused for a material change alone
	for _, s := range sents {
		res := x.Verify(s)
		require.True(t, res.Verified, "%q: %+v", s, res)
		require.Equal(t, 1.0, res.Similarity)
		require.Equal(t, stripWrapper(Normalize(s)), Normalize(text[res.Start:res.End]))

		// The same sentence as an LLM might format it.
		styled := "\u201C" + strings.ReplaceAll(strings.ToUpper(s[:1])+s[1:], "'", "\u2019") + "\u201D"
		require.True(t, x.Verify(styled).Verified, "%q", styled)

		for _, p := range perturb(s) {
			if strings.Contains(Normalize(text), Normalize(p)) {
				continue // the perturbation happens to be in the text too
			}
			res := x.Verify(p)
			require.False(t, res.Verified, "perturbed %q of %q: %+v", p, s, res)
			perturbed++
			if res.Similarity >= Threshold {
				material++
			}
		}
	}
	require.Greater(t, perturbed, 100)
	t.Logf("%d sentences verified, %d perturbations refused (%d of them for a material change alone)", len(sents), perturbed, material)

	for _, f := range []string{
		"Participants reported that the home-based exercise programme was more convenient than hospital sessions.",
		"Focus groups were conducted with twenty participants attending one of three heart failure programmes.",
		"Most participants felt that their general practitioner was well informed about heart failure management.",
		"Supervised exercise sessions reduced confidence to resume physical activity.",
		"Heart failure is associated with mild symptom burden, functional limitation, and premature death.",
		"Structured rehabilitation programmes are ineffective in enabling patients to develop lifestyle skills to live with heart failure.",
		"Patients valued the peer-group interaction, although several found the dietary advice confusing and contradictory.",
		"The programme was delivered by a cardiologist and two physiotherapists over twelve weeks.",
	} {
		res := x.Verify(f)
		require.False(t, res.Verified, "fabricated %q: %+v", f, res)
		t.Logf("fabricated: %.3f %s %q", res.Similarity, res.Reason, f)
	}
}

// perturb returns material changes of sentence s: a digit changed, "not"
// inserted after a verb, two neighbouring words swapped, and one word
// replaced by its opposite when s has one.
func perturb(s string) []string {
	var out []string
	if i := strings.IndexFunc(s, unicode.IsDigit); i >= 0 {
		out = append(out, s[:i]+string('0'+(s[i]-'0'+1)%10)+s[i+1:])
	}
	for _, v := range []string{" is ", " was ", " were ", " are ", " can ", " did "} {
		if i := strings.Index(s, v); i >= 0 {
			out = append(out, s[:i+len(v)]+"not "+s[i+len(v):])
			break
		}
	}
	words := strings.Fields(s)
	for i := 0; i+1 < len(words); i++ {
		a, b := words[i], words[i+1]
		if len(a) >= 4 && len(b) >= 4 && a != b && isPlain(a) && isPlain(b) {
			w := append([]string(nil), words...)
			w[i], w[i+1] = b, a
			out = append(out, strings.Join(w, " "))
			break
		}
	}
	for _, pair := range [][2]string{
		{"increased", "decreased"}, {"more", "less"}, {"higher", "lower"}, {"positive", "negative"},
		{"effective", "ineffective"}, {"before", "after"}, {"all", "some"}, {"men", "women"},
	} {
		for _, p := range [][2]string{pair, {pair[1], pair[0]}} {
			if i := strings.Index(s, " "+p[0]+" "); i >= 0 {
				out = append(out, s[:i+1]+p[1]+s[i+1+len(p[0]):])
			}
		}
	}
	return out
}

func isPlain(w string) bool {
	return !strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
}

// TestNormalizeAgreesWithPdftext: on text without the cases where they
// differ (compounds broken at a line end, zero-width characters, a dash
// other than a hyphen at a line end), Normalize is pdftext.Normalize
// lower-cased.
func TestNormalizeAgreesWithPdftext(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		paper[:strings.Index(paper, "We used")],
		"bene-\n\uFB01ts of \u201Cstructured\u201D care \u2013 2008\u20132010, e\uFB00ect\u00A0size \u2212 0.5; na\u0131\u0308ve Trace-\nMonkey",
	} {
		require.Equal(t, strings.ToLower(pdftext.Normalize(s)), Normalize(s))
	}
	s := string(fixturetest.Read(t, groundTruth))
	require.Equal(t, strings.ToLower(pdftext.Normalize(s)), Normalize(s))
}
