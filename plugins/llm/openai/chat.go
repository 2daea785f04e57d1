package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

const chatLabel = "chat completions"

// chatBody is the request of POST /chat/completions.
type chatBody struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *jsonSchemaSpec `json:"json_schema,omitempty"`
}

type jsonSchemaSpec struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// defaultSchemaName names a ResponseSchema that has no name; OpenAI requires one.
const defaultSchemaName = "response"

// chatRequestBody builds the body of a chat request, refusing what no endpoint
// would accept.
func chatRequestBody(c *call, model string, req *llm.ChatRequest) ([]byte, error) {
	if len(req.Messages) == 0 {
		return nil, protocol.BadRequest("%s: no messages", chatLabel)
	}
	if req.MaxTokens < 0 {
		return nil, protocol.BadRequest("%s: max tokens %d is negative", chatLabel, req.MaxTokens)
	}
	b := chatBody{
		Model: model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
		Temperature: req.Temperature, Stop: req.Stop,
	}
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant:
		default:
			return nil, protocol.BadRequest("%s: message %d has role %q, want system, user or assistant", chatLabel, i, m.Role)
		}
		b.Messages = append(b.Messages, chatMessage{Role: m.Role, Content: m.Content})
	}
	if req.MaxTokens > 0 {
		if c.outputField() == maxCompletionTokensField {
			b.MaxCompletionTokens = req.MaxTokens
		} else {
			b.MaxTokens = req.MaxTokens
		}
	}
	if rs := req.ResponseSchema; rs != nil {
		if !json.Valid(rs.Schema) {
			return nil, protocol.BadRequest("%s: the response schema is not valid JSON", chatLabel)
		}
		name := rs.Name
		if name == "" {
			name = defaultSchemaName
		}
		b.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchemaSpec{Name: name, Schema: rs.Schema, Strict: rs.Strict}}
	}
	return json.Marshal(b)
}

// completion is a chat.completion.chunk of a stream or a whole chat.completion,
// or an error object in their place.
type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int          `json:"index"`
		Delta        *choiceDelta `json:"delta"`
		Message      *choiceDelta `json:"message"`
		FinishReason *string      `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// choiceDelta is the text of a choice. Reasoning text some servers stream
// separately (reasoning_content, reasoning) is not part of the answer and is
// not read.
type choiceDelta struct {
	Content *string `json:"content"`
	Refusal *string `json:"refusal"`
}

// Chat streams a chat completion: POST /chat/completions with "stream": true and
// usage requested, each text delta sent as it arrives and then one final chunk
// with the finish reason, usage, model and method. A server that answers a whole
// chat.completion instead of a stream is read too. With a ResponseSchema the
// request carries response_format json_schema, and an answer that finished
// normally but is not JSON fails with a BadRequest: the endpoint ignored the
// schema (the text sent so far is then to be discarded).
func (o *OpenAI) Chat(ctx context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	c, err := o.call(req.Credentials)
	if err != nil {
		return err
	}
	model := strings.TrimSpace(req.Model)
	if model == "" {
		model = c.s.chatModel
	}
	if model == "" {
		return protocol.BadRequest("%s: no model given and no default_chat_model set", chatLabel)
	}
	body, err := chatRequestBody(c, model, req)
	if err != nil {
		return err
	}
	res, a, err := o.do(ctx, c, &request{method: http.MethodPost, path: "/chat/completions", label: chatLabel, body: body, stream: true})
	if err != nil {
		return err
	}
	defer a.end()
	defer res.Body.Close()

	cr := &chatReader{ctx: ctx, a: a, c: c, stream: stream, model: model, schema: req.ResponseSchema != nil}
	br := bufio.NewReaderSize(res.Body, 64<<10)
	if isJSON(res.Header, br) {
		err = cr.readWhole(br)
	} else {
		err = cr.readStream(br)
	}
	if err != nil {
		return err
	}
	return cr.finish()
}

// isJSON reports whether an answer is a whole JSON document rather than an event
// stream: by its content type, or by its first byte when servers label streams
// loosely.
func isJSON(h http.Header, br *bufio.Reader) bool {
	if strings.Contains(strings.ToLower(h.Get("Content-Type")), "application/json") {
		return true
	}
	for {
		b, err := br.Peek(1)
		if err != nil {
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
			continue
		case '{', '[':
			return true
		}
		return false
	}
}

// chatReader turns an upstream answer into chunks.
type chatReader struct {
	ctx    context.Context
	a      *attempt
	c      *call
	stream llm.ChatStream
	// schema is set when a ResponseSchema was asked for; text then collects the
	// answer to check it.
	schema bool
	text   strings.Builder

	model   string
	reason  string
	refused bool
	usage   *llm.Usage
}

// readStream reads server-sent events up to data: [DONE] (or the end of the
// stream after a finish reason).
func (r *chatReader) readStream(br *bufio.Reader) error {
	sse := &sseReader{r: br, progress: r.a.touch}
	for {
		data, err := sse.next()
		if errors.Is(err, io.EOF) {
			if r.reason == "" {
				return protocol.Unavailable(nil, "%s: the stream ended before the answer did", chatLabel)
			}
			return nil
		}
		if err != nil {
			return r.a.readError(r.ctx, chatLabel, err)
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return nil
		}
		if len(data) == 0 {
			continue
		}
		if err := r.handle(data, true); err != nil {
			return err
		}
	}
}

// readWhole reads a plain JSON chat.completion, for servers that ignore stream.
func (r *chatReader) readWhole(br *bufio.Reader) error {
	body, err := io.ReadAll(io.LimitReader(br, maxBody))
	if err != nil {
		return r.a.readError(r.ctx, chatLabel, err)
	}
	return r.handle(body, false)
}

// handle applies one chunk (or whole completion): an error object ends the call
// with its typed error, text is sent, the finish reason, usage and model kept.
func (r *chatReader) handle(data []byte, streamed bool) error {
	if e := parseAPIError(data); e.present {
		err, _ := statusError(chatLabel, 0, e, r.c.apiKey)
		return err
	}
	var cmp completion
	if err := json.Unmarshal(data, &cmp); err != nil {
		return protocol.Unavailable(err, "%s: unreadable answer: %v", chatLabel, err)
	}
	if cmp.Model != "" {
		r.model = cmp.Model
	}
	if cmp.Usage != nil {
		r.usage = &llm.Usage{PromptTokens: cmp.Usage.PromptTokens, CompletionTokens: cmp.Usage.CompletionTokens}
	}
	for _, ch := range cmp.Choices {
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		d := ch.Delta
		if !streamed || d == nil {
			d = ch.Message
		}
		if d != nil {
			if d.Refusal != nil && *d.Refusal != "" {
				r.refused = true
			}
			if d.Content != nil && *d.Content != "" {
				if r.schema {
					r.text.WriteString(*d.Content)
				}
				if err := r.stream.Send(&llm.ChatChunk{Delta: *d.Content}); err != nil {
					return err
				}
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			r.reason = finishReason(*ch.FinishReason)
		}
	}
	return nil
}

// finish sends the final chunk, after checking a schema-constrained answer.
func (r *chatReader) finish() error {
	reason := r.reason
	switch {
	case r.refused:
		reason = llm.FinishContentFilter
	case reason == "":
		reason = llm.FinishStop // [DONE] without a finish reason
	}
	if r.schema && reason == llm.FinishStop && !json.Valid(llm.JSONBody(r.text.String())) {
		return protocol.BadRequest("%s: model %q answered text that is not JSON although a response schema was set; this endpoint cannot constrain it", chatLabel, r.model)
	}
	return r.stream.Send(&llm.ChatChunk{
		FinishReason: reason,
		Usage:        r.usage,
		Model:        r.model,
		Metadata:     map[string]string{llm.MetaMethod: llm.MethodGenerative},
	})
}

// finishReason maps an upstream finish reason to the llm ones: tool calls and
// anything unknown count as a normal stop.
func finishReason(s string) string {
	switch s {
	case "length", "max_tokens":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	}
	return llm.FinishStop
}
