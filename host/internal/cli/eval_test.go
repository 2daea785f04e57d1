package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// Flags that cannot go together are refused with a sentence naming the flag,
// before anything starts.
func TestEvalRAGRefusesFlagsThatDoNotFit(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--set everything":      `--set must be written or fulltext, not "everything"`,
		"--role summarize":      `--role can only be answer (the role that answers questions), not "summarize"`,
		"--slice":               "--slice is a part of the fulltext set; add --set fulltext",
		"--set written --slice": "--slice is a part of the fulltext set",
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"eval", "rag"}, splitArgs(args)...), lookup(nil), &stdout, &stderr)
		require.Equal(t, 2, code, args)
		require.Contains(t, stderr.String(), want, args)
		require.Empty(t, stdout.String(), args)
	}
}

// The full-text set without the fixtures folder says where to point it, at once.
func TestEvalFullTextWithoutFixturesSaysHowToGiveThem(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"eval", "rag", "--set", "fulltext"}, lookup(nil), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "pass --fixtures DIR or set LECTERN_FIXTURES")

	stderr.Reset()
	code = Run(context.Background(), []string{"eval", "rag", "--set", "fulltext", "--fixtures", t.TempDir()}, lookup(nil), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "is not in the fixtures folder")
}

// --role answer in a deployment whose answer role has no model says so in a
// sentence, and runs nothing.
func TestEvalRAGRoleAnswerWithoutAModelSaysSo(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewEmptyDB(t)
	env := lookup(map[string]string{"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": t.TempDir()})
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"eval", "rag", "--role", "answer"}, env, &stdout, &stderr)
	require.Equal(t, 1, code, stderr.String())
	require.Contains(t, stderr.String(), "lectern eval rag: no model is assigned to the answer role in this deployment")
	require.Empty(t, stdout.String())
}

func splitArgs(s string) []string { return strings.Fields(s) }
