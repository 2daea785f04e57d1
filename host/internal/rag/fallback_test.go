package rag_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/learning"
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

// setupAssigned is setup with the answer, summarize, extract, cards and relevance roles assigned to
// OpenAI's gpt-4o-mini, through a gateway at gatewayURL when it is not empty; every
// call of the model fails as an unreachable provider's does.
func setupAssigned(t *testing.T, gatewayURL string) *bundle {
	t.Helper()
	return setupModel(t, gatewayURL, unreachable{extractive.New(nil)})
}

// setupModel is setupAssigned with model answering the calls.
func setupModel(t *testing.T, gatewayURL string, model llm.Provider) *bundle {
	t.Helper()
	b := setup(t)
	keys, err := secrets.NewKeyring("", "")
	require.NoError(t, err)
	settings := userconfig.New(b.pool, keys)
	gw := llmgw.New(llmgw.Config{Settings: settings, Builtin: extractive.New(nil), GatewayURL: gatewayURL, GatewayKey: "gw-key",
		Plugins: func(name string) (llm.Provider, error) {
			if name == "openai" {
				return model, nil
			}
			return nil, llmgw.ErrUnavailable
		},
		Logger: slog.New(slog.DiscardHandler)})
	for _, role := range []string{llmgw.RoleAnswer, llmgw.RoleSummarize, llmgw.RoleExtract, llmgw.RoleCards, llmgw.RoleRelevance} {
		v, err := json.Marshal(llmgw.Assignment{Role: role, Provider: "openai", Model: "gpt-4o-mini"})
		require.NoError(t, err)
		_, err = settings.PutSystem(context.Background(), "llm.roles."+role, v)
		require.NoError(t, err)
	}
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

// The summary of a model that cannot be reached comes from the builtin method, and
// it keeps the notice: the paper's summary, read later, still says why.
func TestSummaryFallsBackWhenTheAssignedModelFails(t *testing.T) {
	t.Parallel()
	b := setupAssigned(t, "")
	paperID := b.ingestPDF(t, b.ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	sum, cached, err := b.svc.Summarize(context.Background(), b.ann, paperID, false)
	require.NoError(t, err)
	require.False(t, cached)
	require.Equal(t, llm.MethodExtractive, sum.Method)
	require.Equal(t, "builtin/extractive", sum.Model)
	require.NotEmpty(t, sum.Summary)
	require.NotNil(t, sum.Fallback)
	require.Equal(t, "summarize", sum.Fallback.Role)
	require.Equal(t, "no API key is set for its provider", sum.Fallback.Reason)
	require.Equal(t, "The model assigned to the summarize role (openai) could not answer: no API key is set for its provider. "+
		"This summary comes from the builtin extractive method instead.", sum.Fallback.Message)

	stored, err := b.svc.LatestSummary(context.Background(), b.ann, paperID)
	require.NoError(t, err)
	require.Equal(t, sum.Fallback, stored.Fallback, "the notice is stored with the summary")
}

// With the provider's key set, the call is made and fails: the notice names the
// cause in words, never the network's text.
func TestExtractionFallsBackWhenTheAssignedModelFails(t *testing.T) {
	t.Parallel()
	b := setupAssigned(t, "http://llm-gateway.internal:4000")
	paperID := b.ingestPDF(t, b.ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

	x, err := b.svc.Extract(context.Background(), b.ann, paperID)
	require.NoError(t, err)
	require.Equal(t, llm.MethodExtractive, x.Method)
	require.NotNil(t, x.Fallback)
	require.Equal(t, rag.Fallback{Role: "extract", Provider: "openai", Model: "gpt-4o-mini", Endpoint: "llm-gateway.internal:4000",
		Reason: "the provider could not be reached",
		Message: "The model assigned to the extract role (openai at llm-gateway.internal:4000) could not answer: the provider could not be reached. " +
			"These items come from the builtin extractive method instead."}, *x.Fallback)

	stored, err := b.svc.Extraction(context.Background(), b.ann, paperID)
	require.NoError(t, err)
	require.Equal(t, x.Fallback, stored.Fallback)
	require.Len(t, stored.Items, len(x.Items))
	raw, err := json.Marshal(stored)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "dial tcp")

	// Bob's extraction of the same paper is his own: nothing of Ann's notice.
	_, err = b.svc.Extraction(context.Background(), b.bob, paperID)
	require.ErrorIs(t, err, rag.ErrNotFound)
}

// canned is a model that answers every chat with the same pieces of text and the
// given finish reason.
type canned struct {
	llm.Provider
	pieces []string
	finish string
}

func (c canned) Chat(_ context.Context, _ *llm.ChatRequest, stream llm.ChatStream) error {
	for _, p := range c.pieces {
		if err := stream.Send(&llm.ChatChunk{Delta: p}); err != nil {
			return err
		}
	}
	finish := c.finish
	if finish == "" {
		finish = llm.FinishStop
	}
	return stream.Send(&llm.ChatChunk{FinishReason: finish, Metadata: map[string]string{llm.MetaMethod: llm.MethodGenerative}})
}

// An answer the model gives but that cannot be used (empty, refused, citing only
// passages it was not given) is withdrawn, and the builtin method answers; a
// summary or extraction that is not the JSON asked for is done by the builtin
// method too.
func TestUnusableModelOutputFallsBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		model  canned
		reason string
	}{
		{"empty", canned{pieces: []string{"  "}}, "it returned an empty answer"},
		{"refused", canned{pieces: []string{"I can't help with that."}, finish: llm.FinishContentFilter}, "it refused to answer"},
		{"nothing it was given", canned{pieces: []string{"Motivation dropped [S4", "0] after the programme [S77]."}},
			"its answer cited only passages it had not been given"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Through a gateway, so that no provider key is needed to make the call.
			b := setupModel(t, "http://llm-gateway.internal:4000", tc.model)
			paperID := b.ingestPDF(t, b.ann, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")

			var streamed strings.Builder
			var resets []string
			ans, err := b.svc.AskTo(context.Background(), b.ann, rag.Question{Question: motivation}, rag.Sink{
				Token: func(s string) error { streamed.WriteString(s); return nil },
				Reset: func(msg string) error { resets = append(resets, msg); streamed.Reset(); return nil },
			})
			require.NoError(t, err)
			require.Equal(t, llm.MethodExtractive, ans.Method)
			require.True(t, ans.Answered, ans.Text)
			require.Equal(t, ans.Text, streamed.String(), "after the reset, the stream is the builtin answer")
			require.NotNil(t, ans.Fallback)
			require.Equal(t, tc.reason, ans.Fallback.Reason)
			require.Equal(t, []string{ans.Fallback.Message}, resets, "what the model streamed is withdrawn once")
			for _, c := range ans.Citations {
				require.True(t, c.Verified, "the builtin method quotes verbatim: %s", ans.Text)
			}
			require.NotEmpty(t, ans.Sentences)
			require.NotContains(t, ans.Text, "[S40]")
			require.NotContains(t, ans.Text, "[S77]")

			// The same model answers the JSON tasks with text that is not JSON.
			sum, _, err := b.svc.Summarize(context.Background(), b.ann, paperID, true)
			require.NoError(t, err)
			require.NotNil(t, sum.Fallback)
			require.Equal(t, "summarize", sum.Fallback.Role)
		})
	}
}

// Card drafts fall back like the other roles: a model that cannot be reached, or
// one whose drafts quote nothing the paper says, leaves the builtin method's
// drafts, each quoting its passage.
func TestCardDraftsFallBackWhenTheAssignedModelFails(t *testing.T) {
	t.Parallel()
	passages := []learning.Passage{{ChunkID: uuid.New(), Page: 2, Text: "Reciprocal rank fusion combines several ranked lists " +
		"into one ranking without any training data. Each document scores the sum of one over sixty plus its rank in every list. " +
		"The constant sixty dampens the influence of documents that only one of the lists ranks highly."}}
	made, err := json.Marshal(llm.CardDrafts{Cards: []llm.CardDraft{{Front: "It was invented in ____.", Back: "1987",
		Quote: "Reciprocal rank fusion was first described at a conference in 1987."}}})
	require.NoError(t, err)
	for name, model := range map[string]llm.Provider{
		"unreachable":     unreachable{extractive.New(nil)},
		"quoting nothing": canned{pieces: []string{string(made)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupModel(t, "http://llm-gateway.internal:4000", model)
			drafts, err := b.svc.DraftCards(context.Background(), "Fusion", passages, 3)
			require.NoError(t, err)
			require.NotEmpty(t, drafts, "the builtin method drafted in the model's place")
			for _, d := range drafts {
				require.Equal(t, passages[0].ChunkID, d.ChunkID)
				require.Contains(t, passages[0].Text, d.Source)
			}
		})
	}
}

// Pulse's relevance judgement falls back like the other roles, and the builtin
// judgement tells a paper on the reader's interests from one that is not.
func TestRelevanceFallsBackAndTellsPapersApart(t *testing.T) {
	t.Parallel()
	b := setupAssigned(t, "http://llm-gateway.internal:4000")
	ctx := context.Background()
	interests := "rank fusion for hybrid retrieval: combining lexical and dense rankings"
	on, err := b.svc.JudgeRelevance(ctx, interests, "Reciprocal rank fusion outperforms Condorcet and individual rank learning methods",
		"We show that reciprocal rank fusion, a simple method for combining the document rankings of several retrieval systems, "+
			"outperforms Condorcet fusion and learning to rank for hybrid lexical and dense retrieval.")
	require.NoError(t, err)
	off, err := b.svc.JudgeRelevance(ctx, interests, "Seasonal migration of Arctic terns",
		"We tracked forty terns with geolocators across three breeding seasons and describe their stopover sites.")
	require.NoError(t, err)
	require.Greater(t, on.Relevance, off.Relevance)
	require.GreaterOrEqual(t, off.Relevance, 1)
	require.LessOrEqual(t, on.Relevance, 10)
}
