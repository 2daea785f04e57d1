package rag_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// unreachable is a provider plugin whose every chat fails as a provider does when
// its host cannot be resolved.
type unreachable struct{ llm.Provider }

func (unreachable) Chat(context.Context, *llm.ChatRequest, llm.ChatStream) error {
	return &protocol.Error{Code: protocol.CodeUnavailable, Message: "Post \"https://api.openai.com/v1/chat/completions\": dial tcp: lookup api.openai.com on 10.255.255.53:53: no such host"}
}

// setupAssigned is setup with the answer role assigned to OpenAI's gpt-4o-mini,
// through a gateway at gatewayURL when it is not empty.
func setupAssigned(t *testing.T, gatewayURL string) *bundle {
	t.Helper()
	b := setup(t)
	keys, err := secrets.NewKeyring("", "")
	require.NoError(t, err)
	settings := userconfig.New(b.pool, keys)
	gw := llmgw.New(llmgw.Config{Settings: settings, Builtin: extractive.New(nil), GatewayURL: gatewayURL, GatewayKey: "gw-key",
		Plugins: func(name string) (llm.Provider, error) {
			if name == "openai" {
				return unreachable{extractive.New(nil)}, nil
			}
			return nil, llmgw.ErrUnavailable
		},
		Logger: slog.New(slog.DiscardHandler)})
	v, err := json.Marshal(llmgw.Assignment{Role: llmgw.RoleAnswer, Provider: "openai", Model: "gpt-4o-mini"})
	require.NoError(t, err)
	_, err = settings.PutSystem(context.Background(), "llm.roles."+llmgw.RoleAnswer, v)
	require.NoError(t, err)
	vectors := embedded.New(b.pool)
	embedder := llmgw.Embedder{G: gw}
	b.svc = &rag.Service{Pool: b.pool, Retriever: retrieve.New(b.pool, embedder, vectors), GW: gw, Logger: slog.New(slog.DiscardHandler)}
	b.worker = &ingest.Worker{Pool: b.pool, Store: ingest.NewStore(filepath.Join(t.TempDir(), "pdfs")), Logger: slog.New(slog.DiscardHandler),
		Embedder: embedder, Vectors: vectors}
	return b
}

const motivation = "Why did participants find it difficult to remain motivated to maintain exercise when the programme ended?"

// When the assigned model's calls fail, the builtin method answers and the answer
// says which role, provider and endpoint failed and why, in words: no network text.
func TestAskFallsBackWhenTheAssignedModelFails(t *testing.T) {
	t.Parallel()
	b := setupAssigned(t, "http://llm-gateway.internal:4000")
	b.ingestPDF(t, b.ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	ans, streamed := collect(t, b, b.ann, rag.Question{Question: motivation})
	require.True(t, ans.Answered, ans.Text)
	require.Equal(t, ans.Text, streamed)
	require.Equal(t, llm.MethodExtractive, ans.Method)
	require.NotNil(t, ans.Fallback)
	require.Equal(t, rag.Fallback{Role: "answer", Provider: "openai", Model: "gpt-4o-mini", Endpoint: "llm-gateway.internal:4000",
		Reason: "the provider could not be reached",
		Message: "The model assigned to the answer role (openai at llm-gateway.internal:4000) could not answer: the provider could not be reached. " +
			"This answer comes from the builtin extractive method instead."}, *ans.Fallback)
	raw, err := json.Marshal(ans)
	require.NoError(t, err)
	for _, leak := range []string{"dial tcp", "lookup", "10.255.255.53", "no such host"} {
		require.NotContains(t, string(raw), leak)
	}
}

// A model that cannot even be called (no key set) falls back too.
func TestAskFallsBackWhenTheAssignedModelHasNoKey(t *testing.T) {
	t.Parallel()
	b := setupAssigned(t, "")
	b.ingestPDF(t, b.ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	ans, _ := collect(t, b, b.ann, rag.Question{Question: motivation})
	require.True(t, ans.Answered, ans.Text)
	require.NotNil(t, ans.Fallback)
	require.Equal(t, "openai", ans.Fallback.Provider)
	require.Empty(t, ans.Fallback.Endpoint)
	require.Equal(t, "no API key is set for its provider", ans.Fallback.Reason)
}
