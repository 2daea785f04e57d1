package benchhttp

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The load test's actions are out of 100, as the tables print them, and each
// comes up about as often as its weight says.
func TestUserActionsWeighOutOf100(t *testing.T) {
	t.Parallel()
	total := 0
	for _, a := range userActions {
		total += a.Weight
	}
	require.Equal(t, 100, total)
	rng := rand.New(rand.NewPCG(5, 6))
	seen := map[string]int{}
	for range 10_000 {
		seen[pickAction(userActions, total, rng).Name]++
	}
	for _, a := range userActions {
		require.InDelta(t, a.Weight*100, seen[a.Name], 200, a.Name)
	}
}

// A generated upload is a PDF that pdftotext (the host's extractor) reads back,
// title and text, and two uploads with different text are different files.
func TestSmallPDFIsReadByPdftotext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pdf := smallPDF("Load test paper abc 1 2", []string{"wabc12 wbcd345 (dropped) words", "second line"})
	path := filepath.Join(dir, "p.pdf")
	require.NoError(t, os.WriteFile(path, pdf, 0o644))
	out, err := exec.CommandContext(context.Background(), "pdftotext", "-enc", "UTF-8", path, "-").CombinedOutput()
	require.NoError(t, err, string(out))
	text := string(out)
	require.Contains(t, text, "Load test paper abc 1 2")
	require.Contains(t, text, "wabc12 wbcd345 dropped words")
	require.Contains(t, text, "second line")
	require.False(t, bytes.Equal(pdf, smallPDF("Load test paper abc 1 3", nil)))
}

// A write's own request counts as a write; the due queue a review fetched first
// counts as a read; a 5xx is counted under its route.
func TestRecorderSortsReadsFromWrites(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	review := userActions[1]
	require.Equal(t, "review", review.Name)
	r.add(review, sent{"due cards", vegeta.Result{Code: 200, Latency: time.Millisecond}})
	r.add(review, sent{"review", vegeta.Result{Code: 200, Latency: 2 * time.Millisecond}})
	r.add(userActions[0], sent{"due cards", vegeta.Result{Code: 503, Latency: time.Millisecond, Error: "busy"}})
	r.close()
	require.EqualValues(t, 2, r.reads.Requests)
	require.EqualValues(t, 1, r.writes.Requests)
	require.EqualValues(t, 3, r.all.Requests)
	lv := &LoadLevel{Users: 1, Duration: time.Second, rec: r}
	require.Equal(t, 1, lv.Failed5xx())
	var out strings.Builder
	lv.print(&out)
	require.Contains(t, out.String(), "| due cards | read | 20 | 2 |")
	require.Contains(t, out.String(), `due cards 503, e.g. "busy"`)
	require.Contains(t, out.String(), "zero 5xx NOT MET")
}

// A write acknowledged and not found counts as lost, whichever kind it is.
func TestWriteCheckCountsLostWrites(t *testing.T) {
	t.Parallel()
	require.Zero(t, WriteCheck{Reviews: 3, ReviewsStored: 3, Ratings: 2, RatingsStored: 2, Uploads: 1, UploadsRead: 1}.Lost())
	require.Equal(t, 2, WriteCheck{Reviews: 3, ReviewsStored: 2, Ratings: 2, RatingsStored: 2, Uploads: 1}.Lost())
}

// The knee is the first level whose overall p95 is twice the lowest level's.
func TestKneeIsWhereP95Doubles(t *testing.T) {
	t.Parallel()
	level := func(users int, p95 time.Duration) *LoadLevel {
		r := newRecorder()
		// Twenty answers at p95's latency: every percentile is p95.
		for range 20 {
			r.add(userActions[0], sent{"due cards", vegeta.Result{Code: 200, Latency: p95}})
		}
		r.close()
		return &LoadLevel{Users: users, Duration: time.Second, rec: r}
	}
	var out strings.Builder
	printKnee(&out, []*LoadLevel{level(50, 40*time.Millisecond), level(100, 70*time.Millisecond), level(200, 90*time.Millisecond), level(400, 300*time.Millisecond)})
	require.Contains(t, out.String(), "knee: 200 users")
	out.Reset()
	printKnee(&out, []*LoadLevel{level(50, 40*time.Millisecond), level(100, 50*time.Millisecond)})
	require.Contains(t, out.String(), "knee: not reached")
}

func TestParseLoadFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"--mix", "load", "--users", "50, 100,200"}, &strings.Builder{})
	require.NoError(t, err)
	require.Equal(t, []int{50, 100, 200}, o.users)
	require.Equal(t, time.Second, o.thinkMin)
	_, err = parseFlags([]string{"--mix", "writes"}, &strings.Builder{})
	require.Error(t, err)
	_, err = parseFlags([]string{"--think-min", "3s", "--think-max", "2s"}, &strings.Builder{})
	require.Error(t, err)
}

// The header names the machine from /proc, as the figures need.
func TestMachineFromProc(t *testing.T) {
	t.Parallel()
	require.Regexp(t, `^\d+ GiB$`, memTotal())
	require.Equal(t, "unknown", procField("/proc/meminfo", "No such field"))
}
