package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/fsrs"
)

// fsrsFixtureLog is the shared py-fsrs review log (package fixturetest finds the
// folder, or skips the test naming it).
func fsrsFixtureLog(t *testing.T) string {
	t.Helper()
	return filepath.Join(fixturetest.Dir(t), "fsrs", "py-fsrs_review_logs_josh_1711744352250_to_1728234780857.csv")
}

func runFSRSCapture(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runFSRS(t.Context(), args, func(string) (string, bool) { return "", false }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// replayRows splits replay output into rows of fields, header first.
func replayRows(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(out) {
		rows = append(rows, strings.Split(strings.TrimSuffix(line, "\n"), "\t"))
	}
	return rows
}

const smallLog = "testdata/fsrs_small.csv"

func dayDuration(days int) time.Duration { return time.Duration(days) * 24 * time.Hour }

func TestFSRSReplay(t *testing.T) {
	t.Parallel()
	p := fsrs.DefaultParams()
	bigEasy := fsrs.DefaultParams()
	bigEasy[3] = 20
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, rows [][]string)
	}{
		{
			name: "defaults",
			args: []string{"replay", smallLog},
			check: func(t *testing.T, rows [][]string) {
				require.Equal(t, []string{"card_id", "review_time", "rating", "elapsed_days", "retrievability", "stability", "difficulty", "state", "interval", "due"}, rows[0])
				require.Len(t, rows, 10)
				// First review of a: Good gives S0 = w2 and D0(Good), first
				// learning step.
				require.Equal(t, []string{"a", "2024-05-01T09:00:00Z", "3", "0", "", "2.3065", "2.1181", "Learning", "10m0s", "2024-05-01T09:10:00Z"}, rows[1])
				// Good on the last step graduates after the same-day formula.
				require.Equal(t, []string{"a", "2024-05-01T09:10:00Z", "3", "0", "1.0000", "2.3065", "2.1112", "Review", "2d", "2024-05-03T09:10:00Z"}, rows[3])
				// Rows run in time order: c (10:05+02:00) before a (09:00Z).
				require.Equal(t, []string{"c", "2024-05-03T08:05:00Z", "4", "0", "", "8.2956", "1.0000", "Review", "8d", "2024-05-11T08:05:00Z"}, rows[6])
				require.Equal(t, "a", rows[7][0])
				// A lapse of a Review card relearns.
				require.Equal(t, []string{"b", "Relearning", "10m0s"}, []string{rows[8][0], rows[8][7], rows[8][8]})
			},
		},
		{
			name: "retention after the file",
			args: []string{"replay", smallLog, "--retention", "0.8"},
			check: func(t *testing.T, rows [][]string) {
				require.Equal(t, formatInterval(dayDuration(p.NextInterval(p[3], 0.8, 36500))), rows[6][8])
				require.NotEqual(t, "8d", rows[6][8])
			},
		},
		{
			name: "explicit default params give the default replay",
			args: []string{"replay", "--params", p.String(), smallLog},
			check: func(t *testing.T, rows [][]string) {
				code, out, _ := runFSRSCapture(t, "replay", smallLog)
				require.Equal(t, 0, code)
				require.Equal(t, replayRows(out), rows)
			},
		},
		{
			name: "params change the model",
			args: []string{"replay", smallLog, "--params", bigEasy.String()},
			check: func(t *testing.T, rows [][]string) {
				require.Equal(t, "20.0000", rows[6][5])
				require.Equal(t, "20d", rows[6][8])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runFSRSCapture(t, tt.args...)
			require.Equal(t, 0, code, errOut)
			require.Empty(t, errOut)
			tt.check(t, replayRows(out))
		})
	}
}

func TestFSRSCommandErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no command", nil, 2, "usage: lectern fsrs"},
		{"unknown command", []string{"tune"}, 2, `unknown command "tune"`},
		{"replay without a file", []string{"replay"}, 2, "want one review log file, got 0"},
		{"two files", []string{"fit", smallLog, smallLog}, 2, "got 2"},
		{"short params", []string{"replay", smallLog, "--params", "1,2,3"}, 2, "want 21"},
		{"params out of bounds", []string{"replay", smallLog, "--params", strings.Replace(fsrs.DefaultParams().String(), "0.1542", "0.95", 1)}, 2, "w20"},
		{"retention above one", []string{"replay", smallLog, "--retention", "1.5"}, 2, "desired retention"},
		{"unknown flag", []string{"fit", smallLog, "--epochs", "3"}, 2, "flag provided but not defined"},
		{"missing file", []string{"replay", "testdata/no-such-log.csv"}, 1, "no-such-log.csv"},
		{"bad line in replay", []string{"replay", "testdata/fsrs_bad_rating.csv"}, 1, `line 3: rating "6"`},
		{"bad line in fit", []string{"fit", "testdata/fsrs_bad_rating.csv"}, 1, `line 3: rating "6"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runFSRSCapture(t, tt.args...)
			require.Equal(t, tt.wantCode, code)
			require.Contains(t, errOut, tt.wantStderr)
		})
	}
}

func TestFSRSHelp(t *testing.T) {
	t.Parallel()
	code, out, _ := runFSRSCapture(t, "help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "replay")
	require.Contains(t, out, "fit")
}

// fitParams returns the parameters line of fit's output, checked.
func fitParams(t *testing.T, out string) fsrs.Params {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	s, ok := strings.CutPrefix(line, "parameters: ")
	require.True(t, ok, out)
	p, err := fsrs.ParseParams(s)
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	return p
}

func TestFSRSFitSmallLog(t *testing.T) {
	t.Parallel()
	code, out, errOut := runFSRSCapture(t, "fit", smallLog)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, fsrs.DefaultParams(), fitParams(t, out))
	require.Contains(t, out, "reviews: 9 (3 cards, 3 predicted)")
	require.Contains(t, out, "better: no (too few reviews")
}

// TestFSRSFitFixture fits the shared review log, then replays it with the
// printed parameters.
func TestFSRSFitFixture(t *testing.T) {
	t.Parallel()
	log := fsrsFixtureLog(t)
	code, out, errOut := runFSRSCapture(t, "fit", log)
	require.Equal(t, 0, code, errOut)
	p := fitParams(t, out)
	require.NotEqual(t, fsrs.DefaultParams(), p)
	require.Contains(t, out, "reviews: 12580 (1205 cards, 5329 predicted)")
	require.Contains(t, out, "log loss")
	require.Contains(t, out, "RMSE (bins)")
	require.Contains(t, out, "better: yes")

	code, out, errOut = runFSRSCapture(t, "replay", log, "--params", p.String())
	require.Equal(t, 0, code, errOut)
	require.Len(t, replayRows(out), 12581)
}
