package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

const embedLabel = "embeddings"

// embedBatch is how many inputs go into one request. OpenAI accepts up to 2048;
// local runtimes embed a request's inputs in one go, so smaller batches keep each
// request within the timeout.
const embedBatch = 256

type embedBody struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embedList is the answer of POST /embeddings: {"object": "list", "data":
// [{"object": "embedding", "index", "embedding": [...]}], "model", "usage"}.
type embedList struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// Embed embeds the inputs through POST /embeddings, embedBatch inputs a request,
// and returns the vectors in input order (by each answer's "index").
func (o *OpenAI) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	if len(req.Inputs) == 0 {
		return nil, protocol.BadRequest("%s: no inputs", embedLabel)
	}
	c, err := o.call(req.Credentials)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(req.Model)
	if model == "" {
		model = c.s.embedModel
	}
	if model == "" {
		return nil, protocol.BadRequest("%s: no model given and no default_embedding_model set", embedLabel)
	}
	out := &llm.EmbedResponse{
		Vectors:  make([][]float32, 0, len(req.Inputs)),
		Model:    model,
		Metadata: map[string]string{llm.MetaMethod: llm.MethodNeural},
	}
	for start := 0; start < len(req.Inputs); start += embedBatch {
		batch := req.Inputs[start:min(start+embedBatch, len(req.Inputs))]
		vecs, answered, err := o.embed(ctx, c, model, batch)
		if err != nil {
			return nil, err
		}
		if answered != "" && start == 0 {
			out.Model = answered
		}
		out.Vectors = append(out.Vectors, vecs...)
	}
	out.Dimension = len(out.Vectors[0])
	for i, v := range out.Vectors {
		if len(v) == 0 || len(v) != out.Dimension {
			return nil, protocol.Unavailable(nil, "%s: model %q answered vectors of different lengths (%d for input 0, %d for input %d)",
				embedLabel, out.Model, out.Dimension, len(v), i)
		}
	}
	return out, nil
}

// embed runs one batch and orders its vectors by index.
func (o *OpenAI) embed(ctx context.Context, c *call, model string, inputs []string) ([][]float32, string, error) {
	body, err := json.Marshal(embedBody{Model: model, Input: inputs})
	if err != nil {
		return nil, "", protocol.BadRequest("%s: %v", embedLabel, err)
	}
	var list embedList
	if err := o.getJSON(ctx, c, &request{method: http.MethodPost, path: "/embeddings", label: embedLabel, body: body}, &list); err != nil {
		return nil, "", err
	}
	if len(list.Data) != len(inputs) {
		return nil, "", protocol.Unavailable(nil, "%s: %d vectors answered for %d inputs", embedLabel, len(list.Data), len(inputs))
	}
	vecs := make([][]float32, len(inputs))
	for _, d := range list.Data {
		if d.Index < 0 || d.Index >= len(inputs) || vecs[d.Index] != nil {
			return nil, "", protocol.Unavailable(nil, "%s: answer has a missing, repeated or out-of-range index %d", embedLabel, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, "", protocol.Unavailable(nil, "%s: answer has an empty vector at index %d", embedLabel, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, list.Model, nil
}
