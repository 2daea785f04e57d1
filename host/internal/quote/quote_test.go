package quote

import (
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"ligatures", "e\uFB00ective \uFB01ne \uFB02ow o\uFB03ce", "effective fine flow office"},
		{"curly quotes and primes", "\u201CHeart Failure\u201D and \u2018it\u2019s\u2019, 5\u2032 3\u2033 \u00ABx\u00BB", `"heart failure" and 'it's', 5' 3" "x"`},
		{"dashes and minus", "2008\u20132010 \u2014 x \u2212 1 a\u2011b c\u2010d", "2008-2010 - x - 1 a-b c-d"},
		{"whitespace runs", "  a\t\tb\n\n c\f d\u00A0e\u2009f\u202Fg ", "a b c d e f g"},
		{"case folded", "ÉTUDE of DNA", "étude of dna"},
		{"hyphenation at line end", "an experi-\nment was run", "an experiment was run"},
		{"hyphenation with spaces around the break", "experi- \n  ment", "experiment"},
		{"unicode hyphen at line end", "experi\u2010\nment", "experiment"},
		{"hyphen before a ligature", "bene-\n\uFB01ts", "benefits"},
		{"soft hyphen inside a line", "experi\u00ADment", "experiment"},
		{"soft hyphen at a line end", "experi\u00AD\nment", "experiment"},
		{"hyphen before a capital is kept", "Trace-\nMonkey", "trace- monkey"},
		{"hyphen after a capital is kept", "HIV-\npositive", "hiv- positive"},
		{"hyphen inside a line is kept", "state-of-the-art", "state-of-the-art"},
		{"compound broken at a line end keeps its hyphen", "a state-of-\nthe-art model", "a state-of-the-art model"},
		{"compound whose tail has a hyphen", "state-\nof-the-art", "state-of-the-art"},
		{"real hyphen at a line end is joined", "well-\nknown", "wellknown"},
		{"hyphen at a page break", "experi-\f\nment", "experiment"},
		{"hyphen at the end of the text", "experi-\n", "experi-"},
		{"zero-width characters", "veri\u200Bfi\u200Ccation\uFEFF", "verification"},
		{"dotless i with diaeresis", "na\u0131\u0308ve", "naïve"},
		{"combining accent composes", "caf\u0065\u0301", "café"},
		{"ellipsis", "wait\u2026", "wait..."},
		{"full-width forms", "\uFF21\uFF22\uFF23 \uFF11\uFF12", "abc 12"},
		{"empty", "", ""},
		{"only whitespace", " \n\t\u00A0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Normalize(tt.in)
			require.Equal(t, tt.want, got)
			require.Equal(t, got, Normalize(got), "idempotent")
		})
	}
}

// paper is text laid out as pdftotext prints it.
const paper = "Quote veri-\nfication guards against fabricated evidence. In our\n" +
	"study, 142 participants (women,\u00A0n\u00A0=\u00A081) used the tool for\n" +
	"eight weeks. The e\uFB00ect of the \u201Cadaptive\u201D schedule was signi\uFB01cant\n" +
	"(p < 0.001), but it was unlikely to persist\u00A0beyond six months.\n" +
	"We used a state-of-\nthe-art model of forgetting [12] and we cannot\n" +
	"exclude a novelty e\uFB00ect in the \uFB01rst week.\n"

func TestVerify(t *testing.T) {
	t.Parallel()
	x := NewIndex(paper)
	tests := []struct {
		name, quote string
		verified    bool
		exact       bool   // similarity 1
		reason      Reason // when not verified
		span        string // text[Start:End], when not ""
	}{
		{"verbatim", "guards against fabricated evidence", true, true, "", "guards against fabricated evidence"},
		{"across a line-end hyphen", "Quote verification guards against", true, true, "", "Quote veri-\nfication guards against"},
		{"copied with the hyphen and break", "Quote veri-\nfication guards against", true, true, "", "Quote veri-\nfication guards against"},
		{"ligatures in the text", "The effect of the \"adaptive\" schedule was significant", true, true, "", "The e\uFB00ect of the \u201Cadaptive\u201D schedule was signi\uFB01cant"},
		{"ligatures in the quote", "The e\uFB00ect of the", true, true, "", "The e\uFB00ect of the"},
		{"curly quotes in the quote", "effect of the \u201Cadaptive\u201D schedule", true, true, "", "e\uFB00ect of the \u201Cadaptive\u201D schedule"},
		{"single for double quote marks, too short to absorb 2 edits", "of the \u2018adaptive\u2019 schedule", false, false, ReasonNotFound, ""},
		{"non-breaking spaces", "142 participants (women, n = 81) used the tool", true, true, "", "142 participants (women,\u00A0n\u00A0=\u00A081) used the tool"},
		{"different whitespace", "used  the\ttool for\r\neight weeks", true, true, "", "used the tool for\neight weeks"},
		{"case", "GUARDS AGAINST FABRICATED EVIDENCE", true, true, "", ""},
		{"wrapping quote marks", "\u201Cguards against fabricated evidence\u201D", true, true, "", "guards against fabricated evidence"},
		{"wrapping ellipses", "\u2026guards against fabricated evidence...", true, true, "", "guards against fabricated evidence"},
		{"bracketed ellipsis", "[...] guards against fabricated evidence [...]", true, true, "", "guards against fabricated evidence"},
		{"compound at a line end", "We used a state-of-the-art model of forgetting", true, true, "", "We used a state-of-\nthe-art model of forgetting"},
		{"citation marker left out of a short quote: 5 edits, 3 allowed", "We used a state-of-the-art model of forgetting and we cannot exclude a novelty effect in the first week.", false, false, ReasonNotFound, "We used a state-of-\nthe-art model of forgetting [12] and we cannot\nexclude a novelty e\uFB00ect in the \uFB01rst week."},
		{"fabricated", "Quote verification eliminates all fabricated evidence in practice.", false, false, ReasonNotFound, ""},
		{"changed number", "In our study, 124 participants (women, n = 81) used the tool for eight weeks.", false, false, ReasonMaterialChange, ""},
		{"negation dropped", "We used a state-of-the-art model of forgetting [12] and we can exclude a novelty effect in the first week.", false, false, ReasonMaterialChange, ""},
		{"exact cut after a negative prefix", "likely to persist beyond six months", false, true, ReasonMaterialChange, "likely to persist\u00A0beyond six months"},
		{"exact cut inside a number", "2 participants (women, n = 81) used", false, true, ReasonMaterialChange, ""},
		{"exact cut before not", "of forgetting [12] and we can", false, true, ReasonMaterialChange, ""},
		{"exact cut inside a word", "ication guards against fabricated", true, true, "", "ication guards against fabricated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := x.Verify(tt.quote)
			require.Equal(t, tt.verified, res.Verified, "%+v", res)
			if tt.verified {
				require.Empty(t, res.Reason)
				require.GreaterOrEqual(t, res.Similarity, Threshold)
			} else {
				require.Equal(t, tt.reason, res.Reason)
			}
			if tt.exact {
				require.Equal(t, 1.0, res.Similarity)
			} else {
				require.Less(t, res.Similarity, 1.0)
			}
			if res.Start >= 0 && tt.exact {
				require.Contains(t, Normalize(paper[res.Start:res.End]), stripWrapper(Normalize(tt.quote)))
			}
			if tt.span != "" {
				require.Equal(t, tt.span, paper[res.Start:res.End])
			}
			require.Equal(t, res, Verify(paper, tt.quote), "Verify and Index.Verify agree")
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, quote string
		reason      Reason
	}{
		{"empty", "", ReasonEmpty},
		{"whitespace", " \n\t\u00A0", ReasonEmpty},
		{"zero-width only", "\u200B\uFEFF", ReasonEmpty},
		{"straight quote marks", `""`, ReasonWrapperOnly},
		{"curly quote marks", "\u201C\u201D", ReasonWrapperOnly},
		{"ellipsis in quote marks", "\u201C\u2026\u201D", ReasonWrapperOnly},
		{"dots", ". . .", ReasonWrapperOnly},
		{"punctuation", "--- ; , !?", ReasonWrapperOnly},
		{"two words", "fabricated evidence", ReasonTooShort},
		{"three short words", "in our study", ReasonTooShort},
		{"a number", "p < 0.001", ReasonTooShort},
		{"short in quote marks", "\u201Ceight weeks\u201D", ReasonTooShort},
	}
	x := NewIndex(paper)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, Result{Start: -1, End: -1, Reason: tt.reason}, x.Verify(tt.quote))
		})
	}
}

// TestLongQuotePerturbations shows what the 0.97 threshold lets through for
// a long quote and what the material-change check stops.
func TestLongQuotePerturbations(t *testing.T) {
	t.Parallel()
	sentence := "Participants in the adaptive condition analysed 240 terms [7] and recalled " +
		"68.4% of them at the later test, while recall increased only slightly in the fixed " +
		"condition, which was not moderated by age."
	require.Equal(t, 200, utf8.RuneCountInString(sentence))
	text := "Results.\n" + sentence + "\nDiscussion follows."
	tests := []struct {
		name, from, to string
		verified       bool
		similarity     float64
	}{
		{"respelled word", "analysed", "analyzed", true, 0.995},
		{"citation marker left out", " [7]", "", true, 0.979},
		{"one digit", "68.4%", "68.1%", false, 0.995},
		{"negation inserted", "recall increased", "recall not increased", false, 0.98},
		{"negation dropped", "was not moderated", "was moderated", false, 0.98},
		{"antonym", "increased", "decreased", false, 0.99},
		{"word dropped", "increased only slightly", "increased slightly", false, 0.975},
		{"word added", "in the fixed", "in the same fixed", false, 0.976},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := strings.Replace(sentence, tt.from, tt.to, 1)
			require.NotEqual(t, sentence, q)
			res := Verify(text, q)
			require.InDelta(t, tt.similarity, res.Similarity, 0.0026)
			require.GreaterOrEqual(t, res.Similarity, Threshold, "the similarity alone would verify it")
			require.Equal(t, tt.verified, res.Verified, "%+v", res)
			if !tt.verified {
				require.Equal(t, ReasonMaterialChange, res.Reason)
			}
			require.Equal(t, sentence, text[res.Start:res.End], "the passage is the whole sentence")
		})
	}
}

// TestShortQuoteHasNoEditBudget: below 34 runes a quote must match exactly.
func TestShortQuoteHasNoEditBudget(t *testing.T) {
	t.Parallel()
	text := "the quote verification step runs first"
	require.True(t, Verify(text, "quote verification step runs").Verified)
	res := Verify(text, "quote verifcation step runs")
	require.False(t, res.Verified)
	require.Equal(t, ReasonNotFound, res.Reason)
}

func TestNormalizeIdempotentQuick(t *testing.T) {
	t.Parallel()
	f := func(s string) bool { n := Normalize(s); return Normalize(n) == n }
	require.NoError(t, quick.Check(f, &quick.Config{MaxCount: 2000}))
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", paper, "veri-\nfication", "state-of-\nthe-art", "\u00A8x", "J\u030C", "\u2033\u2034",
		"e\u00AD\u0301", "a \u0308", "\uFB01-\nx", "\u0130stanbul", "\u212B", "x\u00AD\n\u0301",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		require.Equal(t, n, Normalize(n), "idempotent")
		require.False(t, strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  "), "%q", n)
		nm := normalize(s)
		if len(nm.runes) > 0 {
			st, en := nm.origSpan(0, len(nm.runes))
			require.Equal(t, n, Normalize(s[st:en]), "the offsets cover the whole normalised text")
		}
		for i := range nm.runes {
			require.LessOrEqual(t, nm.start[i], nm.end[i])
			require.LessOrEqual(t, int(nm.end[i]), len(s))
			if i > 0 {
				require.LessOrEqual(t, nm.start[i-1], nm.start[i], "offsets never go back")
			}
		}
	})
}

func FuzzVerify(f *testing.F) {
	f.Add(paper, "guards against fabricated evidence")
	f.Add(paper, "In our study, 124 participants (women, n = 81) used the tool for eight weeks.")
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaa aaaa aaaa aaaa aaaa aaaa aaaa aaab")
	f.Add("-1.5 x\u0301 \uFB01 n't", "1.5 x\u0301 fi not at all")
	addFixtureQuotes(f)
	f.Fuzz(func(t *testing.T, text, quote string) {
		res := Verify(text, quote)
		if res.Start >= 0 {
			require.LessOrEqual(t, res.Start, res.End)
			require.LessOrEqual(t, res.End, len(text))
		} else {
			require.Equal(t, -1, res.End)
		}
		require.True(t, res.Similarity >= 0 && res.Similarity <= 1)
		require.Equal(t, res.Verified, res.Reason == "")
		if res.Verified {
			require.GreaterOrEqual(t, res.Similarity, Threshold)
			require.GreaterOrEqual(t, res.Start, 0)
		}
	})
}

// addFixtureQuotes seeds FuzzVerify with real paper text (the ground-truth full
// text of a fixture PDF, 8 kB of it) and quotes taken from it: one verbatim, one
// re-spaced across a line break with curly quotes, one with a word changed, one
// from another paragraph stitched to it. Without the fixtures folder there are
// no such seeds, and the target fuzzes on its own.
func addFixtureQuotes(f *testing.F) {
	b, ok := fixturetest.Lookup("pdfs/hindawi_rrp_2010_157939.groundtruth_fulltext.txt")
	if !ok {
		return
	}
	text := strings.ToValidUTF8(string(b[:min(len(b), 8<<10)]), "")
	words := strings.Fields(text)
	if len(words) < 400 {
		return
	}
	verbatim := strings.Join(words[100:130], " ")
	f.Add(text, verbatim)
	f.Add(text, "\u201C"+strings.Join(words[200:215], "\n")+"\u201D")
	changed := append([]string{}, words[300:330]...)
	changed[15] = "fabricated"
	f.Add(text, strings.Join(changed, " "))
	f.Add(text, strings.Join(words[40:55], " ")+" "+strings.Join(words[350:365], " "))
}

// randomPaper returns text made of random words (some with digits,
// capitals, ligatures or curly quotes) separated by spaces, line breaks
// and non-breaking spaces, and the byte offsets where its words start and
// end.
func randomPaper(r *rand.Rand, words int) (string, []int, []int) {
	var b strings.Builder
	var starts, ends []int
	for i := range words {
		if i > 0 {
			b.WriteString([]string{" ", " ", " ", "\n", "  ", "\u00A0", ", ", ". "}[r.IntN(8)])
		}
		starts = append(starts, b.Len())
		n := 1 + r.IntN(9)
		switch r.IntN(10) {
		case 0:
			b.WriteString(strings.Repeat("7", 1) + string(rune('0'+r.IntN(10))))
		case 1:
			b.WriteString("\u201C")
			writeLetters(&b, r, n)
			b.WriteString("\u201D")
		case 2:
			writeLetters(&b, r, n/2)
			b.WriteString("\uFB01")
			writeLetters(&b, r, n/2)
		case 3:
			b.WriteString(strings.ToUpper(string(rune('a' + r.IntN(26)))))
			writeLetters(&b, r, n)
		default:
			writeLetters(&b, r, n)
		}
		ends = append(ends, b.Len())
	}
	return b.String(), starts, ends
}

func writeLetters(b *strings.Builder, r *rand.Rand, n int) {
	for range n {
		b.WriteByte(byte('a' + r.IntN(26)))
	}
}

// TestExactSubstringsVerify: any run of whole words of a text, as the text
// has it or normalised, verifies with similarity 1 and offsets that hold it.
func TestExactSubstringsVerify(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		text, starts, ends := randomPaper(r, 400)
		x := NewIndex(text)
		for range 40 {
			a := r.IntN(len(starts) - 1)
			b := min(a+2+r.IntN(30), len(ends)-1)
			q := text[starts[a]:ends[b]]
			if r.IntN(2) == 0 {
				q = Normalize(q)
			}
			res := x.Verify(q)
			if res.Reason == ReasonTooShort {
				continue
			}
			require.True(t, res.Verified, "%q: %+v", q, res)
			require.Equal(t, 1.0, res.Similarity)
			require.Contains(t, Normalize(text[res.Start:res.End]), stripWrapper(Normalize(q)))
		}
	}
}

// TestExactCutsVerify: a substring of the normalised text cut anywhere has
// similarity 1 and verifies unless it starts or ends inside a word.
func TestExactCutsVerify(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	refused := 0
	for range 50 {
		text, _, _ := randomPaper(r, 400)
		x := NewIndex(text)
		norm := []rune(Normalize(text))
		for range 40 {
			i := r.IntN(len(norm) - 60)
			q := string(norm[i : i+12+r.IntN(48)])
			res := x.Verify(q)
			if res.Reason == ReasonTooShort || res.Reason == ReasonWrapperOnly {
				continue
			}
			require.Equal(t, 1.0, res.Similarity, "%q: %+v", q, res)
			if !res.Verified {
				refused++
				require.Equal(t, ReasonMaterialChange, res.Reason)
				s := stripWrapper(q)
				first, _ := utf8.DecodeRuneInString(s)
				last, _ := utf8.DecodeLastRuneInString(s)
				require.True(t, isWordRune(first) || isWordRune(last), "refused only for a cut word: %q", q)
			}
		}
	}
	require.Less(t, refused, 200, "most cuts verify")
}

func TestMaterialTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []token
	}{
		{"don't stop at 0.05, or 1,000", []token{"don't", "stop", "at", "0.05", "or", "1,000"}},
		{"p < 0.01 and -2.5 vs 3-4", []token{"p", "<", "0.01", "and", "-", "2.5", "vs", "3", "4"}},
		{"naïve state-of-the-art 95%", []token{"naive", "state", "of", "the", "art", "95", "%"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tokenize([]rune(Normalize(tt.in))), tt.in)
	}
}

func TestStripWrapper(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"a b c"`:           "a b c",
		"... a b c ...":     "a b c",
		". . . a b c . . .": "a b c",
		"[...] a b c (...)": "a b c",
		`"... 'a b c' ..."`: "a b c",
		"a b c.":            "a b c.",
	} {
		require.Equal(t, want, stripWrapper(in), in)
	}
}

func TestEditBudget(t *testing.T) {
	t.Parallel()
	for m, want := range map[int]int{12: 0, 33: 0, 34: 1, 66: 1, 67: 2, 100: 3, 200: 6, 300: 9, 1000: 30} {
		require.Equal(t, want, editBudget(m), "m=%d", m)
	}
	for m := 1; m < 3000; m++ {
		d := editBudget(m)
		require.GreaterOrEqual(t, similarity(d, m), Threshold)
		require.Less(t, similarity(d+1, m), Threshold)
	}
}

func TestGramsShortNeedle(t *testing.T) {
	t.Parallel()
	s := "abc abc abcd"
	g := newGrams(s)
	var got []int
	g.occurrences(s, "abc", func(i int) bool { got = append(got, i); return true })
	require.Equal(t, []int{0, 4, 8}, got)
	got = nil
	g.occurrences(s, "abc abcd", func(i int) bool { got = append(got, i); return true })
	require.Equal(t, []int{4}, got)
}
