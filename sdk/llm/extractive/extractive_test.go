package extractive

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// ownDocs are documents written for these tests.
var ownDocs = []llm.Document{
	{ID: "S1", PaperID: "p1", Section: "Abstract", Text: "We present Lexa, a retrieval system for\nscientific papers. Lexa indexes 2.1 million abstracts and answers questions\nby quoting them. On the QASPER benchmark it reaches 41.3% F1."},
	{ID: "S2", PaperID: "p1", Section: "Limitations", Text: "A limitation of our study is that Lexa cannot read tables or figures. Future work will add a layout model."},
}

func request(system, user string) *llm.ChatRequest {
	return &llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}}}
}

func TestDescribeAndModels(t *testing.T) {
	t.Parallel()
	e := New(nil)
	d, err := e.Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.Equal(t, Name, d.Name)
	require.Equal(t, Version, d.Version)
	require.Equal(t, protocol.KindLLM, d.Kind)
	for _, c := range []string{protocol.CapabilityEmbeddings, protocol.CapabilityStreaming, protocol.CapabilityJSONSchema} {
		require.True(t, d.HasCapability(c), c)
	}
	m, err := e.Models(t.Context(), &llm.ModelsRequest{})
	require.NoError(t, err)
	require.Equal(t, []llm.Model{
		{ID: ChatModel, DisplayName: "Extractive (quotes the papers, no model)", Chat: true, JSONSchema: true},
		{ID: EmbeddingModel, DisplayName: "Lexical hashing, 384 dimensions", Embedding: true, EmbeddingDimension: Dimension},
	}, m.Models)
	_, err = e.Configure(t.Context(), &protocol.ConfigureRequest{Settings: map[string]any{"anything": true}})
	require.NoError(t, err)
}

func TestChatBadRequests(t *testing.T) {
	t.Parallel()
	withQ := llm.FormatRequest("What does Lexa index?", ownDocs)
	noQ := llm.FormatRequest("", ownDocs)
	tests := []struct {
		name    string
		req     *llm.ChatRequest
		mention string
	}{
		{"unknown task, no question", request("Task: translate\nTranslate.", noQ), `"translate"`},
		{"no task, no question", request("Be helpful.", noQ), `unknown task ""`},
		{"no documents element", request("Task: answer", "What is Lexa?"), "documents"},
		{"malformed documents", request("Task: summarize", "<documents><document id=\"S1\">x</documents>"), "read the request"},
		{"other model", func() *llm.ChatRequest {
			r := request("Task: answer", withQ)
			r.Model = "gpt-4o"
			return r
		}(), `"gpt-4o"`},
		{"schema for prose", func() *llm.ChatRequest {
			r := request("Task: answer", withQ)
			r.ResponseSchema = llm.Schema(llm.TaskSummarize)
			return r
		}(), "prose"},
		{"foreign schema", func() *llm.ChatRequest {
			r := request("Task: summarize", noQ)
			r.ResponseSchema = &llm.JSONSchema{Name: "mine", Schema: []byte(`{"type":"object"}`)}
			return r
		}(), "lectern_summarize"},
		{"summary of nothing", request("Task: summarize", llm.FormatRequest("", nil)), "document"},
		{"relevance without interests", request("Task: relevance", noQ), "interests"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sent := 0
			err := New(nil).Chat(t.Context(), tc.req, llm.ChatStreamFunc(func(*llm.ChatChunk) error { sent++; return nil }))
			require.ErrorIs(t, err, protocol.ErrBadRequest)
			require.Contains(t, err.Error(), tc.mention)
			require.Zero(t, sent)
		})
	}
}

func TestChatSchemaByNameOnly(t *testing.T) {
	t.Parallel()
	r := request("Task: summarize", llm.FormatRequest("", ownDocs))
	r.ResponseSchema = &llm.JSONSchema{Name: llm.Schema(llm.TaskSummarize).Name}
	resp, err := llm.Collect(t.Context(), New(nil), r)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(resp.Text, "{"))
}

func TestChatUnknownTaskWithQuestionAnswers(t *testing.T) {
	t.Parallel()
	for _, system := range []string{"Task: translate", "You are a helpful assistant."} {
		resp, err := llm.Collect(t.Context(), New(nil), request(system, llm.FormatRequest("How many abstracts does Lexa index?", ownDocs)))
		require.NoError(t, err)
		require.Equal(t, llm.TaskAnswer, resp.Metadata[MetaTask])
		quotes := parseAnswer(t, resp.Text)
		require.NotEmpty(t, quotes)
		require.Equal(t, "S1", quotes[0].id)
		require.Equal(t, "Lexa indexes 2.1 million abstracts and answers questions\nby quoting them.", quotes[0].text)
	}
}

func TestChatAnswerWithoutDocuments(t *testing.T) {
	t.Parallel()
	resp, err := llm.Collect(t.Context(), New(nil), request("Task: answer", llm.FormatRequest("What is Lexa?", nil)))
	require.NoError(t, err)
	require.Equal(t, NoAnswer, resp.Text)
}

func TestChatStreams(t *testing.T) {
	t.Parallel()
	for _, task := range []string{llm.TaskAnswer, llm.TaskSummarize, llm.TaskExtract, llm.TaskCards, llm.TaskRelevance} {
		_, chunks := chat(t, task, "Lexa abstracts, retrieval", ownDocs, llm.Schema(task))
		require.Greater(t, len(chunks), 2, "%s: stream in pieces", task)
		last := chunks[len(chunks)-1]
		require.Equal(t, llm.FinishStop, last.FinishReason)
		require.Equal(t, ChatModel, last.Model)
		require.Equal(t, map[string]string{llm.MetaMethod: llm.MethodExtractive, MetaTask: task}, last.Metadata)
		for _, c := range chunks[:len(chunks)-1] {
			require.Empty(t, c.FinishReason)
			require.NotEmpty(t, c.Delta)
			require.True(t, utf8.ValidString(c.Delta))
			if task == llm.TaskAnswer {
				require.LessOrEqual(t, len(strings.Fields(c.Delta)), phraseWords, "%q", c.Delta)
			}
		}
	}
}

func TestChatStopsWhenSendFails(t *testing.T) {
	t.Parallel()
	gone := errors.New("receiver gone")
	calls := 0
	err := New(nil).Chat(t.Context(), request("Task: answer", llm.FormatRequest("How many abstracts does Lexa index?", ownDocs)),
		llm.ChatStreamFunc(func(*llm.ChatChunk) error {
			calls++
			if calls == 2 {
				return gone
			}
			return nil
		}))
	require.ErrorIs(t, err, gone)
	require.Equal(t, 2, calls)
}

func TestChatHonoursCancellation(t *testing.T) {
	t.Parallel()
	req := request("Task: answer", llm.FormatRequest("How many abstracts does Lexa index?", ownDocs))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := New(nil).Chat(ctx, req, llm.ChatStreamFunc(func(*llm.ChatChunk) error { return nil }))
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	err = New(nil).Chat(ctx, req, llm.ChatStreamFunc(func(*llm.ChatChunk) error {
		calls++
		cancel() // the caller goes away mid-stream
		return nil
	}))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, calls)
}

func TestChatIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	e := New(nil)
	want, err := llm.Collect(t.Context(), e, request("Task: extract", llm.FormatRequest("", ownDocs)))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := llm.Collect(t.Context(), e, request("Task: extract", llm.FormatRequest("", ownDocs)))
			if err == nil && got.Text != want.Text {
				err = errors.New("different output")
			}
			require.NoError(t, err)
		})
	}
	wg.Wait()
}

func TestBlankOut(t *testing.T) {
	t.Parallel()
	tests := []struct{ s, term, want string }{
		{"the GP said", "GP", "the ____ said"},
		{"their GPs' ability", "GP", "their ____s' ability"},
		{"a GPU and NPBD", "GP", "a GPU and NPBD"},
		{"Creative Commons\nAttribution, again Creative Commons\nAttribution", "Creative Commons\nAttribution", "____, again ____"},
		{"took 25.9 seconds (25.9 seconds)", "25.9 seconds", "took ____ (____)"},
		// Never part of a hyphenated or broken word (issue 17: "cita- ____").
		{"counting cita- tions of tions", "tions", "counting cita- tions of ____"},
		{"a GP-based and non-GP model; the GP's note", "GP", "a GP-based and non-GP model; the ____'s note"},
		{"pre- and post-processing", "pre", "pre- and post-processing"},
		{"state-of-the-art results", "art", "state-of-the-art results"},
		{"as in GPT-4, not GPT", "GPT", "as in GPT-4, not ____"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, blankOut(tc.s, tc.term), tc.s)
		front, ok := Cloze(tc.s, tc.term)
		require.Equal(t, tc.want, front)
		require.Equal(t, tc.want != tc.s, ok, "Cloze says whether it blanked")
	}
}

func TestPhrasesAndJSONPieces(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "one", "  lead and trail  ", "a b c d e f g\n\nh", `"Quote,\nwith a break." [S1]`} {
		require.Equal(t, s, strings.Join(phrases(s), ""))
	}
	pieces, err := jsonPieces(map[string]string{"k": strings.Repeat("é<ü>", 200)})
	require.NoError(t, err)
	require.LessOrEqual(t, len(pieces), 5)
	for _, p := range pieces {
		require.True(t, utf8.ValidString(p))
	}
	require.Contains(t, strings.Join(pieces, ""), "<ü>", "no HTML escaping")
}
