package extractive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
)

// validate checks a JSON value against the subset of JSON Schema that
// llm.Schema uses: type (object, array, string, integer), properties, required,
// additionalProperties false, items, enum, minimum, maximum.
func validate(schema map[string]any, v any, path string) error {
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", path, v)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, r := range schema["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: required %q missing", path, r)
			}
		}
		for k, x := range obj {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if schema["additionalProperties"] == false {
					return fmt.Errorf("%s: property %q not allowed", path, k)
				}
				continue
			}
			if err := validate(sub, x, path+"."+k); err != nil {
				return err
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %T", path, v)
		}
		for i, x := range arr {
			if err := validate(schema["items"].(map[string]any), x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %T", path, v)
		}
		if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, any(s)) {
			return fmt.Errorf("%s: %q not in %v", path, s, enum)
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok || (schema["type"] == "integer" && f != float64(int64(f))) {
			return fmt.Errorf("%s: want an %v, got %v", path, schema["type"], v)
		}
		if m, ok := schema["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v below %v", path, f, m)
		}
		if m, ok := schema["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v above %v", path, f, m)
		}
	default:
		return fmt.Errorf("%s: schema type %v not handled", path, schema["type"])
	}
	return nil
}

// chatJSON runs a JSON task with its schema, checks the answer against
// llm.Schema(task) and decodes it strictly into out.
func chatJSON(t *testing.T, task, question string, docs []llm.Document, out any) *llm.ChatResponse {
	t.Helper()
	schema := llm.Schema(task)
	resp, _ := chat(t, task, question, docs, schema)
	var s map[string]any
	require.NoError(t, json.Unmarshal(schema.Schema, &s))
	var v any
	require.NoError(t, json.Unmarshal([]byte(resp.Text), &v), "not JSON: %q", resp.Text)
	require.NoError(t, validate(s, v, "$"))
	dec := json.NewDecoder(bytes.NewReader([]byte(resp.Text)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(out))
	require.Equal(t, map[string]string{llm.MetaMethod: llm.MethodExtractive, MetaTask: task}, resp.Metadata)
	return resp
}

// requireInSomeDoc checks that quote is an exact substring of a document.
func requireInSomeDoc(t *testing.T, quote string, docs []llm.Document) {
	t.Helper()
	require.NotEmpty(t, quote)
	require.True(t, slices.ContainsFunc(docs, func(d llm.Document) bool { return strings.Contains(d.Text, quote) }),
		"quote %q is in no document", quote)
}

// normalized folds white space and line-end hyphenation, as the host does
// before comparing a displayed sentence with the paper.
func normalized(s string) string { return display(s) }

// realDocSets are the documents the JSON tasks are tested on.
func realDocSets(t *testing.T) map[string][]llm.Document {
	paperID, paper := loadQasper(t)
	return map[string][]llm.Document{
		"qasper":    qasperDocs(paperID, paper),
		"hindawi":   chunks(hindawiText(t), 390, 38),
		"papermage": chunks(papermageText(t), 390, 38),
		"pubmedqa":  pubmedSet(loadPubMedQA(t), 7, true),
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	for name, docs := range realDocSets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var s llm.Summary
			chatJSON(t, llm.TaskSummarize, "", docs, &s)
			var all strings.Builder
			for _, d := range docs {
				all.WriteString(normalized(d.Text) + "\n")
			}
			require.NotEmpty(t, s.TLDR)
			require.Contains(t, all.String(), s.TLDR, "the TL;DR is not a sentence of the documents")
			if name != "qasper" { // the QASPER sample's text is placeholder words without full stops
				require.Regexp(t, `^\p{Lu}.*[.!?]["')\]’”]*$`, s.TLDR, "the TL;DR is a whole sentence")
			}
			require.NotNil(t, s.KeyFindings)
			require.LessOrEqual(t, len(s.KeyFindings), maxFindings)
			for _, f := range s.KeyFindings {
				require.Equal(t, f.Quote, f.Text)
				requireInSomeDoc(t, f.Quote, docs)
			}
			if name != "qasper" { // the QASPER sample's text is placeholder words
				require.GreaterOrEqual(t, len(s.KeyFindings), 3)
				require.GreaterOrEqual(t, strings.Count(s.Summary, ". "), 2, "a summary of 3 to 5 sentences")
			}
		})
	}
}

// TestSummaryLineIsAWholeSentence: the short line is the paper's own claim, from
// its abstract when it has one, never a sentence that opens with a bracketed
// label, a list marker or a connective, nor a line cut at a column's edge, even
// when such a sentence is the most central of the paper.
func TestSummaryLineIsAWholeSentence(t *testing.T) {
	t.Parallel()
	body := "[Both] To see personalized context, readers of scientific papers open the cited papers and their personalized context again and again.\n" +
		"(i) Personalized context of cited papers helps readers of scientific papers understand the papers they read.\n" +
		"However, personalized context of cited papers for readers of scientific papers is rarely shown in reading tools.\n" +
		"Readers of scientific papers want personalized context of cited papers while they read the scientific papers and"
	docs := []llm.Document{
		{ID: "S1", Section: "Abstract", Text: "We built a reading tool that shows the context of cited papers next to the text.\nIn a study with twelve readers it halved the time spent looking up citations."},
		{ID: "S2", Section: "Introduction", Text: body},
		{ID: "S3", Section: "Method", Text: body},
	}
	var s llm.Summary
	chatJSON(t, llm.TaskSummarize, "", docs, &s)
	require.Equal(t, "We built a reading tool that shows the context of cited papers next to the text.", s.TLDR)
	for _, f := range s.KeyFindings {
		require.NotRegexp(t, `^[\[(]|and$`, f.Text, "a finding is a whole sentence")
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	for name, docs := range realDocSets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var x llm.Extraction
			chatJSON(t, llm.TaskExtract, "", docs, &x)
			require.NotNil(t, x.Items)
			perType := map[string]int{}
			for _, it := range x.Items {
				perType[it.Type]++
				require.Equal(t, strings.TrimSpace(it.Quote), it.Content)
				requireInSomeDoc(t, it.Quote, docs)
			}
			for typ, n := range perType {
				require.LessOrEqual(t, n, maxPerType, typ)
			}
			if name == "hindawi" {
				require.Positive(t, perType[llm.ItemMethod])
				require.Positive(t, perType[llm.ItemResult])
				require.Positive(t, perType[llm.ItemLimitation])
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct{ sentence, want string }{
		{"In this paper, we propose a new framework for citation analysis.", llm.ItemClaim},
		{"We fine-tune the encoder with a contrastive loss function.", llm.ItemMethod},
		{"The corpus consists of 12,000 annotated abstracts collected from PubMed.", llm.ItemDataset},
		{"Our model outperforms the baseline by 4.2% accuracy.", llm.ItemResult},
		{"A limitation of our study is the small sample size.", llm.ItemLimitation},
		{"The weather was pleasant on the day of the visit.", ""},
	}
	for _, tc := range tests {
		u := unit{span: Span{Text: tc.sentence}, plain: plainWords(tc.sentence)}
		got, _, conf := classify(&u)
		require.Equal(t, tc.want, got, tc.sentence)
		if got != "" {
			require.GreaterOrEqual(t, conf, llm.LabelConfidenceFloor, "a sentence with clear cues is labelled surely: %s", tc.sentence)
		}
	}
	// Cues of several types alike: the label is a guess, and says so.
	mixed := "We use a regression on the data and find that accuracy improves."
	u := unit{span: Span{Text: mixed}, plain: plainWords(mixed)}
	_, _, conf := classify(&u)
	require.Less(t, conf, llm.LabelConfidenceFloor, mixed)
}

func TestCards(t *testing.T) {
	t.Parallel()
	for name, docs := range realDocSets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var c llm.CardDrafts
			chatJSON(t, llm.TaskCards, "", docs, &c)
			require.NotNil(t, c.Cards)
			require.LessOrEqual(t, len(c.Cards), DefaultCards)
			backs := map[string]bool{}
			for _, card := range c.Cards {
				requireInSomeDoc(t, card.Quote, docs)
				require.Contains(t, card.Front, Blank)
				require.NotEmpty(t, card.Back)
				require.Equal(t, card.Front, blankOut(card.Front, card.Back), "the front gives the answer away")
				require.Contains(t, normalized(card.Quote), card.Back)
				require.False(t, backs[card.Back], "two cards blank %q", card.Back)
				backs[card.Back] = true
			}
			if name == "hindawi" || name == "papermage" {
				require.NotEmpty(t, c.Cards)
			}
		})
	}
}

func TestCardsMaxCards(t *testing.T) {
	t.Parallel()
	docs := pubmedSet(loadPubMedQA(t), 11, true)
	tests := []struct {
		question string
		atMost   int
	}{
		{"", DefaultCards},
		{"max_cards=2", 2},
		{"Make cards for revision. max_cards: 1", 1},
		{"MAX_CARDS = 12", 12},
		{"max_cards=500", MaxCards},
		{"max_cards=0", 1},
	}
	for _, tc := range tests {
		var c llm.CardDrafts
		chatJSON(t, llm.TaskCards, tc.question, docs, &c)
		require.LessOrEqual(t, len(c.Cards), tc.atMost, tc.question)
		require.Equal(t, tc.atMost, maxCardsOf(tc.question))
	}
	var c llm.CardDrafts
	chatJSON(t, llm.TaskCards, "max_cards=12", docs, &c)
	require.Greater(t, len(c.Cards), DefaultCards, "20 abstracts hold more than five terms")
}

func TestRelevance(t *testing.T) {
	t.Parallel()
	docs := chunks(hindawiText(t), 390, 38)
	var on, off, mixed llm.Relevance
	chatJSON(t, llm.TaskRelevance, "heart failure rehabilitation, patient self-management", docs, &on)
	chatJSON(t, llm.TaskRelevance, "graph neural networks, protein folding", docs, &off)
	chatJSON(t, llm.TaskRelevance, "heart failure, graph neural networks", docs, &mixed)
	require.GreaterOrEqual(t, on.Relevance, 8)
	require.LessOrEqual(t, off.Relevance, 2)
	require.Greater(t, mixed.Relevance, off.Relevance)
	require.Less(t, mixed.Relevance, on.Relevance)
	require.Contains(t, on.Reason, "rehabilitation")
	for _, r := range []llm.Relevance{on, off, mixed} {
		require.GreaterOrEqual(t, r.Novelty, 1)
		require.LessOrEqual(t, r.Novelty, 10)
	}
}
