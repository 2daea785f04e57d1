package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestEmbedOrdersByIndex(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, fixture(t, "embeddings_out_of_order.json", "application/json"))
	resp, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: creds(), Model: "text-embedding-3-small", Inputs: []string{"a", "b", "c"}})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{0.1, 0.11, 0.12, 0.13}, {0.2, 0.21, 0.22, 0.23}, {0.3, 0.31, 0.32, 0.33}}, resp.Vectors)
	require.Equal(t, 4, resp.Dimension)
	require.Equal(t, "text-embedding-3-small", resp.Model)
	require.Equal(t, map[string]string{llm.MetaMethod: llm.MethodNeural}, resp.Metadata)

	r := b.up.requests()[0]
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "/embeddings", r.path)
	require.Equal(t, "Bearer "+testKey, r.header.Get("Authorization"))
	require.JSONEq(t, `{"model":"text-embedding-3-small","input":["a","b","c"]}`, string(r.body))
}

// indexEcho answers /embeddings with one vector per input, [batch input number,
// input text as a number], listed in reverse order.
func indexEcho(w http.ResponseWriter, r *http.Request) {
	var req embedBody
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var data []map[string]any
	for i := len(req.Input) - 1; i >= 0; i-- {
		n, _ := strconv.Atoi(req.Input[i])
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(i), float32(n)}})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func TestEmbedBatches(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]any{"default_embedding_model": "nomic-embed-text"}, indexEcho)
	inputs := make([]string, 600)
	for i := range inputs {
		inputs[i] = strconv.Itoa(i)
	}
	resp, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Inputs: inputs})
	require.NoError(t, err)
	require.Len(t, resp.Vectors, 600)
	for i, v := range resp.Vectors {
		require.Equal(t, []float32{float32(i % embedBatch), float32(i)}, v, "vector %d", i)
	}
	require.Equal(t, 2, resp.Dimension)
	require.Equal(t, "nomic-embed-text", resp.Model)

	var sizes []int
	for _, r := range b.up.requests() {
		var req embedBody
		require.NoError(t, json.Unmarshal(r.body, &req))
		require.Equal(t, "nomic-embed-text", req.Model, "the default model")
		sizes = append(sizes, len(req.Input))
	}
	require.Equal(t, []int{256, 256, 88}, sizes)
}

func TestEmbedFailures(t *testing.T) {
	t.Parallel()
	vec := func(index int, v ...float32) map[string]any {
		return map[string]any{"object": "embedding", "index": index, "embedding": v}
	}
	list := func(data ...map[string]any) string {
		b, _ := json.Marshal(map[string]any{"object": "list", "data": data, "model": "m"})
		return string(b)
	}
	tests := []struct {
		name   string
		inputs []string
		answer string
		want   *protocol.Error
		msg    string
	}{
		{"lengths differ", []string{"a", "b"}, list(vec(0, 1, 2), vec(1, 1, 2, 3)), protocol.ErrUnavailable, "different lengths"},
		{"fewer vectors than inputs", []string{"a", "b"}, list(vec(0, 1, 2)), protocol.ErrUnavailable, "1 vectors answered for 2 inputs"},
		{"repeated index", []string{"a", "b"}, list(vec(0, 1, 2), vec(0, 1, 2)), protocol.ErrUnavailable, "repeated"},
		{"index out of range", []string{"a"}, list(vec(3, 1, 2)), protocol.ErrUnavailable, "out-of-range"},
		{"empty vector", []string{"a"}, list(vec(0)), protocol.ErrUnavailable, "empty vector"},
		{"error object with a 200", []string{"a"}, `{"error":{"message":"input is too long","type":"invalid_request_error"}}`, protocol.ErrBadRequest, "input is too long"},
		{"not JSON", []string{"a"}, `<html>gateway</html>`, protocol.ErrUnavailable, "unreadable answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil, reply(http.StatusOK, map[string]string{"Content-Type": "application/json"}, tc.answer))
			_, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: creds(), Model: "m", Inputs: tc.inputs})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	t.Run("no inputs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, indexEcho)
		_, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: creds(), Model: "m"})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.Empty(t, b.up.requests())
	})
	t.Run("no model and no default", func(t *testing.T) {
		t.Parallel()
		b := setup(t, nil, indexEcho)
		_, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: creds(), Inputs: []string{"a"}})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.ErrorContains(t, err, "default_embedding_model")
		require.Empty(t, b.up.requests())
	})
	t.Run("a failing batch fails the call", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]any{"max_retries": float64(0)}, reply(http.StatusBadRequest, nil, `{"error":{"message":"batch 2 refused"}}`), indexEcho)
		inputs := make([]string, embedBatch+1)
		for i := range inputs {
			inputs[i] = fmt.Sprint(i)
		}
		_, err := b.p.Embed(t.Context(), &llm.EmbedRequest{Credentials: creds(), Model: "m", Inputs: inputs})
		require.ErrorIs(t, err, protocol.ErrBadRequest)
		require.ErrorContains(t, err, "batch 2 refused")
		require.Len(t, b.up.requests(), 2)
	})
}
