package embed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func cos(a, b []float32) float32 {
	var d float32
	for i := range a {
		d += a[i] * b[i]
	}
	return d
}

func TestLexicalRanksSharedVocabularyFirst(t *testing.T) {
	v, err := Lexical{}.Embed(context.Background(), []string{
		"Scaled dot-product attention lets transformers relate every token to every other token.",
		"The transformer's attention layers relate tokens to each other.",
		"Spaced repetition schedules reviews just before a memory is forgotten.",
		"",
	})
	require.NoError(t, err)
	require.Len(t, v, 4)
	for _, x := range v {
		require.Len(t, x, LexicalDimension)
	}
	require.InDelta(t, 1.0, cos(v[0], v[0]), 1e-5, "vectors are normalised")
	require.Greater(t, cos(v[0], v[1]), cos(v[0], v[2])+0.2, "shared words bring passages together")
	require.Zero(t, cos(v[3], v[3]), "an empty text is the zero vector")
}

func TestWords(t *testing.T) {
	require.Equal(t, []string{"transformer", "transformer", "attention", "class"},
		Words("The Transformers' transformer's attention, of class"))
}
