// Package llm is the LLM-provider plugin kind: the Provider interface an author
// implements (streaming chat with optional JSON-schema output, embeddings, model
// list), its request and response types, and the gRPC glue.
//
// Credentials (an API key, a gateway token) arrive in each request's Credentials map;
// never read them from the environment or a file, never log them.
//
// This package follows semantic versioning with the sdk module.
package llm

import (
	"context"
	"strings"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// Provider is an LLM provider. Every method must return when ctx is done (with
// ctx.Err()) and fail with the typed errors of package protocol.
type Provider interface {
	protocol.Plugin

	// Chat produces a completion, sending zero or more chunks with text deltas and
	// then exactly one final chunk with FinishReason set. When stream.Send fails the
	// caller has gone away: stop and return that error. With req.ResponseSchema set
	// the concatenated text must be one JSON document valid against the schema, or
	// Chat fails with a BadRequest when the model cannot be constrained.
	Chat(ctx context.Context, req *ChatRequest, stream ChatStream) error
	// Embed returns one vector per input, in input order, all of one dimension.
	// No inputs is a BadRequest.
	Embed(ctx context.Context, req *EmbedRequest) (*EmbedResponse, error)
	// Models lists the models offered with these credentials.
	Models(ctx context.Context, req *ModelsRequest) (*ModelsResponse, error)
}

// ChatStream receives the chunks of a chat completion.
type ChatStream interface {
	// Send delivers one chunk. An error means the receiver is gone.
	Send(chunk *ChatChunk) error
}

// ChatStreamFunc adapts a function to ChatStream.
type ChatStreamFunc func(chunk *ChatChunk) error

// Send calls f.
func (f ChatStreamFunc) Send(chunk *ChatChunk) error { return f(chunk) }

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat turn.
type Message struct {
	// Role is RoleSystem, RoleUser or RoleAssistant.
	Role string
	// Content is the text.
	Content string
}

// JSONSchema constrains a completion to one JSON document.
type JSONSchema struct {
	// Name names the schema (some providers require one).
	Name string
	// Schema is the JSON Schema document.
	Schema []byte
	// Strict asks the provider to refuse anything that does not validate.
	Strict bool
}

// ChatRequest asks for a completion.
type ChatRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// Model is the model id; empty means the provider's default.
	Model string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Temperature is the sampling temperature; nil means the provider's default.
	Temperature *float64
	// MaxTokens caps the completion; 0 means the provider's default.
	MaxTokens int
	// ResponseSchema, when set, constrains the output to JSON valid against it.
	ResponseSchema *JSONSchema
	// Stop lists stop sequences.
	Stop []string
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// Finish reasons.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
)

// ChatChunk is one piece of a streamed completion.
type ChatChunk struct {
	// Delta is the next piece of text.
	Delta string
	// FinishReason is set on the last chunk only.
	FinishReason string
	// Usage is set on the last chunk, when known.
	Usage *Usage
	// Model is the model that answered, set on the last chunk.
	Model string
	// Metadata says how the answer was made, set on the last chunk (the builtin
	// plugin sets method=extractive).
	Metadata map[string]string
}

// ChatResponse is a whole completion, as Collect assembles it.
type ChatResponse struct {
	// Text is the concatenated deltas.
	Text string
	// FinishReason, Usage, Model and Metadata come from the last chunk.
	FinishReason string
	Usage        *Usage
	Model        string
	Metadata     map[string]string
}

// Collect runs a chat completion and assembles the whole answer.
func Collect(ctx context.Context, p Provider, req *ChatRequest) (*ChatResponse, error) {
	var b strings.Builder
	out := &ChatResponse{}
	err := p.Chat(ctx, req, ChatStreamFunc(func(c *ChatChunk) error {
		b.WriteString(c.Delta)
		if c.FinishReason != "" {
			out.FinishReason, out.Usage, out.Model, out.Metadata = c.FinishReason, c.Usage, c.Model, c.Metadata
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	out.Text = b.String()
	return out, nil
}

// EmbedRequest asks for embeddings.
type EmbedRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// Model is the embedding model id; empty means the provider's default.
	Model string
	// Inputs are the texts to embed.
	Inputs []string
}

// EmbedResponse carries one vector per input.
type EmbedResponse struct {
	// Vectors in input order.
	Vectors [][]float32
	// Model is the model that embedded.
	Model string
	// Dimension is the length of every vector.
	Dimension int
	// Metadata says how the vectors were made (the builtin plugin sets
	// method=lexical).
	Metadata map[string]string
}

// ModelsRequest asks for the model list.
type ModelsRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
}

// Model describes one model.
type Model struct {
	// ID is what ChatRequest.Model and EmbedRequest.Model take.
	ID string
	// DisplayName is for people.
	DisplayName string
	// ContextWindow is the context size in tokens; 0 when unknown.
	ContextWindow int
	// Chat is true for chat models.
	Chat bool
	// Embedding is true for embedding models.
	Embedding bool
	// EmbeddingDimension is the vector length of an embedding model.
	EmbeddingDimension int
	// JSONSchema is true when the model honours ResponseSchema.
	JSONSchema bool
}

// ModelsResponse lists models.
type ModelsResponse struct {
	// Models offered.
	Models []Model
}
