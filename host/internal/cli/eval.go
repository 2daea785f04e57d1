package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/evals"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/rag"
)

const evalUsage = `usage: lectern eval rag [--set written|fulltext] [--slice] [--fixtures DIR]
                        [--role answer] [--dataset FILE] [--json]
       lectern eval quotes [--dataset FILE] [--json]
       lectern eval pulse [--seed N] [--seeds N] [--days N] [--fixtures DIR]
                          [--judge builtin] [--json]

rag     ingests the set's papers into a throwaway database, asks its questions
        as POST /api/rag/ask does, and reports the figures and every miss.
        --set written (default): five short texts written for Lectern; citation
          precision, answer support, answer and abstention rates.
        --set fulltext: questions over real PDFs (the shared fixtures, read from
          --fixtures DIR, else $LECTERN_FIXTURES, else ../shared/fixtures) and
          papers of our own; evidence hit rate, page accuracy, abstention
          precision and recall, citation precision. --slice asks only the
          questions the CI test asks.
        --role answer: answers with the model this deployment assigns to the
          answer role (its configuration and database, as lectern serve uses
          them) instead of the builtin method; retrieval stays the builtin one.
quotes  checks the dataset's labelled quotes with the quote verifier and reports
        its precision and recall per category
pulse   replays a simulated user's mornings with Pulse over a corpus of the
        fixture recordings (--fixtures DIR, else $LECTERN_FIXTURES, else
        ../shared/fixtures) and generated papers, and compares Lectern's scoring
        with recency only and library similarity only: precision@10, coverage,
        diversity, classifier AUC. --seed is the first seed (default 1), --seeds
        how many are averaged (default 5), --days the mornings (default 45).
        No database and no model, unless --judge builtin adds Lectern with the
        relevance role's judgements (the builtin method, as a deployment with
        no model judges, on a throwaway host): docs/evals.md.

Without --dataset the datasets built into the binary are used (docs/evals.md).
`

// ragFlags are the flags of `lectern eval rag`.
type ragFlags struct {
	set, dataset, fixtures, role string
	slice                        bool
}

// errNoAnswerModel is --role answer in a deployment that assigns no model.
var errNoAnswerModel = errors.New("no model is assigned to the answer role in this deployment, so there is nothing to compare: assign one in Settings (as an admin), or run lectern eval rag without --role to measure the builtin method")

// runEval implements `lectern eval`.
func runEval(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "pulse" {
		return runEvalPulse(ctx, args[1:], env, stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "rag" && args[0] != "quotes") {
		fmt.Fprint(stderr, evalUsage)
		return 2
	}
	fs := newFlagSet("eval "+args[0], stderr)
	var f ragFlags
	fs.StringVar(&f.dataset, "dataset", "", "dataset file (default: the built-in one)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	if args[0] == "rag" {
		fs.StringVar(&f.set, "set", evals.SetWritten, "question set: written or fulltext")
		fs.StringVar(&f.fixtures, "fixtures", "", "the shared fixtures folder, for --set fulltext")
		fs.StringVar(&f.role, "role", "", "answer: use the model this deployment assigns to the answer role")
		fs.BoolVar(&f.slice, "slice", false, "ask only the questions of the CI slice (--set fulltext)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if msg := f.check(); msg != "" {
		fmt.Fprintf(stderr, "lectern eval rag: %s\n", msg)
		return 2
	}
	var scores fmt.Stringer
	var err error
	switch args[0] {
	case "rag":
		scores, err = evalRAG(ctx, f, env, stderr)
	case "quotes":
		scores, err = evalQuotes(f.dataset)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lectern eval %s: %s\n", args[0], oneLine(err.Error()))
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

// check returns why the flags cannot go together, or "".
func (f ragFlags) check() string {
	switch {
	case f.set != "" && f.set != evals.SetWritten && f.set != evals.SetFullText:
		return fmt.Sprintf("--set must be %s or %s, not %q", evals.SetWritten, evals.SetFullText, f.set)
	case f.role != "" && f.role != llmgw.RoleAnswer:
		return fmt.Sprintf("--role can only be %s (the role that answers questions), not %q", llmgw.RoleAnswer, f.role)
	case f.slice && f.set != evals.SetFullText:
		return "--slice is a part of the fulltext set; add --set fulltext"
	}
	return ""
}

func evalQuotes(path string) (fmt.Stringer, error) {
	ds, err := evals.LoadQuotes(path)
	if err != nil {
		return nil, err
	}
	return evals.EvaluateQuotes(ds), nil
}

// evalRAG runs a RAG set in a throwaway private PostgreSQL cluster, so the
// evaluation never touches a deployment's papers. With --role answer it first
// reads the deployment's assignment of the answer role, and answers with it.
func evalRAG(ctx context.Context, f ragFlags, env Env, stderr io.Writer) (fmt.Stringer, error) {
	run, err := ragRunner(f, env)
	if err != nil {
		return nil, err
	}
	var answerGW *llmgw.Gateway
	if f.role == llmgw.RoleAnswer {
		gw, done, err := deploymentGateway(ctx, env, stderr)
		if err != nil {
			return nil, err
		}
		defer done()
		answerGW = gw
	}
	host, pool, done, err := throwawayHost(ctx, stderr)
	if err != nil {
		return nil, err
	}
	defer done()
	svc := *host.RAG
	if answerGW != nil {
		// Retrieval and the papers stay the throwaway host's; only the model
		// that writes the answer is the deployment's.
		svc.GW = answerGW
	}
	return run(ctx, pool, &svc, host)
}

// throwawayHost starts a private PostgreSQL cluster in a temporary folder,
// migrates it and builds the builtin host on it (evals.BuiltinStack), so an
// evaluation never touches a deployment's database. done removes it all.
func throwawayHost(ctx context.Context, stderr io.Writer) (host *app.App, pool *pgxpool.Pool, done func(), err error) {
	var undo []func()
	done = func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	defer func() {
		if err != nil {
			done()
		}
	}()
	dir, err := os.MkdirTemp("", "lectern-eval-")
	if err != nil {
		return nil, nil, nil, err
	}
	undo = append(undo, func() { _ = os.RemoveAll(dir) })
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Install: true, Logger: log})
	if err != nil {
		return nil, nil, nil, err
	}
	undo = append(undo, func() { _ = cluster.Remove(context.WithoutCancel(ctx)) })
	// The same roles as the embedded default: the work runs as the
	// application's role, on a schema the superuser migrated and handed over.
	db, err := openEmbedded(ctx, cluster, embeddedDatabase)
	if err != nil {
		return nil, nil, nil, err
	}
	undo = append(undo, db.Close)
	if _, _, err := migrateDatabase(ctx, db, log); err != nil {
		return nil, nil, nil, err
	}
	host, err = evals.BuiltinStack(ctx, db.Pool, dir, log)
	if err != nil {
		return nil, nil, nil, err
	}
	undo = append(undo, host.Close)
	return host, db.Pool, done, nil
}

// ragRun runs one loaded set on a throwaway host.
type ragRun func(ctx context.Context, pool *pgxpool.Pool, svc *rag.Service, host *app.App) (fmt.Stringer, error)

// ragRunner loads the set the flags name, before any database starts, so a bad
// file or a missing fixtures folder is said at once.
func ragRunner(f ragFlags, env Env) (ragRun, error) {
	if f.set == evals.SetFullText {
		set, err := evals.LoadFullText(f.dataset)
		if err != nil {
			return nil, err
		}
		name := evals.SetFullText
		if f.slice {
			set, name = set.Slice(), evals.SetFullText+" (CI slice)"
		}
		opts := evals.FullTextOpts{Fixtures: fixturesDir(f.fixtures, env), Dataset: f.dataset, Name: name}
		if err := evals.CheckPapers(set, opts); err != nil {
			return nil, err
		}
		return func(ctx context.Context, pool *pgxpool.Pool, svc *rag.Service, host *app.App) (fmt.Stringer, error) {
			return evals.RunFullText(ctx, pool, svc, host.Ingest, set, opts)
		}, nil
	}
	set, err := evals.LoadRAG(f.dataset)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, pool *pgxpool.Pool, svc *rag.Service, host *app.App) (fmt.Stringer, error) {
		return evals.RunRAG(ctx, pool, svc, host.Ingest, set)
	}, nil
}

// fixturesDir is the shared fixtures folder: the flag, else LECTERN_FIXTURES,
// else ../shared/fixtures when it exists (a checkout beside the shared folder,
// as make and the tests expect); "" when none is found.
func fixturesDir(flag string, env Env) string {
	if flag != "" {
		return flag
	}
	if dir, ok := env("LECTERN_FIXTURES"); ok && dir != "" {
		return dir
	}
	dir := filepath.Join("..", "shared", "fixtures")
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir
	}
	return ""
}

// deploymentGateway builds the deployment's host as lectern serve would (its
// configuration, its database, the LLM plugins when the answer role needs them)
// and returns its LLM gateway, after checking that the answer role has a model.
// done closes the host and the database.
func deploymentGateway(ctx context.Context, env Env, stderr io.Writer) (gw *llmgw.Gateway, done func(), err error) {
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return nil, nil, errors.New("the configuration was refused (see above)")
	}
	log := newLogger(cfg, stderr)
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	// As lectern import does: a deployment that has not started since an
	// upgrade gets its schema first.
	if _, _, err := migrateDatabase(ctx, db, log); err != nil {
		db.Close()
		return nil, nil, err
	}
	host, err := app.Build(ctx, app.Options{Config: cfg, Pool: db.Pool, Logger: log, StartPlugins: app.AnswerPlugins})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	done = func() { host.Close(); db.Close() }
	a, err := host.GW.Assignment(ctx, llmgw.RoleAnswer)
	if err == nil && a.Provider == llmgw.Builtin {
		err = errNoAnswerModel
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return host.GW, done, nil
}
