package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/lectern-research/lectern/host/internal/evals"
	"github.com/lectern-research/lectern/host/internal/pgembed"
)

const evalUsage = `usage: lectern eval rag [--dataset FILE] [--json]
       lectern eval quotes [--dataset FILE] [--json]

rag     asks the dataset's questions about its documents with the builtin
        extractive plugin, in a throwaway database, and reports citation
        precision, answer support, answer and abstention rates
quotes  checks the dataset's labelled quotes with the quote verifier and reports
        its precision and recall per category

Without --dataset the datasets built into the binary are used (docs/evals.md).
`

// runEval implements `lectern eval`.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "rag" && args[0] != "quotes") {
		fmt.Fprint(stderr, evalUsage)
		return 2
	}
	fs := newFlagSet("eval "+args[0], stderr)
	dataset := fs.String("dataset", "", "dataset file (default: the built-in one)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	var scores any
	var err error
	switch args[0] {
	case "rag":
		scores, err = evalRAG(ctx, *dataset, stderr)
	case "quotes":
		scores, err = evalQuotes(*dataset)
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

func evalQuotes(path string) (fmt.Stringer, error) {
	ds, err := evals.LoadQuotes(path)
	if err != nil {
		return nil, err
	}
	return evals.EvaluateQuotes(ds), nil
}

// evalRAG runs the RAG dataset in a throwaway private PostgreSQL cluster, so the
// evaluation never touches a deployment's data.
func evalRAG(ctx context.Context, path string, stderr io.Writer) (*evals.RAGScores, error) {
	set, err := evals.LoadRAG(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lectern-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(dir, "pg"), Install: true, Logger: log})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cluster.Remove(context.WithoutCancel(ctx)) }()
	// The same roles as the embedded default: the questions are asked as the
	// application's role, on a schema the superuser migrated and handed over.
	db, err := openEmbedded(ctx, cluster, embeddedDatabase)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	pool := db.Pool
	if _, _, err := migrateDatabase(ctx, db, log); err != nil {
		return nil, err
	}
	host, err := evals.BuiltinStack(ctx, pool, dir, log)
	if err != nil {
		return nil, err
	}
	defer host.Close()
	return evals.RunRAG(ctx, pool, host.RAG, host.Ingest, set)
}
