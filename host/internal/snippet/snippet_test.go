package snippet

import (
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tsquery string
		want    []string
	}{
		{"", nil},
		{"'space' <-> 'repetit' & !'forget' & 'curv' | 'state-of-the-art' <-> 'state' <3> 'art'",
			[]string{"space", "repetit", "curv", "state-of-the-art", "state", "art"}},
		{"!( 'a' | 'b' ) & 'c' & 'a'", []string{"c", "a"}},
		{"'o''neil' & 'o''neil'", []string{"o'neil"}},
		{"'learn':* & 'deep':AB", []string{"learn", "deep"}},
		{"'3.5' & '2023'", []string{"3.5", "2023"}},
		{"'unclosed", []string{"unclosed"}},
	} {
		require.Equal(t, tc.want, Terms(tc.tsquery), tc.tsquery)
	}
}

// highlighted returns the words of a snippet its highlights cover.
func highlighted(t *testing.T, text string, highlights [][2]int) []string {
	t.Helper()
	var out []string
	last := 0
	for _, h := range highlights {
		require.LessOrEqual(t, last, h[0], "in order, not overlapping")
		require.Less(t, h[0], h[1])
		require.LessOrEqual(t, h[1], len(text))
		out = append(out, text[h[0]:h[1]])
		last = h[1]
	}
	return out
}

func TestBuildPicksTheWindowWithTheQuery(t *testing.T) {
	t.Parallel()
	heading := "3 Results\n\nTable 2 lists the participants by cohort and by the week they joined the study. "
	filler := strings.Repeat("The cohort met weekly in the library and logged its sessions. ", 6)
	answer := "Learners who used spaced repetition recalled 3.5 times more words after a month, and the forgetting curve flattened."
	text := heading + filler + answer + " " + filler
	snip, hl := Build(text, []string{"space", "repetit", "forget", "3.5"})

	require.Contains(t, snip, "spaced repetition recalled 3.5 times")
	require.Equal(t, []string{"spaced", "repetition", "3.5", "forgetting"}, highlighted(t, snip, hl))
	require.LessOrEqual(t, len(strings.Fields(snip)), MaxWords+1, "at most MaxWords words (and the punctuation after)")
	require.NotContains(t, snip, "\n")
	require.NotContains(t, snip, "  ")
	require.True(t, strings.HasPrefix(snip, "Learners who used"), "begins with the sentence of the first match: %q", snip)

	// A sentence that begins before the window: the matches are centred.
	long := strings.Repeat("word ", 60) + "spaced repetition " + strings.Repeat("word ", 60)
	snip, hl = Build(long, []string{"space", "repetit"})
	require.Equal(t, strings.TrimSpace(strings.Repeat("word ", 16)+"spaced repetition "+strings.Repeat("word ", 17)), snip)
	require.Equal(t, []string{"spaced", "repetition"}, highlighted(t, snip, hl))
}

func TestBuildStemsAsPostgreSQL(t *testing.T) {
	t.Parallel()
	text := "Studies of the study; networks. LEARNING, dying skies and the news: a state-of-the-art BERT-based model's 1,000 runs."
	for _, tc := range []struct {
		terms []string
		want  []string
	}{
		{[]string{"studi"}, []string{"Studies", "study"}},
		{[]string{"network", "learn"}, []string{"networks", "LEARNING"}},
		{[]string{"die", "sky", "news"}, []string{"dying", "skies", "news"}},
		{[]string{"state-of-the-art", "state", "art"}, []string{"state", "art"}},
		{[]string{"bert", "base"}, []string{"BERT", "based"}},
		{[]string{"model"}, []string{"model"}},
		{[]string{"1,000"}, []string{"1,000"}},
	} {
		snip, hl := Build(text, tc.terms)
		require.Equal(t, tc.want, highlighted(t, snip, hl), "%v in %q", tc.terms, snip)
	}
}

func TestSentenceStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want bool // whether the last word begins a sentence
	}{
		{"It ended. Then", true},
		{"It ended? Then", true},
		{"He said \"stop.\" Then", true},
		{"(see above.) Then", true},
		{"It ended. then", false},
		{"Fig. 3", false},
		{"It ended.Then", false},
		{"a, Then", false},
		{"Alone", true},
	} {
		words := split(tc.text)
		require.Equal(t, tc.want, sentenceStart(tc.text, words, len(words)-1), tc.text)
	}
}

func TestBuildWithoutAMatch(t *testing.T) {
	t.Parallel()
	text := "One two three four five six seven eight nine ten eleven twelve thirteen fourteen."
	snip, hl := Build(text, []string{"absent"})
	require.Equal(t, "One two three four five six seven eight nine ten eleven twelve", snip)
	require.Empty(t, hl)
	require.NotNil(t, hl, "no highlights is an empty list")

	snip, hl = Build("Short one.", nil)
	require.Equal(t, "Short one.", snip)
	require.Empty(t, hl)

	snip, hl = Build(" \n\t ", []string{"x"})
	require.Empty(t, snip)
	require.Empty(t, hl)
}

func TestBuildKeepsMultibyteText(t *testing.T) {
	t.Parallel()
	text := "Le café « crème » déjà vu\u00a0: naïve Bayes über alles, résumé."
	snip, hl := Build(text, []string{"naiv", "naïv", "bay"})
	require.Equal(t, "Le café « crème » déjà vu : naïve Bayes über alles, résumé.", snip)
	require.Equal(t, []string{"naïve", "Bayes"}, highlighted(t, snip, hl))
}

func FuzzBuild(f *testing.F) {
	f.Add("spaced repetition works, 3.5 times", "'space' & 'repetit'")
	f.Add("a\u00a0b\tc\n\nd é ü", "'b' | !'c'")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, tsquery string) {
		snip, hl := Build(text, Terms(tsquery))
		require.NotNil(t, hl)
		last := 0
		for _, h := range hl {
			require.LessOrEqual(t, last, h[0])
			require.Less(t, h[0], h[1])
			require.LessOrEqual(t, h[1], len(snip))
			last = h[1]
		}
		require.LessOrEqual(t, len(snip), len(text))
	})
}

// TestEveryWordPassesTowardItsOwnStem holds couldStemTo, which spares most words
// the stemmer, to the stemmer itself on every word of a real paper's text.
func TestEveryWordPassesTowardItsOwnStem(t *testing.T) {
	t.Parallel()
	text := string(fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt"))
	n := 0
	for _, w := range split(text) {
		word := strings.ToLower(text[w.start:w.end])
		stem := english.Stem(word, false)
		require.True(t, couldStemTo(word, []string{stem}), "%q stems to %q", word, stem)
		n++
	}
	require.Greater(t, n, 3000)
}

func FuzzCouldStemTo(f *testing.F) {
	for _, w := range []string{"using", "dying", "skies", "studies", "relational", "generously", "ability", "cried"} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w string) {
		w = strings.ToLower(w)
		for _, r := range w {
			if r < 'a' || r > 'z' {
				return // the stemmer's alphabet
			}
		}
		if w == "" {
			return
		}
		stem := english.Stem(w, false)
		require.True(t, couldStemTo(w, []string{stem}), "%q stems to %q", w, stem)
	})
}

// BenchmarkBuild builds the snippets of one page of search results: 20 passages
// of 150 words of a real paper, for a query of three words.
func BenchmarkBuild(b *testing.B) {
	words := strings.Fields(string(fixturetest.Read(b, "pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt")))
	var passages []string
	for i := 0; len(passages) < 20; i += 150 {
		passages = append(passages, strings.Join(words[i:i+150], " "))
	}
	terms := []string{"patient", "heart", "failur"}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range passages {
			Build(p, terms)
		}
	}
}
