package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/users"
)

// runImport implements `lectern import --user EMAIL <folder>`: every PDF under the
// folder is stored, added to that user's library as a private paper, and ingested
// (text, chunks with pages, citations), one after another, with a progress bar.
// The summary counts the ingested, the duplicates (a PDF the user has already) and
// the failures with their reasons; a failed PDF leaves nothing behind.
func runImport(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("import", stderr)
	email := fs.String("user", "", "the account whose library receives the papers (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *email == "" {
		fmt.Fprintln(stderr, "usage: lectern import --user EMAIL <folder>")
		return 2
	}
	folder := fs.Arg(0)
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	var files []string
	err := filepath.WalkDir(folder, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".pdf") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "lectern import: %v\n", err)
		return 1
	}
	sort.Strings(files)
	log := newLogger(cfg, io.Discard)
	db, err := openDatabase(ctx, cfg, newLogger(cfg, stderr))
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	defer db.Close()
	pool := db.Pool
	if _, _, err := migrateDatabase(ctx, db, log); err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	u, err := users.LiveByEmail(ctx, pool, *email)
	if err != nil {
		fmt.Fprintf(stderr, "lectern import: no live account %s\n", *email)
		return 1
	}
	// The same host as serve's, so the passages go to the configured vector
	// store, embedded by the embed role's model; a cloud model needs the LLM
	// plugins running.
	host, err := app.Build(ctx, app.Options{Config: cfg, Pool: pool, Logger: log, StartPlugins: app.EmbedPlugins})
	if err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	defer host.Close()

	var ingested, duplicates int
	var failed []string
	for i, path := range files {
		name := filepath.Base(path)
		progressBar(stderr, i, len(files), name)
		status, err := importOne(ctx, pool, host.PDFs, host.Ingest, u.ID, path)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %s", path, reason(err)))
		case status == "duplicate":
			duplicates++
		default:
			ingested++
		}
	}
	progressBar(stderr, len(files), len(files), "")
	fmt.Fprintln(stderr)
	fmt.Fprintf(stdout, "%d PDF(s): %d ingested, %d duplicate(s), %d failed\n", len(files), ingested, duplicates, len(failed))
	for _, f := range failed {
		fmt.Fprintf(stdout, "  failed  %s\n", f)
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// importOne stores and ingests one PDF for the user, as an upload would: a PDF the
// user already has, or whose text the shared corpus holds, adds nothing new.
func importOne(ctx context.Context, pool *pgxpool.Pool, store *ingest.Store, w *ingest.Worker, user uuid.UUID, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	k, err := store.KeepFile(ctx, pool, user, f, filepath.Base(path))
	if err != nil {
		return "", err
	}
	if k.Existing {
		return "duplicate", nil
	}
	_, err = w.Ingest(ctx, ingest.Args{PaperID: k.PaperID, SHA256: k.SHA256}, user, func(int, string) {})
	return "ingested", err
}

// reason is a failure as a person reads it.
func reason(err error) string {
	var pub *jobs.PublicError
	if errors.As(err, &pub) {
		return pub.Message
	}
	if errors.Is(err, fs.ErrPermission) {
		return "cannot be read (permission denied)"
	}
	return oneLine(err.Error())
}

// progressBar redraws one line: [#####.....] 12/40 name.
func progressBar(w io.Writer, done, total int, name string) {
	const width = 30
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	if len(name) > 40 {
		name = name[:37] + "..."
	}
	fmt.Fprintf(w, "\r[%s%s] %d/%d %-40s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, name)
}
