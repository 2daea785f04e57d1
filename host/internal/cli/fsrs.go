package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

const fsrsUsage = `usage: lectern fsrs <command> <log.csv> [flags]

commands:
  replay   replay a review log through the FSRS-6 scheduler and print, for each
           review, its stability, difficulty, retrievability and next interval
           (flags: --params p0,...,p20  --retention 0.9)
  fit      fit FSRS-6 parameters to a review log and print them with log loss
           and RMSE for the initial and fitted parameters
           (flags: --params p0,...,p20 to start from and compare with)

The log is CSV with a header: card_id, review_rating (1-4), review_time
(RFC 3339), review_duration (ms, optional). See docs/fsrs.md.
`

// runFSRS implements `lectern fsrs replay` and `lectern fsrs fit`, the review
// log tools of docs/fsrs.md. They read only the named file and need neither
// configuration nor a database.
func runFSRS(ctx context.Context, args []string, _ Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, fsrsUsage)
		return 2
	}
	switch args[0] {
	case "replay":
		return runFSRSReplay(ctx, args[1:], stdout, stderr)
	case "fit":
		return runFSRSFit(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, fsrsUsage)
		return 0
	}
	fmt.Fprintf(stderr, "lectern: fsrs: unknown command %q\n\n%s", args[0], fsrsUsage)
	return 2
}

// paramsFlag is a --params value: 21 comma-separated numbers.
type paramsFlag struct{ p fsrs.Params }

func (f *paramsFlag) String() string { return f.p.String() }

func (f *paramsFlag) Set(s string) error {
	p, err := fsrs.ParseParams(s)
	if err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	f.p = p
	return nil
}

// parseWithLog parses flags placed before or after the one positional
// argument, the review log path.
func parseWithLog(fs *flag.FlagSet, args []string, stderr io.Writer) (string, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", false
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "%s: want one review log file, got %d arguments\n", fs.Name(), len(pos))
		return "", false
	}
	return pos[0], true
}

func readReviewLogFile(path string) ([]fsrs.Review, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fsrs: %w", err)
	}
	defer f.Close()
	reviews, err := fsrs.ReadReviewLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reviews, nil
}

// runFSRSReplay replays the log in time order through a scheduler with
// py-fsrs's default steps and no fuzz, one card state per card id, and prints
// a tab-separated row per review: the retrievability predicted at review time
// (empty for a card's first review), then the stability, difficulty, state,
// interval and due time the review leaves.
func runFSRSReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fsrs replay", stderr)
	params := &paramsFlag{p: fsrs.DefaultParams()}
	fs.Var(params, "params", "21 comma-separated FSRS-6 parameters (default: the FSRS-6 defaults)")
	retention := fs.Float64("retention", 0.9, "desired retention, in (0, 1]")
	path, ok := parseWithLog(fs, args, stderr)
	if !ok {
		return 2
	}
	cfg := fsrs.DefaultSchedulerConfig()
	cfg.Params = params.p
	cfg.DesiredRetention = *retention
	cfg.EnableFuzz = false
	sched, err := fsrs.NewScheduler(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 2
	}
	reviews, err := readReviewLogFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	slices.SortStableFunc(reviews, func(a, b fsrs.Review) int { return a.Time.Compare(b.Time) })

	w := &errWriter{w: stdout}
	fmt.Fprintln(w, "card_id\treview_time\trating\telapsed_days\tretrievability\tstability\tdifficulty\tstate\tinterval\tdue")
	cards := map[string]fsrs.Card{}
	for i, r := range reviews {
		if i%1024 == 0 && ctx.Err() != nil {
			fmt.Fprintf(stderr, "lectern: fsrs replay: %v\n", ctx.Err())
			return 1
		}
		card, seen := cards[r.CardID]
		if !seen {
			card = fsrs.NewCard(r.Time)
		}
		card, log, err := sched.Review(card, r.Rating, r.Time)
		if err != nil {
			fmt.Fprintf(stderr, "lectern: %v\n", err)
			return 1
		}
		cards[r.CardID] = card
		rr := ""
		if seen {
			rr = strconv.FormatFloat(log.Retrievability, 'f', 4, 64)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%.4f\t%.4f\t%s\t%s\t%s\n",
			r.CardID, r.Time.UTC().Format(time.RFC3339Nano), int(r.Rating), log.ElapsedDays, rr,
			card.Stability, card.Difficulty, card.State, formatInterval(log.Interval), card.Due.UTC().Format(time.RFC3339))
	}
	if w.err != nil {
		fmt.Fprintf(stderr, "lectern: fsrs replay: %v\n", w.err)
		return 1
	}
	return 0
}

// formatInterval writes whole days as "12d" and shorter steps as a duration
// ("10m0s").
func formatInterval(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}

// runFSRSFit fits parameters and prints them with the metrics of both sets.
func runFSRSFit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fsrs fit", stderr)
	params := &paramsFlag{p: fsrs.DefaultParams()}
	fs.Var(params, "params", "21 comma-separated FSRS-6 parameters to start from and compare with (default: the FSRS-6 defaults)")
	path, ok := parseWithLog(fs, args, stderr)
	if !ok {
		return 2
	}
	reviews, err := readReviewLogFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(stderr, "lectern: fsrs fit: %v\n", err)
		return 1
	}
	fitted, rep, err := fsrs.Fit(reviews, fsrs.FitOptions{Initial: params.p})
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %v\n", err)
		return 1
	}

	w := &errWriter{w: stdout}
	fmt.Fprintf(w, "parameters: %s\n", formatParams(fitted))
	fmt.Fprintf(w, "reviews: %d (%d cards, %d predicted)\n", rep.Reviews, rep.Cards, rep.Fitted.Predictions)
	if rep.Skipped {
		fmt.Fprintf(w, "better: no (too few reviews to fit; the parameters are the initial ones)\n")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tlog loss\tRMSE (bins)\tRMSE")
		for _, row := range []struct {
			name string
			m    fsrs.Metrics
		}{{"initial", rep.Default}, {"fitted", rep.Fitted}} {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\n", row.name, row.m.LogLoss, row.m.RMSEBins, row.m.RMSE)
		}
		_ = tw.Flush()
		if rep.Better {
			fmt.Fprintf(w, "better: yes (fitted in %d steps, %v; apply with --params)\n", rep.Steps, rep.Elapsed.Round(time.Millisecond))
		} else {
			fmt.Fprintf(w, "better: no (keep the initial parameters)\n")
		}
	}
	if w.err != nil {
		fmt.Fprintf(stderr, "lectern: fsrs fit: %v\n", w.err)
		return 1
	}
	return 0
}

// formatParams writes parameters to 4 decimals, comma-separated, as --params
// reads them.
func formatParams(p fsrs.Params) string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strings.Join(parts, ",")
}

// errWriter remembers the first write error so a long table is checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
