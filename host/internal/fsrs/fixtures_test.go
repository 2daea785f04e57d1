package fsrs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/fsrs"
)

// fixtureDir returns the third-party FSRS fixture folder (package fixturetest
// finds it, or skips the test naming it).
func fixtureDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(fixturetest.Dir(t), "fsrs")
}

type vectorFile struct {
	DefaultParameters []float64         `json:"default_parameters"`
	Vectors           []json.RawMessage `json:"vectors"`
}

type vectorHead struct {
	ID string `json:"id"`
}

// loadVectors reads the reference vectors, keyed by id.
func loadVectors(t *testing.T) (fsrs.Params, map[string]json.RawMessage) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), "fsrs_reference_vectors.json"))
	require.NoError(t, err)
	var f vectorFile
	require.NoError(t, json.Unmarshal(b, &f))
	require.Len(t, f.DefaultParameters, fsrs.NumParams)
	var p fsrs.Params
	copy(p[:], f.DefaultParameters)
	out := map[string]json.RawMessage{}
	for _, raw := range f.Vectors {
		var h vectorHead
		require.NoError(t, json.Unmarshal(raw, &h))
		out[h.ID] = raw
	}
	return p, out
}

// reviewLogPath is the shared py-fsrs review log.
func reviewLogPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(fixtureDir(t), "py-fsrs_review_logs_josh_1711744352250_to_1728234780857.csv")
}

func loadReviewLog(t testing.TB) []fsrs.Review {
	t.Helper()
	f, err := os.Open(reviewLogPath(t))
	require.NoError(t, err)
	defer f.Close()
	reviews, err := fsrs.ReadReviewLog(f)
	require.NoError(t, err)
	return reviews
}
