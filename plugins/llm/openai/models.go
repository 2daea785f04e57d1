package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
)

const modelsLabel = "models"

// maxModelPages bounds the pages Models follows.
const maxModelPages = 20

// knownDimensions are the vector lengths of well-known embedding models, by id
// without gateway prefix or runtime tag. The embedding_dimensions setting adds to
// and overrides them.
var knownDimensions = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
	"nomic-embed-text":       768,
	"mxbai-embed-large":      1024,
	"text-embedding-004":     768,  // Google
	"gemini-embedding-001":   3072, // Google, at its default output size
}

// notText are id prefixes of models an OpenAI-compatible /models lists that
// neither chat nor embed (speech, images, moderation, legacy completions).
var notText = []string{
	"whisper", "tts-", "dall-e", "gpt-image", "sora", "omni-moderation", "text-moderation", "babbage-", "davinci-",
}

// modelList is the answer of GET /models: {"object": "list", "data": [{"id",
// "object": "model", "created", "owned_by"}]}. Anthropic's adds display_name and
// pages with has_more and last_id; vLLM's adds max_model_len.
type modelList struct {
	Data []struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		MaxModelLen int    `json:"max_model_len"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

// Models lists GET /models (following Anthropic-style pages). Ids containing
// "embed", or named in embedding_dimensions, are embedding models; those whose
// vector length is unknown are left out, since a caller cannot use an embedding
// model without it. Speech, image and moderation models are left out; everything
// else is a chat model. An endpoint without /models (404) lists the configured
// default models instead, when there are any.
func (o *OpenAI) Models(ctx context.Context, req *llm.ModelsRequest) (*llm.ModelsResponse, error) {
	c, err := o.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	var all modelList
	after := ""
	for page := 0; page < maxModelPages; page++ {
		path := "/models"
		if after != "" {
			path += "?after_id=" + url.QueryEscape(after)
		}
		var list modelList
		if err := o.getJSON(ctx, c, &request{method: http.MethodGet, path: path, label: modelsLabel}, &list); err != nil {
			if page == 0 && upstreamStatus(err) == http.StatusNotFound {
				if fallback := c.defaultModels(); len(fallback) > 0 {
					o.log.DebugContext(ctx, "no model list upstream; listing the default models", "error", err.Error())
					return &llm.ModelsResponse{Models: fallback}, nil
				}
			}
			return nil, err
		}
		all.Data = append(all.Data, list.Data...)
		if !list.HasMore || list.LastID == "" || list.LastID == after {
			break
		}
		after = list.LastID
	}
	seen := map[string]bool{}
	var out []llm.Model
	for _, d := range all.Data {
		id := strings.TrimSpace(d.ID)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		m, ok := c.describe(id)
		if !ok {
			continue
		}
		if d.DisplayName != "" {
			m.DisplayName = d.DisplayName
		}
		if d.MaxModelLen > 0 {
			m.ContextWindow = d.MaxModelLen
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b llm.Model) int { return strings.Compare(a.ID, b.ID) })
	return &llm.ModelsResponse{Models: out}, nil
}

// describe infers what a model id is; ok is false for a model to leave out.
func (c *call) describe(id string) (m llm.Model, ok bool) {
	m = llm.Model{ID: id, DisplayName: id}
	if dim, isEmbed := c.embeddingDimension(id); isEmbed {
		m.Embedding, m.EmbeddingDimension = true, dim
		return m, dim > 0
	}
	base := baseID(id)
	for _, p := range notText {
		if strings.HasPrefix(base, p) {
			return m, false
		}
	}
	if strings.Contains(base, "-transcribe") || strings.Contains(base, "-tts") {
		return m, false
	}
	m.Chat, m.JSONSchema = true, c.honoursJSONSchema()
	return m, true
}

// embeddingDimension says whether id is an embedding model and its vector
// length, 0 when unknown: the setting first (by exact id, then base id), then
// the known table.
func (c *call) embeddingDimension(id string) (dim int, isEmbed bool) {
	base := baseID(id)
	for _, k := range []string{id, base} {
		if d, ok := c.s.dims[k]; ok {
			return d, true
		}
	}
	if !strings.Contains(base, "embed") {
		return 0, false
	}
	return knownDimensions[base], true
}

// defaultModels are the configured default models, for an endpoint that lists
// none. An embedding default of unknown length is left out.
func (c *call) defaultModels() []llm.Model {
	var out []llm.Model
	if id := c.s.chatModel; id != "" {
		out = append(out, llm.Model{ID: id, DisplayName: id, Chat: true, JSONSchema: c.honoursJSONSchema()})
	}
	if id := c.s.embedModel; id != "" {
		dim, _ := c.embeddingDimension(id)
		if dim > 0 {
			out = append(out, llm.Model{ID: id, DisplayName: id, Embedding: true, EmbeddingDimension: dim})
		}
	}
	return out
}

// baseID lowercases a model id and strips what gateways and runtimes add around
// the model's own name: a provider prefix ("openai/", "models/") and a tag
// (Ollama's ":latest").
func baseID(id string) string {
	id = strings.ToLower(id)
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	if i := strings.Index(id, ":"); i >= 0 {
		id = id[:i]
	}
	return id
}
