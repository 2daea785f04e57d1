package extractive

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func embedAll(t *testing.T, texts ...string) [][]float32 {
	t.Helper()
	resp, err := New(nil).Embed(t.Context(), &llm.EmbedRequest{Inputs: texts})
	require.NoError(t, err)
	return resp.Vectors
}

// goldenTexts and goldenDigest pin the embedding bit for bit: the digest is the
// SHA-256 of the vectors' float32 bits (little endian). A change here is a change
// of EmbeddingModel: stored vectors would no longer match new ones.
var goldenTexts = []string{
	"Graph neural networks propagate node features along edges.",
	"Die Straße ist naß; ﬁnal résumé of the experi-\nment (25.9 ± 10.9 s).",
	"",
	"the of and",
}

const goldenDigest = "aa56c8ac21bdad9b0c1341b5d12869b3af551bff4d72727dcb8be3f920807bec"

func TestEmbedIsDeterministicAndPinned(t *testing.T) {
	t.Parallel()
	a := embedAll(t, goldenTexts...)
	b := embedAll(t, goldenTexts...)
	require.Equal(t, a, b)
	h := sha256.New()
	for _, v := range a {
		for _, x := range v {
			_ = binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	require.Equal(t, goldenDigest, hex.EncodeToString(h.Sum(nil)), "the embedding changed: that needs a new EmbeddingModel name")
}

func TestEmbedBatchEqualsOneByOne(t *testing.T) {
	t.Parallel()
	inputs := make([]string, 3*embedShare+5)
	for i := range inputs {
		inputs[i] = goldenTexts[i%len(goldenTexts)] + strings.Repeat(" node edge", i%7)
	}
	batch := embedAll(t, inputs...)
	for i, in := range inputs {
		require.Equal(t, embedText(in), batch[i], "input %d", i)
	}
}

func TestEmbedShape(t *testing.T) {
	t.Parallel()
	resp, err := New(nil).Embed(t.Context(), &llm.EmbedRequest{Model: EmbeddingModel, Inputs: goldenTexts})
	require.NoError(t, err)
	require.Equal(t, EmbeddingModel, resp.Model)
	require.Equal(t, Dimension, resp.Dimension)
	require.Equal(t, map[string]string{llm.MetaMethod: llm.MethodLexical}, resp.Metadata)
	require.Len(t, resp.Vectors, len(goldenTexts))
	for i, v := range resp.Vectors {
		require.Len(t, v, Dimension)
		require.InDelta(t, 1, cosine(v, v), 1e-5, "input %d is not normalised", i)
	}
}

func TestEmbedEmptyText(t *testing.T) {
	t.Parallel()
	vs := embedAll(t, "", "  \n\t", "... --- !!!")
	for _, v := range vs {
		want := make([]float32, Dimension)
		want[EmptyBucket] = 1
		require.Equal(t, want, v)
	}
}

func TestEmbedParaphraseRanksAboveUnrelated(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, paraphrase, unrelated string }{
		{
			"Supervised exercise sessions increased the confidence of heart failure patients.",
			"Heart failure patients gained confidence from supervised exercise.",
			"The compiler specialises traces of dynamic language loops.",
		},
		{
			"We fine-tune a transformer language model on scientific abstracts.",
			"A language model based on transformers is fine-tuned with abstracts of scientific papers.",
			"Participants were recruited from two rural hospitals in Ireland.",
		},
		{
			"Graph neural networks propagate node features along edges.",
			"Node features are propagated along the edges by a graph network.",
			"The survey asked librarians about their opening hours.",
		},
	}
	for _, tc := range tests {
		vs := embedAll(t, tc.text, tc.paraphrase, tc.unrelated)
		require.Greater(t, cosine(vs[0], vs[1]), cosine(vs[0], vs[2])+0.2, "%q", tc.text)
	}
}

func TestEmbedStopWordsWeighLess(t *testing.T) {
	t.Parallel()
	require.Less(t, weight("the"), weight(stem("protein")))
	require.Less(t, weight(stem("results")), weight(stem("protein")))
	// Shared function words pull two texts together far less than one shared
	// content word does.
	vs := embedAll(t,
		"the of and in with protein folding",
		"the of and in with galaxy formation",
		"protein folding",
	)
	require.Greater(t, cosine(vs[0], vs[2]), 0.9)
	require.Less(t, cosine(vs[0], vs[1]), 0.2)
}

func TestEmbedErrors(t *testing.T) {
	t.Parallel()
	e := New(nil)
	_, err := e.Embed(t.Context(), &llm.EmbedRequest{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	_, err = e.Embed(t.Context(), &llm.EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"x"}})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = e.Embed(ctx, &llm.EmbedRequest{Inputs: []string{"x"}})
	require.ErrorIs(t, err, context.Canceled)
}

func TestLn(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{1, 2, 3, 7, 10, 64, 100, 1000, 12345, 0.5, 1e-3, 1.5} {
		require.InEpsilon(t, math.Log(x)+1, ln(x)+1, 1e-14, "ln(%v)", x)
	}
	require.Equal(t, 0.0, ln(1))
}
