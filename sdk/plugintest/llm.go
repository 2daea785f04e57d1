package plugintest

import (
	"context"
	"fmt"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func (r *runner) llmChecks() []check {
	return []check{
		{"models_well_formed", r.modelsWellFormed},
		{"typed_errors", r.llmTypedErrors},
	}
}

func (r *runner) provider() llm.Provider { return r.conn.Plugin.(llm.Provider) }

func (r *runner) modelsWellFormed(ctx context.Context) error {
	resp, err := r.provider().Models(ctx, &llm.ModelsRequest{Credentials: r.opts.Credentials})
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	if len(resp.Models) == 0 {
		return fmt.Errorf("models: empty list")
	}
	for _, m := range resp.Models {
		if m.ID == "" {
			return fmt.Errorf("models: a model has no id")
		}
		if !m.Chat && !m.Embedding {
			return fmt.Errorf("models: %q is neither a chat nor an embedding model", m.ID)
		}
		if m.Embedding && m.EmbeddingDimension <= 0 {
			return fmt.Errorf("models: embedding model %q has no dimension", m.ID)
		}
	}
	return nil
}

func (r *runner) llmTypedErrors(ctx context.Context) error {
	_, err := r.provider().Embed(ctx, &llm.EmbedRequest{Credentials: r.opts.Credentials})
	return wantCode("embed with no inputs", err, protocol.ErrBadRequest)
}
