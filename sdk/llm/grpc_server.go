package llm

import (
	"context"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
)

// grpcServer serves the LLMProvider service by calling the implementation.
type grpcServer struct {
	pluginv1.UnimplementedLLMProviderServer
	impl Provider
}

func (s *grpcServer) Chat(req *pluginv1.ChatRequest, srv pluginv1.LLMProvider_ChatServer) error {
	in := &ChatRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Model:       req.GetModel(),
		Temperature: req.Temperature,
		MaxTokens:   int(req.GetMaxTokens()),
		Stop:        req.GetStop(),
	}
	for _, m := range req.GetMessages() {
		in.Messages = append(in.Messages, Message{Role: m.GetRole(), Content: m.GetContent()})
	}
	if rs := req.GetResponseSchema(); rs != nil {
		in.ResponseSchema = &JSONSchema{Name: rs.GetName(), Schema: rs.GetSchemaJson(), Strict: rs.GetStrict()}
	}
	err := s.impl.Chat(srv.Context(), in, ChatStreamFunc(func(c *ChatChunk) error {
		out := &pluginv1.ChatChunk{Delta: c.Delta, FinishReason: c.FinishReason, Model: c.Model, Metadata: c.Metadata}
		if c.Usage != nil {
			out.Usage = &pluginv1.Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
		}
		return srv.Send(out)
	}))
	return convert.ErrToStatus(err)
}

func (s *grpcServer) Embed(ctx context.Context, req *pluginv1.EmbedRequest) (*pluginv1.EmbedResponse, error) {
	resp, err := s.impl.Embed(ctx, &EmbedRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Model:       req.GetModel(),
		Inputs:      req.GetInputs(),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.EmbedResponse{Model: resp.Model, Dimension: int32(resp.Dimension), Metadata: resp.Metadata}
	for _, v := range resp.Vectors {
		out.Vectors = append(out.Vectors, &pluginv1.Vector{Values: v})
	}
	return out, nil
}

func (s *grpcServer) Models(ctx context.Context, req *pluginv1.ModelsRequest) (*pluginv1.ModelsResponse, error) {
	resp, err := s.impl.Models(ctx, &ModelsRequest{Credentials: convert.CredentialsFrom(req.GetCredentials())})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	out := &pluginv1.ModelsResponse{}
	for _, m := range resp.Models {
		out.Models = append(out.Models, &pluginv1.Model{
			Id: m.ID, DisplayName: m.DisplayName, ContextWindow: int32(m.ContextWindow), Chat: m.Chat,
			Embedding: m.Embedding, EmbeddingDimension: int32(m.EmbeddingDimension), JsonSchema: m.JSONSchema,
		})
	}
	return out, nil
}
