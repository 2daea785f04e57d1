package evals

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEvaluate scores the verifier on the repository's labelled quotes.
func TestQuoteVerifierEval(t *testing.T) {
	t.Parallel()
	ds, err := LoadQuotes("")
	require.NoError(t, err)
	sc := EvaluateQuotes(ds)
	t.Logf("\n%s", sc)
	require.GreaterOrEqual(t, sc.Precision, 0.99, "precision\n%s", sc)
	require.GreaterOrEqual(t, sc.Recall, 0.95, "recall\n%s", sc)
}
