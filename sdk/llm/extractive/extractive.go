package extractive

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Identity and models.
const (
	// Name is the plugin's name in Describe.
	Name = "builtin"
	// Version is the plugin's semantic version. A change to what the tasks output
	// for the same request is a minor version; a change to the embedding is a new
	// EmbeddingModel.
	Version = "0.1.0"
	// ChatModel is the one chat model: extractive answers, summaries, extractions,
	// cards and relevance judgements.
	ChatModel = "extractive"
	// EmbeddingModel is the one embedding model: hashed word and word-pair
	// features, weighted by a fixed idf estimate, L2-normalised. It names its
	// version and dimension, so vectors of another hashing are never mixed with
	// its own (the host's earlier lexical embedder was lectern-lexical-v1-384).
	EmbeddingModel = "lectern-lexical-v2-384"
	// Dimension is the length of every embedding.
	Dimension = 384
	// MetaTask is the metadata key of the final chat chunk that names the task
	// performed (one of the llm.Task constants).
	MetaTask = "task"
)

// Extractive is the builtin LLM provider: it answers every task from the words of
// the request alone, with no model and no network. It is safe for concurrent use
// and has no settings (Configure accepts and ignores any).
type Extractive struct {
	protocol.ConfigureDefaults
	log *slog.Logger
}

var _ llm.Provider = (*Extractive)(nil)

// New returns the builtin provider. log receives debug lines about each call; nil
// discards them.
func New(log *slog.Logger) *Extractive {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Extractive{log: log}
}

// Describe names the plugin and announces embeddings, streaming and JSON-schema
// output (for the schemas of llm.Schema).
func (e *Extractive) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:    Name,
		Kind:    protocol.KindLLM,
		Version: Version,
		Capabilities: []string{
			protocol.CapabilityEmbeddings, protocol.CapabilityJSONSchema, protocol.CapabilityStreaming,
		},
		Description: "Extractive answers, summaries and cards quoted from the papers, and lexical embeddings; no model, no network.",
	}, nil
}

// Models lists ChatModel and EmbeddingModel.
func (e *Extractive) Models(ctx context.Context, _ *llm.ModelsRequest) (*llm.ModelsResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &llm.ModelsResponse{Models: []llm.Model{
		{ID: ChatModel, DisplayName: "Extractive (quotes the papers, no model)", Chat: true, JSONSchema: true},
		{ID: EmbeddingModel, DisplayName: "Lexical hashing, 384 dimensions", Embedding: true, EmbeddingDimension: Dimension},
	}}, nil
}

// embedShare is the fewest inputs worth another goroutine in Embed.
const embedShare = 64

// Embed returns the lexical embedding of each input (see the package
// documentation): Dimension floats, L2-normalised, the same on every run and
// platform. An input without words gets the unit vector along EmptyBucket. No
// inputs, or a model other than EmbeddingModel, is a BadRequest.
func (e *Extractive) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	if len(req.Inputs) == 0 {
		return nil, protocol.BadRequest("embed needs at least one input")
	}
	if req.Model != "" && req.Model != EmbeddingModel {
		return nil, protocol.BadRequest("unknown embedding model %q: the builtin plugin offers %q", req.Model, EmbeddingModel)
	}
	vecs := make([][]float32, len(req.Inputs))
	// Large batches are shared among the processors; each vector depends on its
	// input only, so the result is the same.
	workers := min(runtime.GOMAXPROCS(0), (len(req.Inputs)+embedShare-1)/embedShare)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(req.Inputs); i += workers {
				if (i/workers)%64 == 0 && ctx.Err() != nil {
					return
				}
				vecs[i] = embedText(req.Inputs[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &llm.EmbedResponse{
		Vectors:   vecs,
		Model:     EmbeddingModel,
		Dimension: Dimension,
		Metadata:  map[string]string{llm.MetaMethod: llm.MethodLexical},
	}, nil
}

// Chat performs the task named by the system message (llm.TaskOf) on the request
// the last user message carries (llm.ParseRequest), streaming prose in phrases of
// a few words and JSON in a few pieces, then a final chunk with FinishReason stop,
// Model ChatModel and Metadata {method: extractive, task: <task>}. An empty or
// unknown task is answered as TaskAnswer when the request has a question, and is
// a BadRequest otherwise. A request it cannot read, a model other than ChatModel,
// or a ResponseSchema other than llm.Schema(task) is a BadRequest. Temperature,
// MaxTokens and Stop are ignored: the output is deterministic and short. Chat
// returns ctx.Err() when ctx ends and the error of stream.Send when it fails.
func (e *Extractive) Chat(ctx context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if req.Model != "" && req.Model != ChatModel {
		return protocol.BadRequest("unknown chat model %q: the builtin plugin offers %q", req.Model, ChatModel)
	}
	task := llm.TaskOf(req.Messages)
	question, docs, err := llm.ParseRequest(llm.LastUser(req.Messages))
	if err != nil {
		return &protocol.Error{Code: protocol.CodeBadRequest, Message: "read the request: " + err.Error(), Cause: err}
	}
	switch task {
	case llm.TaskAnswer, llm.TaskSummarize, llm.TaskExtract, llm.TaskCards, llm.TaskRelevance:
	default:
		if question == "" {
			return protocol.BadRequest("unknown task %q (known: answer, summarize, extract, cards, relevance) and no <question> to answer", task)
		}
		task = llm.TaskAnswer
	}
	if err := checkSchema(task, req.ResponseSchema); err != nil {
		return err
	}
	if task != llm.TaskAnswer && len(docs) == 0 {
		return protocol.BadRequest("task %q needs at least one <document>", task)
	}
	if task == llm.TaskRelevance && question == "" {
		return protocol.BadRequest("task relevance needs the user's interests in <question>")
	}
	e.log.DebugContext(ctx, "chat", "task", task, "documents", len(docs))

	var deltas []string
	var v any
	switch task {
	case llm.TaskAnswer:
		quotes, err := answer(ctx, question, docs)
		if err != nil {
			return err
		}
		deltas = answerText(quotes)
	case llm.TaskSummarize:
		v, err = summarize(ctx, docs)
	case llm.TaskExtract:
		v, err = extract(ctx, docs)
	case llm.TaskCards:
		v, err = cards(ctx, docs, maxCardsOf(question))
	case llm.TaskRelevance:
		v, err = relevance(ctx, question, docs)
	}
	if err != nil {
		return err
	}
	if v != nil {
		if deltas, err = jsonPieces(v); err != nil {
			return err
		}
	}
	for _, d := range deltas {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := stream.Send(&llm.ChatChunk{Delta: d}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return stream.Send(&llm.ChatChunk{
		FinishReason: llm.FinishStop,
		Model:        ChatModel,
		Metadata:     map[string]string{llm.MetaMethod: llm.MethodExtractive, MetaTask: task},
	})
}

// checkSchema accepts no schema, or the schema llm.Schema(task) returns (the same
// JSON, or its name with no schema body): the JSON tasks produce exactly that
// shape and nothing else.
func checkSchema(task string, rs *llm.JSONSchema) error {
	if rs == nil {
		return nil
	}
	want := llm.Schema(task)
	if want == nil {
		return protocol.BadRequest("task %q answers in prose and cannot follow a response schema", task)
	}
	if len(rs.Schema) == 0 && rs.Name == want.Name {
		return nil
	}
	var got, exp any
	if json.Unmarshal(rs.Schema, &got) == nil && json.Unmarshal(want.Schema, &exp) == nil && reflect.DeepEqual(got, exp) {
		return nil
	}
	return protocol.BadRequest("the extractive model can only produce the %s schema of task %q", want.Name, task)
}

// phraseWords is how many words a prose delta carries.
const phraseWords = 3

// phrases cuts s into deltas of phraseWords words, each with the white space that
// follows it, so that the deltas concatenate to s exactly.
func phrases(s string) []string {
	var out []string
	start, words, inWord := 0, 0, false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		switch {
		case !space && !inWord:
			if words == phraseWords {
				out = append(out, s[start:i])
				start, words = i, 0
			}
			inWord = true
			words++
		case space:
			inWord = false
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// jsonPieces marshals v (without HTML escaping) and cuts it into up to four
// pieces at rune boundaries.
func jsonPieces(v any) ([]string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, &protocol.Error{Code: protocol.CodeInternal, Message: "encode the answer", Cause: err}
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	size := max(len(s)/4+1, 64)
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s), nil
}
