package llm

import (
	"context"
	"errors"
	"io"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
)

// grpcClient is the host's view of an LLM plugin.
type grpcClient struct {
	shim.PluginClient
	c pluginv1.LLMProviderClient
}

var _ Provider = (*grpcClient)(nil)

func (c *grpcClient) Chat(ctx context.Context, req *ChatRequest, stream ChatStream) error {
	in := &pluginv1.ChatRequest{
		Credentials: convert.Credentials(req.Credentials),
		Model:       req.Model,
		Temperature: req.Temperature,
		MaxTokens:   int32(req.MaxTokens),
		Stop:        req.Stop,
	}
	for _, m := range req.Messages {
		in.Messages = append(in.Messages, &pluginv1.ChatMessage{Role: m.Role, Content: m.Content})
	}
	if rs := req.ResponseSchema; rs != nil {
		in.ResponseSchema = &pluginv1.JSONSchema{Name: rs.Name, SchemaJson: rs.Schema, Strict: rs.Strict}
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	recv, err := c.c.Chat(callCtx, in)
	if err != nil {
		return convert.StatusToErr(ctx, err)
	}
	for {
		chunk, err := recv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return convert.StatusToErr(ctx, err)
		}
		out := &ChatChunk{Delta: chunk.GetDelta(), FinishReason: chunk.GetFinishReason(), Model: chunk.GetModel(), Metadata: chunk.GetMetadata()}
		if u := chunk.GetUsage(); u != nil {
			out.Usage = &Usage{PromptTokens: u.GetPromptTokens(), CompletionTokens: u.GetCompletionTokens()}
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
}

func (c *grpcClient) Embed(ctx context.Context, req *EmbedRequest) (*EmbedResponse, error) {
	resp, err := shim.Call(ctx, c.c.Embed, &pluginv1.EmbedRequest{
		Credentials: convert.Credentials(req.Credentials), Model: req.Model, Inputs: req.Inputs,
	})
	if err != nil {
		return nil, err
	}
	out := &EmbedResponse{Model: resp.GetModel(), Dimension: int(resp.GetDimension()), Metadata: resp.GetMetadata()}
	for _, v := range resp.GetVectors() {
		out.Vectors = append(out.Vectors, v.GetValues())
	}
	return out, nil
}

func (c *grpcClient) Models(ctx context.Context, req *ModelsRequest) (*ModelsResponse, error) {
	resp, err := shim.Call(ctx, c.c.Models, &pluginv1.ModelsRequest{Credentials: convert.Credentials(req.Credentials)})
	if err != nil {
		return nil, err
	}
	out := &ModelsResponse{}
	for _, m := range resp.GetModels() {
		out.Models = append(out.Models, Model{
			ID: m.GetId(), DisplayName: m.GetDisplayName(), ContextWindow: int(m.GetContextWindow()), Chat: m.GetChat(),
			Embedding: m.GetEmbedding(), EmbeddingDimension: int(m.GetEmbeddingDimension()), JSONSchema: m.GetJsonSchema(),
		})
	}
	return out, nil
}
