package rag

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
)

const checkPassage = "Participants reported that once the programme ended it was difficult to remain motivated, " +
	"because they became responsible for regulating their own exercise. Adherence fell from 84% to 52% within six months."

func checkDocs() []document {
	return []document{
		{Document: llm.Document{ID: "S1", Text: checkPassage}},
		{Document: llm.Document{ID: "S2", Text: "The intervention lasted twelve weeks and was delivered in groups of eight."}},
	}
}

func TestCheckSentence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer, status string
	}{
		{"a verbatim quote", `The authors write that "it was difficult to remain motivated, because they became responsible" [S1].`, SentenceVerified},
		{"a whole sentence copied without quotation marks", `Adherence fell from 84% to 52% within six months [S1].`, SentenceVerified},
		{"a paraphrase", `Once the programme ended, participants found remaining motivated difficult as they became responsible for their exercise [S1].`, SentenceParaphrase},
		{"a paraphrase that changes a figure", `Adherence fell from 84% to 40% after the programme ended within six months [S1].`, SentenceUnsupported},
		{"a quote the passage does not hold", `The paper says "participants enjoyed the programme far more than expected" [S1].`, SentenceUnsupported},
		{"a sentence about something else", `Cats prefer warm windowsills in winter [S1].`, SentenceUnsupported},
		{"the quote found in the second cited passage", `"delivered in groups of eight" [S1, S2].`, SentenceVerified},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checks, _ := checkAnswer(tc.answer, checkDocs())
			require.Len(t, checks, 1)
			require.Equal(t, tc.status, checks[0].Status, "%+v", checks[0])
			require.Equal(t, tc.status == SentenceVerified, checks[0].Verified)
		})
	}
}

// Each cited sentence is checked on its own; a citation is verified only when
// every sentence citing it is.
func TestCheckAnswerPerCitation(t *testing.T) {
	t.Parallel()
	answer := "Motivation was the problem. \"It was difficult to remain motivated\" [S1]. " +
		"The intervention was run in small groups [S2]. Later, \"adherence fell from 84% to 52% within six months\" [S1]."
	checks, verified := checkAnswer(answer, checkDocs())
	require.Len(t, checks, 3)
	require.Equal(t, `"It was difficult to remain motivated"`, checks[0].Text, "the sentence a marker ends, not the one before it")
	require.Equal(t, []string{"S1"}, checks[0].Markers)
	require.True(t, checks[0].Verified)
	require.False(t, checks[1].Verified)
	require.True(t, checks[2].Verified)
	require.Equal(t, map[string]bool{"S1": true, "S2": false}, verified)
}

func TestCitedSentence(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"One. Two three four ":                      "Two three four",
		`. Intro: "A quote. With two sentences." `:  `Intro: "A quote. With two sentences."`,
		"According to the documents:\n\n\"Q one.\"": "According to the documents:\n\n\"Q one.\"",
		"": "",
	}
	for in, want := range cases {
		require.Equal(t, want, citedSentence(in), "%q", in)
	}
}

// The filter drops markers to passages the model was not given, however the
// stream cuts them, and leaves every other character as it came.
func TestMarkerFilter(t *testing.T) {
	t.Parallel()
	docs := checkDocs()
	cases := []struct{ in, want string }{
		{"Known [S1]. Unknown [S7]. Both [S2, S9]. Text [not a marker] and [S", "Known [S1]. Unknown. Both [S2]. Text [not a marker] and [S"},
		{"According to the documents:\n\n\"A quote.\" [S1]\n\n\"Another.\" [S2]", "According to the documents:\n\n\"A quote.\" [S1]\n\n\"Another.\" [S2]"},
		{"Only an unknown one [S12].", "Only an unknown one."},
		{"Kept as written [S1,S2] here.", "Kept as written [S1,S2] here."},
	}
	for _, tc := range cases {
		for _, size := range []int{1, 2, 3, 5, 1000} {
			f := newMarkerFilter(docs)
			var out strings.Builder
			for i := 0; i < len(tc.in); i += size {
				out.WriteString(f.write(tc.in[i:min(i+size, len(tc.in))]))
			}
			out.WriteString(f.flush())
			require.Equal(t, tc.want, out.String(), "pieces of %d bytes", size)
		}
	}
}

// BenchmarkCheckAnswer checks a six-sentence model answer (three quotes, three
// paraphrases) against eight passages of about 2,000 characters, as an answer of
// passagesPerAnswer passages is checked, markers filtered as they stream.
func BenchmarkCheckAnswer(b *testing.B) {
	var docs []document
	for i := range passagesPerAnswer {
		var text strings.Builder
		for j := 0; text.Len() < 2000; j++ {
			fmt.Fprintf(&text, "In trial %d the %d participants of group %d reported that %s. ", j, 10+i, i, strings.Repeat("regular feedback kept them motivated ", 1+j%3))
		}
		docs = append(docs, document{Document: llm.Document{ID: "S" + strconv.Itoa(i+1), Text: text.String()}})
	}
	answer := `The authors note that "the 12 participants of group 2 reported that regular feedback kept them motivated" [S3]. ` +
		`Feedback mattered to motivation across the groups [S1, S2]. ` +
		`"In trial 4 the 15 participants of group 5 reported" this as well [S6]. ` +
		`Motivation fell without feedback in every group [S4]. ` +
		`"regular feedback kept them motivated regular feedback kept them motivated" [S8]. ` +
		`Participants valued regular feedback [S7].`
	b.ReportAllocs()
	for b.Loop() {
		f := newMarkerFilter(docs)
		text := f.write(answer) + f.flush()
		checks, _ := checkAnswer(text, docs)
		if len(checks) != 6 {
			b.Fatalf("%d checks", len(checks))
		}
	}
}
