package backup

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// points makes n points one day apart, newest first, the newest at now.
func dailyPoints(now time.Time, n int) []Point {
	out := make([]Point, n)
	for i := range out {
		t := now.Add(-time.Duration(i) * 24 * time.Hour)
		out[i] = Point{Name: t.Format(timestampLayout), Time: t}
	}
	return out
}

func TestPruneCandidates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	name := func(daysAgo int) string {
		return now.Add(-time.Duration(daysAgo) * 24 * time.Hour).Format(timestampLayout)
	}
	cases := []struct {
		name      string
		points    int
		keepLast  int
		maxAge    time.Duration
		protected string
		want      []string
	}{
		{name: "no rule prunes nothing", points: 10, want: nil},
		{name: "one point is never pruned", points: 1, keepLast: 0, maxAge: time.Hour, want: nil},
		{name: "keep last 3 of 4 prunes the oldest", points: 4, keepLast: 3, want: []string{name(3)}},
		{name: "at most half in one run, oldest first", points: 10, keepLast: 1, want: []string{name(9), name(8), name(7), name(6), name(5)}},
		{name: "either rule keeps a point", points: 6, keepLast: 2, maxAge: 4*24*time.Hour + time.Minute, want: []string{name(5)}},
		{name: "age alone, the newest survives however old", points: 2, maxAge: time.Nanosecond, want: []string{name(1)}},
		{name: "the safety backup of the last restore is kept", points: 4, keepLast: 1, protected: name(3), want: []string{name(2), name(1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := pruneCandidates(dailyPoints(now, tc.points), tc.keepLast, tc.maxAge, now, tc.protected)
			require.Equal(t, tc.want, got)
		})
	}
	// Whatever the rules, the newest point is never a candidate.
	for _, pts := range []int{2, 3, 7, 20} {
		got := pruneCandidates(dailyPoints(now, pts), 0, time.Nanosecond, now.Add(1000*time.Hour), "")
		require.NotContains(t, got, name(0))
		require.LessOrEqual(t, len(got), pts/2)
	}
}

// TestPruneDeletesFolders runs the rules on real folders: the old points go,
// hidden and foreign folders stay.
func TestPruneDeletesFolders(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	var names []string
	for _, p := range dailyPoints(now, 6) {
		require.NoError(t, os.Mkdir(filepath.Join(dir, p.Name), 0o700))
		names = append(names, p.Name)
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".partial_x"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "notes"), 0o700))
	svc := &Service{cfg: Config{Dir: dir, SigningKey: testKey, KeepLast: 2, MaxAge: 0, Now: func() time.Time { return now }}, log: discard()}
	deleted, err := svc.Prune()
	require.NoError(t, err)
	require.Equal(t, []string{names[5], names[4], names[3]}, deleted)
	for _, n := range append(names[:3], ".partial_x", "notes") {
		require.DirExists(t, filepath.Join(dir, n))
	}
	deleted, err = svc.Prune()
	require.NoError(t, err)
	require.Equal(t, []string{names[2]}, deleted, "the next run goes on, still at most half")
}
