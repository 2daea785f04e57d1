package evals

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The builtin plugin on the repository's dataset: the figures docs/benchmarks.md
// reports, held as floors so a regression fails.
func TestRAGEvalWithTheBuiltinPlugin(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	host, err := BuiltinStack(context.Background(), pool, t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(host.Close)
	set, err := LoadRAG("")
	require.NoError(t, err)
	s, err := RunRAG(context.Background(), pool, host.RAG, host.Ingest, set)
	require.NoError(t, err)
	t.Logf("%+v", *s)
	require.Equal(t, 15, s.Answerable)
	require.GreaterOrEqual(t, s.CitationPrecision, 0.9)
	require.GreaterOrEqual(t, s.SupportRate, 0.99, "an extractive answer quotes its passages verbatim")
	require.GreaterOrEqual(t, s.AnswerRate, 0.9)
	require.GreaterOrEqual(t, s.AbstentionRate, 0.75)
}
