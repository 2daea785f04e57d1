package extractive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
)

func TestReadQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q       string
		kind    questionKind
		subject string
	}{
		{"How many participants were in the field study?", askQuantity, "participants"},
		{"How much memory does the tracer use?", askQuantity, "memory"},
		{"What did each soil moisture sensor cost?", askQuantity, "cost"},
		{"What percentage of filters could not be retrieved?", askQuantity, ""},
		{"What is the number of papers in the corpus?", askQuantity, ""},
		{"What is PaperMage?", askDefinition, "PaperMage"},
		{"What are trace trees?", askDefinition, "trace trees"},
		{"what is a counterfactual explanation", askDefinition, "counterfactual explanation"},
		{"What does RTE stand for?", askDefinition, "RTE"},
		{"What does the paper recommend about annotator expertise?", askRecommendation, ""},
		{"Which guidelines do the authors suggest for evaluation?", askRecommendation, ""},
		{"Why did the tracer abort on some loops?", askPlain, ""},
	}
	for _, tt := range tests {
		kind, subject := readQuestion(tt.q)
		require.Equal(t, tt.kind, kind, tt.q)
		require.Equal(t, tt.subject, subject, tt.q)
	}
}

func TestDefines(t *testing.T) {
	t.Parallel()
	yes := []string{
		"PaperMage is an open-source Python toolkit for analyzing and processing visually-rich scientific documents.",
		"We present PaperMage, a toolkit for processing scientific PDFs.",
		"PaperMage (Lo et al., 2023) is a library for scientific documents.",
		"A trace tree is a data structure that records the hot paths of a loop.",
	}
	no := []string{
		"We compare PaperMage with two other toolkits on three tasks.",
		"The output of PaperMage was stored in a database.",
	}
	for _, s := range yes {
		u := unit{span: Span{Text: s}}
		subject := "PaperMage"
		if s[0] == 'A' {
			subject = "trace tree"
		}
		require.True(t, defines(&u, subject), s)
	}
	for _, s := range no {
		require.False(t, defines(&unit{span: Span{Text: s}}, "PaperMage"), s)
	}
}

func TestNonProse(t *testing.T) {
	t.Parallel()
	code := []string{
		"from papermage.recipes import CoreRecipe\nrecipe = CoreRecipe()",
		"doc = recipe.run(\"paper.pdf\")\nfor sentence in doc.sentences: print(sentence.text)",
		"Model 12.1 45.3 67.8 90.2 11.0 23.4",
		"Figure 3: Recall of the crawler at each depth.",
	}
	for _, s := range code {
		require.True(t, nonProse(&unit{span: Span{Text: s}}, "What is PaperMage?"), s)
	}
	prose := []string{
		"PaperMage is an open-source Python toolkit for analyzing and processing visually-rich scientific documents.",
		"We recruited 24 participants (12 women) for a two-week field study [7, 12].",
		"The crawler reached a recall of 0.79, compared with 0.56 for the baseline (Table 2).",
	}
	for _, s := range prose {
		require.False(t, nonProse(&unit{span: Span{Text: s}}, "How many participants were in the field study?"), s)
	}
	require.False(t, nonProse(&unit{span: Span{Text: code[3]}}, "What does Figure 3 show?"), "a caption answers a question about its figure")
}

// TestAnswerKinds: the question's kind picks the sentence a careful reader would
// quote over one that merely shares its words.
func TestAnswerKinds(t *testing.T) {
	t.Parallel()
	docs := []llm.Document{
		{ID: "S1", PaperID: "p", Page: 3, Section: "Related work", Text: "A previous survey of reading habits (n=881) asked researchers about their tools.\nParticipants in that survey rarely used reading tools in their field."},
		{ID: "S2", PaperID: "p", Page: 6, Section: "Field study", Text: "We deployed the reader in a field study with participants from four labs.\nThe field study ran for three weeks and involved 14 participants, who read 212 papers in total.\nParticipants kept a diary of what they read."},
		{ID: "S3", PaperID: "p", Page: 2, Section: "Introduction", Text: "We present PaperMage, an open-source toolkit for processing scientific PDFs into structured documents.\nPaperMage was used to build several reading tools.\nfrom papermage import CoreRecipe"},
		{ID: "S4", PaperID: "p", Page: 16, Section: "Discussion", Text: "Annotator expertise mattered for long documents.\nWe recommend hiring annotators with expertise in the document's field for faithfulness judgments of long summaries.\nExpert annotators were slower than crowd workers."},
	}
	tests := []struct{ q, want, avoid string }{
		{"How many participants were in the field study?", "involved 14 participants", "rarely used reading tools"},
		{"What is PaperMage?", "We present PaperMage, an open-source toolkit", "import"},
		{"What does the paper recommend about annotator expertise?", "We recommend hiring annotators", "mattered for long documents"},
	}
	for _, tt := range tests {
		resp, _ := chat(t, llm.TaskAnswer, tt.q, docs, nil)
		quotes := parseAnswer(t, resp.Text)
		require.NotEmpty(t, quotes, tt.q)
		best := false
		for _, q := range quotes {
			require.False(t, containsFold(q.text, tt.avoid), "%s: quotes %q, which shares words but does not answer", tt.q, q.text)
			best = best || containsFold(q.text, tt.want)
		}
		require.True(t, best, "%s: %v does not quote %q", tt.q, quotes, tt.want)
		require.LessOrEqual(t, len(quotes), maxQuotes)
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(display(s)), strings.ToLower(sub))
}
