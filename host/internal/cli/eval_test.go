package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/evals"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
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

// lectern eval pulse refuses flags out of range, and a missing fixtures folder is
// said with what to do, before anything runs.
func TestEvalPulseRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--seeds 0":               "--seeds must be from 1 to 50, not 0",
		"--days 400":              "--days must be from 1 to 365, not 400",
		"extra":                   `unexpected argument "extra"`,
		"--fixtures /no/such/dir": "the fixtures folder /no/such/dir was not found: pass --fixtures DIR",
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"eval", "pulse"}, splitArgs(args)...), lookup(nil), &stdout, &stderr)
		require.NotZero(t, code, args)
		require.Contains(t, stderr.String(), want, args)
		require.Empty(t, stdout.String(), args)
	}
}

// lectern eval pulse prints the table, and with --json the same figures as JSON,
// with both baselines beside Lectern.
func TestEvalPulsePrintsTheFigures(t *testing.T) {
	t.Parallel()
	fixtures := fixturetest.Dir(t)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"eval", "pulse", "--seeds", "1", "--days", "5", "--fixtures", fixtures}, lookup(nil), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	for _, want := range []string{"P@10", "lectern", "recency only", "library similarity only"} {
		require.Contains(t, stdout.String(), want)
	}

	stdout.Reset()
	code = Run(context.Background(), []string{"eval", "pulse", "--json", "--seeds", "1", "--days", "5", "--seed", "4", "--fixtures", fixtures}, lookup(nil), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	var got evals.PulseScores
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got))
	require.Equal(t, []uint64{4}, got.Seeds)
	require.Equal(t, 5, got.Days)
	require.Len(t, got.Rankers, 4)
}
