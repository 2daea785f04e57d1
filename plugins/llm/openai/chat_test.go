package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func chatRequest() *llm.ChatRequest {
	temp := 0.2
	return &llm.ChatRequest{
		Credentials: creds(),
		Model:       "gpt-4o-mini",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "Task: answer\nAnswer from the documents."},
			{Role: llm.RoleUser, Content: "<question>\nWhat is a GNN?\n</question>"},
		},
		Temperature: &temp,
		MaxTokens:   256,
		Stop:        []string{"\n\n\n"},
	}
}

// finalChunk checks that chunks end in exactly one final chunk and returns it
// with the concatenated text.
func finalChunk(t *testing.T, chunks []*llm.ChatChunk) (string, *llm.ChatChunk) {
	t.Helper()
	require.NotEmpty(t, chunks)
	var text strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		require.Empty(t, c.FinishReason, "only the last chunk has a finish reason")
		require.NotEmpty(t, c.Delta)
		text.WriteString(c.Delta)
	}
	last := chunks[len(chunks)-1]
	require.NotEmpty(t, last.FinishReason)
	require.Empty(t, last.Delta)
	require.Equal(t, map[string]string{llm.MetaMethod: llm.MethodGenerative}, last.Metadata)
	return text.String(), last
}

func TestChatStream(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, fixture(t, "chat_stream.txt", "text/event-stream"))
	chunks, err := collect(t.Context(), b.p, chatRequest())
	require.NoError(t, err)
	require.Len(t, chunks, 4, "three deltas and the final chunk")
	require.Equal(t, []string{"Graph", " neural", " networks [S1]."}, []string{chunks[0].Delta, chunks[1].Delta, chunks[2].Delta})
	text, last := finalChunk(t, chunks)
	require.Equal(t, "Graph neural networks [S1].", text)
	require.Equal(t, llm.FinishStop, last.FinishReason)
	require.Equal(t, &llm.Usage{PromptTokens: 412, CompletionTokens: 7}, last.Usage, "from the usage-only chunk")
	require.Equal(t, "gpt-4o-mini-2024-07-18", last.Model, "the model that answered")

	reqs := b.up.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "/chat/completions", r.path)
	require.Equal(t, "Bearer "+testKey, r.header.Get("Authorization"))
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, "text/event-stream", r.header.Get("Accept"))
	require.JSONEq(t, `{
		"model": "gpt-4o-mini",
		"messages": [
			{"role": "system", "content": "Task: answer\nAnswer from the documents."},
			{"role": "user", "content": "<question>\nWhat is a GNN?\n</question>"}
		],
		"stream": true,
		"stream_options": {"include_usage": true},
		"temperature": 0.2,
		"max_tokens": 256,
		"stop": ["\n\n\n"]
	}`, string(r.body))
}

func TestChatWhole(t *testing.T) {
	t.Parallel()
	// Servers that ignore "stream" answer a whole chat.completion, labelled JSON
	// or not.
	for _, ct := range []string{"application/json", "text/plain"} {
		t.Run(ct, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, fixture(t, "chat_completion.json", ct))
			chunks, err := collect(t.Context(), b.p, chatRequest())
			require.NoError(t, err)
			require.Len(t, chunks, 2)
			text, last := finalChunk(t, chunks)
			require.Equal(t, "Graph neural networks pass messages along edges", text)
			require.Equal(t, llm.FinishLength, last.FinishReason)
			require.Equal(t, &llm.Usage{PromptTokens: 120, CompletionTokens: 8}, last.Usage)
			require.Equal(t, "llama3.1:8b", last.Model)
		})
	}
}

func TestChatStreamShapes(t *testing.T) {
	t.Parallel()
	chunk := func(content, finish string) string {
		c := map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}
		if finish != "" {
			c["finish_reason"] = finish
		}
		b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk", "model": "m-served", "choices": []any{c}})
		return string(b)
	}
	tests := []struct {
		name       string
		body       string
		wantText   string
		wantFinish string
		wantUsage  *llm.Usage
		wantErr    *protocol.Error
	}{
		{
			name:     "CRLF, comments, no space after data:, finish without [DONE]",
			body:     ": keep-alive\r\n\r\ndata:" + chunk("a", "") + "\r\n\r\nevent: message\r\ndata: " + chunk("b", "tool_calls") + "\r\n\r\n",
			wantText: "ab", wantFinish: llm.FinishStop,
		},
		{
			name:     "usage in the finishing chunk, last event without a blank line",
			body:     "data: " + chunk("x", "") + "\n\ndata: " + `{"model":"m-served","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
			wantText: "x", wantFinish: llm.FinishContentFilter, wantUsage: &llm.Usage{PromptTokens: 3, CompletionTokens: 1},
		},
		{
			name:     "[DONE] without a finish reason is a stop",
			body:     "data: " + chunk("x", "") + "\n\ndata: [DONE]\n\n",
			wantText: "x", wantFinish: llm.FinishStop,
		},
		{
			name:       "refusal",
			body:       "data: " + `{"model":"m-served","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":null}]}` + "\n\ndata: " + chunk("", "stop") + "\n\ndata: [DONE]\n\n",
			wantFinish: llm.FinishContentFilter,
		},
		{
			name:    "cut off before the answer ended",
			body:    "data: " + chunk("x", "") + "\n\n",
			wantErr: protocol.ErrUnavailable,
		},
		{
			name:    "not JSON",
			body:    "data: {oops\n\n",
			wantErr: protocol.ErrUnavailable,
		},
		{
			name:    "vLLM error object mid-stream",
			body:    "data: " + chunk("x", "") + "\n\ndata: " + `{"object":"error","message":"context length exceeded","type":"BadRequestError","code":400}` + "\n\n",
			wantErr: protocol.ErrBadRequest,
		},
		{
			name:    "rate limit mid-stream",
			body:    "data: " + `{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}` + "\n\n",
			wantErr: protocol.ErrRateLimited,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, reply(http.StatusOK, map[string]string{"Content-Type": "text/event-stream"}, tc.body))
			chunks, err := collect(t.Context(), b.p, chatRequest())
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				for _, c := range chunks {
					require.Empty(t, c.FinishReason, "no final chunk after an error")
				}
				return
			}
			require.NoError(t, err)
			text, last := finalChunk(t, chunks)
			require.Equal(t, tc.wantText, text)
			require.Equal(t, tc.wantFinish, last.FinishReason)
			require.Equal(t, tc.wantUsage, last.Usage)
			require.Equal(t, "m-served", last.Model)
		})
	}
}

func TestChatMidStreamError(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, fixture(t, "chat_stream_error.txt", "text/event-stream"))
	chunks, err := collect(t.Context(), b.p, chatRequest())
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.ErrorContains(t, err, "The server had an error while processing your request")
	require.Equal(t, []*llm.ChatChunk{{Delta: "Partial"}, {Delta: " answer"}}, chunks, "the deltas before the error, and no final chunk")
	require.Len(t, b.up.requests(), 1, "a stream that failed midway is not retried")
}

func TestChatResponseSchema(t *testing.T) {
	t.Parallel()
	schema := llm.Schema(llm.TaskRelevance)
	stream := func(text, finish string) string {
		c, _ := json.Marshal(map[string]any{"model": "m", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}}}})
		f, _ := json.Marshal(map[string]any{"model": "m", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
		return "data: " + string(c) + "\n\ndata: " + string(f) + "\n\ndata: [DONE]\n\n"
	}
	t.Run("request body", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream(`{"relevance":7,"novelty":4,"reason":"on topic"}`, "stop")))
		req := chatRequest()
		req.ResponseSchema = schema
		resp, err := llm.Collect(t.Context(), b.p, req)
		require.NoError(t, err)
		require.JSONEq(t, `{"relevance":7,"novelty":4,"reason":"on topic"}`, resp.Text)

		var body map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b.up.requests()[0].body, &body))
		require.JSONEq(t, `{"type":"json_schema","json_schema":{"name":"lectern_relevance","strict":true,"schema":`+string(schema.Schema)+`}}`, string(body["response_format"]))
	})
	t.Run("unnamed schema gets a name", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream(`{}`, "stop")))
		req := chatRequest()
		req.ResponseSchema = &llm.JSONSchema{Schema: []byte(`{"type":"object"}`)}
		_, err := llm.Collect(t.Context(), b.p, req)
		require.NoError(t, err)
		require.Contains(t, string(b.up.requests()[0].body), `"json_schema":{"name":"response","schema":{"type":"object"},"strict":false}`)
	})
	t.Run("prose where JSON was asked for", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream("Sure! Here is the JSON: {", "stop")))
		req := chatRequest()
		req.ResponseSchema = schema
		_, err := llm.Collect(t.Context(), b.p, req)
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.ErrorContains(t, err, "not JSON")
	})
	t.Run("JSON in a Markdown fence is accepted", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream("```json\n{\"relevance\":7,\"novelty\":3,\"reason\":\"r\"}\n```", "stop")))
		req := chatRequest()
		req.ResponseSchema = schema
		resp, err := llm.Collect(t.Context(), b.p, req)
		require.NoError(t, err)
		require.JSONEq(t, `{"relevance":7,"novelty":3,"reason":"r"}`, string(llm.JSONBody(resp.Text)))
	})
	t.Run("a cut-off answer keeps its finish reason", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream(`{"relevance":7,"nov`, "length")))
		req := chatRequest()
		req.ResponseSchema = schema
		resp, err := llm.Collect(t.Context(), b.p, req)
		require.NoError(t, err)
		require.Equal(t, llm.FinishLength, resp.FinishReason)
	})
	t.Run("schema that is not JSON is refused before any request", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, reply(http.StatusOK, nil, stream("{}", "stop")))
		req := chatRequest()
		req.ResponseSchema = &llm.JSONSchema{Name: "x", Schema: []byte(`{"type":`)}
		_, err := llm.Collect(t.Context(), b.p, req)
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.Empty(t, b.up.requests())
	})
}

func TestChatRequestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, baseURL, param string
		want                 string // the field that carries MaxTokens
	}{
		{"OpenAI, auto", "https://api.openai.com/v1", maxTokensAuto, maxCompletionTokensField},
		{"Ollama, auto", "http://127.0.0.1:11434/v1", maxTokensAuto, maxTokensField},
		{"Anthropic, auto", "https://api.anthropic.com/v1", maxTokensAuto, maxTokensField},
		{"gateway forced to max_completion_tokens", "https://litellm.internal/v1", maxCompletionTokensField, maxCompletionTokensField},
		{"OpenAI forced to max_tokens", "https://api.openai.com/v1", maxTokensField, maxTokensField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := defaultSettings()
			s.maxOutputField = tc.param
			body, err := chatRequestBody(&call{s: s, baseURL: tc.baseURL}, "m", &llm.ChatRequest{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, MaxTokens: 99,
			})
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(body, &got))
			require.EqualValues(t, 99, got[tc.want])
			other := maxTokensField
			if tc.want == maxTokensField {
				other = maxCompletionTokensField
			}
			require.NotContains(t, got, other)
			require.NotContains(t, got, "temperature", "no temperature unless asked")
			require.NotContains(t, got, "response_format")
		})
	}
}

func TestChatRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(r *llm.ChatRequest)
		want   string
	}{
		{"no messages", func(r *llm.ChatRequest) { r.Messages = nil }, "no messages"},
		{"unknown role", func(r *llm.ChatRequest) { r.Messages[0].Role = "tool" }, `role "tool"`},
		{"negative max tokens", func(r *llm.ChatRequest) { r.MaxTokens = -1 }, "negative"},
		{"no model and no default", func(r *llm.ChatRequest) { r.Model = "" }, "default_chat_model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, fixture(t, "chat_stream.txt", "text/event-stream"))
			req := chatRequest()
			tc.change(req)
			_, err := collect(t.Context(), b.p, req)
			require.ErrorIs(t, err, protocol.ErrBadRequest)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, b.up.requests())
		})
	}
	t.Run("default model", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"default_chat_model": "llama3.1:8b"}, fixture(t, "chat_stream.txt", "text/event-stream"))
		req := chatRequest()
		req.Model = ""
		_, err := collect(t.Context(), b.p, req)
		require.NoError(t, err)
		require.Contains(t, string(b.up.requests()[0].body), `"model":"llama3.1:8b"`)
	})
}

func TestChatSendFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, fixture(t, "chat_stream.txt", "text/event-stream"))
	gone := errors.New("receiver gone")
	sent := 0
	err := b.p.Chat(t.Context(), chatRequest(), llm.ChatStreamFunc(func(*llm.ChatChunk) error {
		sent++
		return gone
	}))
	require.ErrorIs(t, err, gone)
	require.Equal(t, 1, sent, "Chat stops at the first failed Send")
}

func TestChatCancellation(t *testing.T) {
	t.Parallel()
	// stall sends one delta, then holds the stream open until the request ends.
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(`data: {"model":"m","choices":[{"index":0,"delta":{"content":"first"}}]}` + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	t.Run("cancelled while streaming", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, stall)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		var got []string
		err := b.p.Chat(ctx, chatRequest(), llm.ChatStreamFunc(func(c *llm.ChatChunk) error {
			got = append(got, c.Delta)
			cancel() // the caller leaves after the first delta
			return nil
		}))
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, []string{"first"}, got)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("deadline while waiting for the answer", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := collect(ctx, b.p, chatRequest())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
		require.Len(t, b.up.requests(), 1, "a cancelled call is not retried")
	})
	t.Run("cancelled during a retry wait", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"max_backoff": "1h"}, reply(http.StatusTooManyRequests, map[string]string{"Retry-After": "3600"}, ""))
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := collect(ctx, b.p, chatRequest())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Less(t, time.Since(start), time.Second)
	})
	t.Run("stalled stream hits the timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"timeout": "100ms"}, stall)
		start := time.Now()
		chunks, err := collect(t.Context(), b.p, chatRequest())
		require.ErrorIs(t, err, protocol.ErrUnavailable)
		require.ErrorContains(t, err, "no data for 100ms")
		require.Len(t, chunks, 1)
		require.Less(t, time.Since(start), time.Second)
	})
}

// TestChatTimeoutIsPerPiece checks that a slow but steady stream outlives the
// timeout: it bounds the wait for each piece, not the whole answer.
func TestChatTimeoutIsPerPiece(t *testing.T) {
	t.Parallel()
	// Pieces 100 ms apart for 800 ms in all, twice the 400 ms timeout; the slack
	// per piece is wide enough for a loaded machine.
	b := setup(t, map[string]any{"timeout": "400ms"}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			_, _ = w.Write([]byte(`data: {"model":"m","choices":[{"index":0,"delta":{"content":"."}}]}` + "\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = w.Write([]byte(`data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
	})
	resp, err := llm.Collect(t.Context(), b.p, chatRequest())
	require.NoError(t, err)
	require.Equal(t, "........", resp.Text)
}
