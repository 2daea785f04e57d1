package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func sentenceTexts(text string) []string {
	var out []string
	for _, s := range Sentences(text) {
		out = append(out, s.Text)
	}
	return out
}

func TestSentences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"plain", "One sentence here. Another one follows! Does a third? Yes.",
			[]string{"One sentence here.", "Another one follows!", "Does a third?", "Yes."}},
		{"abbreviations", "Models, e.g. BERT, are large. Smith et al. found gains, i.e. 3 points. Compare A vs. B here. See Fig. 3 and Eq. (2) for details. It works, cf. Table 1.",
			[]string{"Models, e.g. BERT, are large.", "Smith et al. found gains, i.e. 3 points.", "Compare A vs. B here.", "See Fig. 3 and Eq. (2) for details.", "It works, cf. Table 1."}},
		{"et al. before a citation", "Corvera-Tindel et al. [15] examined adherence. They found little.",
			[]string{"Corvera-Tindel et al. [15] examined adherence.", "They found little."}},
		{"decimals", "Accuracy rose from 25.9 to 31.2 percent (p<.001). The gain is 5.3 points.",
			[]string{"Accuracy rose from 25.9 to 31.2 percent (p<.001).", "The gain is 5.3 points."}},
		{"initials", "The study by Helen M. Burke and J. R. R. Tolkien was short. It ended.",
			[]string{"The study by Helen M. Burke and J. R. R. Tolkien was short.", "It ended."}},
		{"dotted abbreviations", "Data came from the U.S. Census Bureau. Each Ph.D. student helped.",
			[]string{"Data came from the U.S. Census Bureau.", "Each Ph.D. student helped."}},
		{"line breaks inside a sentence", "Focus groups were conducted with\nfifteen participants attending\none of two programmes. Sessions\nwere guided by an interview.",
			[]string{"Focus groups were conducted with\nfifteen participants attending\none of two programmes.", "Sessions\nwere guided by an interview."}},
		{"hyphenated line ends kept verbatim", "The language understanding capabilities of tech-\nnology promise much. How-\never, it is understud-\nied.",
			[]string{"The language understanding capabilities of tech-\nnology promise much.", "How-\never, it is understud-\nied."}},
		{"paragraph break", "A heading without a stop\n\nThe text starts here. And goes on",
			[]string{"A heading without a stop", "The text starts here.", "And goes on"}},
		{"numbered headings", "2. Methods\nWe asked twelve people. They answered.\n4. Experience of Programmes\nThe programmes helped.",
			[]string{"2. Methods", "We asked twelve people.", "They answered.", "4. Experience of Programmes", "The programmes helped."}},
		{"spaced ellipsis", "you could do . . . with my GP . . . That settled me down.",
			[]string{"you could do . . . with my GP . . .", "That settled me down."}},
		{"closing quotes and brackets", "He said “it works.” Then he left (as planned.) Fine.",
			[]string{"He said “it works.”", "Then he left (as planned.)", "Fine."}},
		{"lowercase continuation", "The value is approx. ten. We use the std. deviation.",
			[]string{"The value is approx. ten.", "We use the std. deviation."}},
		{"bullets", "We list three items:\n• the first one,\n• the second one.",
			[]string{"We list three items:", "• the first one,", "• the second one."}},
		{"form feed", "End of page one\fStart of page two.",
			[]string{"End of page one", "Start of page two."}},
		{"replacement character", "End of page one\uFFFDStart of page two.",
			[]string{"End of page one", "Start of page two."}},
		{"empty", " \n\t ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sentenceTexts(tc.text))
		})
	}
}

// requireVerbatimSpans checks that every span is text[Start:End], trimmed,
// non-empty, and that the spans are in order without overlap.
func requireVerbatimSpans(t *testing.T, text string, spans []Span) {
	t.Helper()
	prevEnd := 0
	for _, s := range spans {
		require.Equal(t, text[s.Start:s.End], s.Text)
		require.NotEmpty(t, s.Text)
		require.Equal(t, strings.TrimSpace(s.Text), s.Text)
		require.GreaterOrEqual(t, s.Start, prevEnd, "spans overlap at %q", s.Text)
		prevEnd = s.End
	}
}

func TestSentencesOnRealPDFText(t *testing.T) {
	t.Parallel()
	t.Run("hindawi", func(t *testing.T) {
		t.Parallel()
		text := hindawiText(t)
		spans := Sentences(text)
		requireVerbatimSpans(t, text, spans)
		got := sentenceTexts(text)
		// Line breaks, "et al." and initials stay inside their sentence.
		require.Contains(t, got, "Focus groups were conducted with fifteen participants (men, n = 12) attending\none of two heart failure rehabilitation programmes.")
		require.Contains(t, got, "Corvera-Tindel et al. [15] examined the predictors of\nexercise nonadherence in heart failure patients and found\nthat patients with longer heart failure duration and increased\nnumber of comorbid conditions were less likely to adhere to\na prescribed exercise regimen.")
		require.Contains(t, got, "Focus group transcripts were analysed qualitatively.")
		// A numbered heading is its own span, not the start of the next sentence.
		require.Contains(t, got, "2. Methods")
		// A running header repeated on every page ends the sentence-less line.
		require.Contains(t, got, "Many heart failure patients do not undertake the recommended\nself-care activities, and noncompliance with medication\nregimens is common [12].")
		for _, s := range got {
			require.NotEqual(t, ".", s, "spaced ellipses must not become sentences")
		}
	})
	t.Run("papermage", func(t *testing.T) {
		t.Parallel()
		text := papermageText(t)
		spans := Sentences(text)
		requireVerbatimSpans(t, text, spans)
		got := sentenceTexts(text)
		// Hyphenated line ends are kept verbatim inside the sentence.
		require.Contains(t, got, "While prior work has explored many exciting applications for\nLLMs, we argue that expository writing is a task that is understud-\nied in existing work on AI augmented writing.")
	})
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"lowercase and punctuation", "Graph-based models, (GNNs)!", []string{"graph", "bas", "model", "gnn"}},
		{"line-end hyphenation", "tech-\nnology and under-\n  stand", []string{"technology", "and", "understand"}},
		{"real hyphen kept apart", "state-of-the-art", []string{"stat", "of", "the", "art"}},
		{"ligature and soft hyphen", "ﬁne-tuning a classi\u00ADfier", []string{"fin", "tuning", "classifier"}},
		{"acronym plurals", "GPs and LLMs", []string{"gp", "and", "llm"}},
		{"single letters dropped, digits kept", "a b 3 x", []string{"3"}},
		{"function words unstemmed", "does this was", []string{"does", "this", "was"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tokenize(tc.in))
		})
	}
}

func TestStemMeets(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"results", "result"}, {"studies", "study"}, {"studied", "study"}, {"proposed", "propose"},
		{"proposes", "propose"}, {"lasted", "last"}, {"training", "train"}, {"planned", "plan"},
		{"funded", "fund"}, {"classes", "class"}, {"bases", "based"},
	} {
		require.Equal(t, stem(pair[1]), stem(pair[0]), "%s and %s", pair[0], pair[1])
	}
	for _, same := range []string{"analysis", "focus", "process", "bus", "seed", "used", "using", "string"} {
		require.NotEmpty(t, stem(same))
	}
	require.Equal(t, "analysis", stem("analysis"))
	require.Equal(t, "focus", stem("focus"))
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	require.Equal(t, "the technology is under study", display("  the tech-\nnology is\n under   study \n"))
	require.Equal(t, "state-of-the-art", display("state-of-the-art"))
	require.Equal(t, "A- B", display("A-\nB"), "an uppercase continuation is not hyphenation")
}
