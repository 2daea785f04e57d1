package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/lectern-research/lectern/host/internal/evals"
	"github.com/lectern-research/lectern/host/internal/llmgw"
)

// runEvalPulse implements `lectern eval pulse`: the offline evaluation of Pulse's
// scoring. It needs no database and no model, only the fixtures folder.
func runEvalPulse(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("eval pulse", stderr)
	var o evals.PulseOpts
	var fixtures string
	fs.Uint64Var(&o.Seed, "seed", 1, "the first seed")
	fs.IntVar(&o.Seeds, "seeds", 5, "how many consecutive seeds to run and average (1-50)")
	fs.IntVar(&o.Days, "days", 45, "simulated mornings with a deck (1-365)")
	fs.StringVar(&fixtures, "fixtures", "", "the shared fixtures folder (default $LECTERN_FIXTURES, else ../shared/fixtures)")
	judge := fs.String("judge", "", "builtin: add Lectern with the relevance role's builtin judgements")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "lectern eval pulse: unexpected argument %q\n", fs.Arg(0))
		return 2
	case o.Seeds < 1 || o.Seeds > 50:
		fmt.Fprintf(stderr, "lectern eval pulse: --seeds must be from 1 to 50, not %d\n", o.Seeds)
		return 2
	case o.Days < 1 || o.Days > 365:
		fmt.Fprintf(stderr, "lectern eval pulse: --days must be from 1 to 365, not %d\n", o.Days)
		return 2
	case *judge != "" && *judge != llmgw.Builtin:
		fmt.Fprintf(stderr, "lectern eval pulse: --judge can only be builtin (the method a deployment with no model judges with), not %q\n", *judge)
		return 2
	}
	o.Fixtures = fixturesDir(fixtures, env)
	if *judge != "" {
		// The relevance role runs through the product's own path (rag's
		// JudgeRelevance behind the gateway), which needs a host and its database.
		host, _, done, err := throwawayHost(ctx, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "lectern eval pulse: %s\n", oneLine(err.Error()))
			return 1
		}
		defer done()
		o.Judge = host.PulseGen.Judge
	}
	scores, err := evals.RunPulse(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "lectern eval pulse: %s\n", oneLine(err.Error()))
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(scores)
		return 0
	}
	fmt.Fprintln(stdout, scores)
	return 0
}
