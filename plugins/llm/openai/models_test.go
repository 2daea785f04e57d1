package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestModels(t *testing.T) {
	t.Parallel()
	chat := func(id string) llm.Model { return llm.Model{ID: id, DisplayName: id, Chat: true, JSONSchema: true} }
	embed := func(id string, dim int) llm.Model {
		return llm.Model{ID: id, DisplayName: id, Embedding: true, EmbeddingDimension: dim}
	}
	tests := []struct {
		name  string
		extra map[string]any
		want  []llm.Model
	}{
		{
			name: "inferred from the ids",
			want: []llm.Model{
				chat("gpt-4o"), chat("gpt-4o-mini"),
				embed("nomic-embed-text:latest", 768), embed("text-embedding-3-small", 1536),
				// acme-embed-v2 has no known length: left out. Speech, image and
				// moderation models: left out. The repeated gpt-4o-mini: once.
			},
		},
		{
			name:  "dimensions from the settings",
			extra: map[string]any{"embedding_dimensions": map[string]any{"acme-embed-v2": float64(512), "text-embedding-3-small": float64(512)}},
			want: []llm.Model{
				embed("acme-embed-v2", 512), chat("gpt-4o"), chat("gpt-4o-mini"),
				embed("nomic-embed-text:latest", 768), embed("text-embedding-3-small", 512),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.extra, fixture(t, "models.json", "application/json"))
			resp, err := b.p.Models(t.Context(), &llm.ModelsRequest{Credentials: creds()})
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.Models)
			r := b.up.requests()[0]
			require.Equal(t, http.MethodGet, r.method)
			require.Equal(t, "/models", r.path)
			require.Equal(t, "Bearer "+testKey, r.header.Get("Authorization"))
		})
	}
}

func TestModelsAnthropicPages(t *testing.T) {
	t.Parallel()
	page1 := `{"data":[{"type":"model","id":"claude-opus-4-1","display_name":"Claude Opus 4.1","created_at":"2025-08-05T00:00:00Z"}],"has_more":true,"first_id":"claude-opus-4-1","last_id":"claude-opus-4-1"}`
	page2 := `{"data":[{"type":"model","id":"claude-haiku-4-5","display_name":"Claude Haiku 4.5","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-haiku-4-5","last_id":"claude-haiku-4-5"}`
	up := newFake(t, reply(http.StatusOK, nil, page2), reply(http.StatusOK, nil, page1))
	p := configured(t, "http://127.0.0.1:1", nil)
	// The fake is reached through the credential base URL; it is not
	// api.anthropic.com, so JSONSchema stays true.
	resp, err := p.Models(t.Context(), &llm.ModelsRequest{Credentials: map[string]string{llm.CredBaseURL: up.srv.URL + "/v1"}})
	require.NoError(t, err)
	require.Equal(t, []llm.Model{
		{ID: "claude-haiku-4-5", DisplayName: "Claude Haiku 4.5", Chat: true, JSONSchema: true},
		{ID: "claude-opus-4-1", DisplayName: "Claude Opus 4.1", Chat: true, JSONSchema: true},
	}, resp.Models)
	reqs := up.requests()
	require.Len(t, reqs, 2)
	require.Empty(t, reqs[0].query)
	require.Equal(t, "after_id=claude-opus-4-1", reqs[1].query)
}

func TestModelsVLLMContextWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, reply(http.StatusOK, nil, `{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","owned_by":"vllm","max_model_len":32768}]}`))
	resp, err := b.p.Models(t.Context(), &llm.ModelsRequest{})
	require.NoError(t, err)
	require.Equal(t, []llm.Model{{ID: "Qwen/Qwen2.5-7B-Instruct", DisplayName: "Qwen/Qwen2.5-7B-Instruct", ContextWindow: 32768, Chat: true, JSONSchema: true}}, resp.Models)
}

func TestModelsWithoutEndpoint(t *testing.T) {
	t.Parallel()
	notFound := reply(http.StatusNotFound, nil, `{"error":{"message":"Not Found"}}`)
	t.Run("lists the defaults", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"default_chat_model": "local-chat", "default_embedding_model": "mxbai-embed-large"}, notFound)
		resp, err := b.p.Models(t.Context(), &llm.ModelsRequest{})
		require.NoError(t, err)
		require.Equal(t, []llm.Model{
			{ID: "local-chat", DisplayName: "local-chat", Chat: true, JSONSchema: true},
			{ID: "mxbai-embed-large", DisplayName: "mxbai-embed-large", Embedding: true, EmbeddingDimension: 1024},
		}, resp.Models)
	})
	t.Run("without defaults the error stays", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, notFound)
		_, err := b.p.Models(t.Context(), &llm.ModelsRequest{})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.ErrorContains(t, err, "HTTP 404")
	})
}

func TestDescribeModel(t *testing.T) {
	t.Parallel()
	s := defaultSettings()
	s.dims = map[string]int{"bge-m3": 1024}
	tests := []struct {
		id, baseURL string
		want        llm.Model
		listed      bool
	}{
		{"gpt-4o-mini", defaultBaseURL, llm.Model{Chat: true, JSONSchema: true}, true},
		{"openai/text-embedding-3-large", defaultBaseURL, llm.Model{Embedding: true, EmbeddingDimension: 3072}, true},
		{"models/text-embedding-004", defaultBaseURL, llm.Model{Embedding: true, EmbeddingDimension: 768}, true},
		{"MXBAI-EMBED-LARGE:335m", defaultBaseURL, llm.Model{Embedding: true, EmbeddingDimension: 1024}, true},
		{"bge-m3", defaultBaseURL, llm.Model{Embedding: true, EmbeddingDimension: 1024}, true},
		{"text-embedding-ada-002", defaultBaseURL, llm.Model{Embedding: true, EmbeddingDimension: 1536}, true},
		{"some-embedder", defaultBaseURL, llm.Model{}, false},
		{"gpt-4o-mini-transcribe", defaultBaseURL, llm.Model{}, false},
		{"whisper-1", defaultBaseURL, llm.Model{}, false},
		{"claude-sonnet-4-5", "https://api.anthropic.com/v1", llm.Model{Chat: true, JSONSchema: false}, true},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			c := &call{s: s, baseURL: tc.baseURL}
			m, ok := c.describe(tc.id)
			require.Equal(t, tc.listed, ok)
			if !ok {
				return
			}
			tc.want.ID, tc.want.DisplayName = tc.id, tc.id
			require.Equal(t, tc.want, m)
		})
	}
}
